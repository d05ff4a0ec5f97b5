import {
  ActivityCancellationType,
  type ActivityOptions,
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { inheritedFairness, Priority, priority } from '../priority';
import {
  completeUploadUpdate,
  deleteVideoSignal,
  ErrorCodes,
  ladderProgressSignal,
  renditionProgressSignal,
  retryUpdate,
  type UploadObservation,
  type VideoState,
  type VideoStatus,
  VideoStatusKey,
  videoStateQuery,
  type VideoWorkflowInput,
} from './defs';
import { placedActivities } from './lanes';
import type { PipelineContext } from './pipeline/context';
import { ladderPipeline } from './pipeline/ladder';
import { legacyPipeline } from './pipeline/legacy';
import { groupKey } from './pipeline/progress';

const MEDIA_ERRORS = [ErrorCodes.invalidMedia, ErrorCodes.noVideoStream, ErrorCodes.mediaTooLarge, ErrorCodes.importFailed];

/**
 * Versioning markers (docs/transcoding.md). Histories recorded without them replay the code they
 * ran; remove a branch only once no open workflow can have taken it.
 */
export const Patches = {
  /** After processing ends, continue-as-new into an idle run that carries the state. */
  idleContinueAsNew: 'idle-continue-as-new',
  /** Passthrough first, rungs of a chunk from one decode, chunks across workers (pipeline/ladder.ts). */
  transcodeV2: 'transcode-v2',
  /** Issue 28: the source as the top rung when it fits, measured quality per rendition (pipeline/ladder.ts). */
  encodingV1: 'encoding-v1',
  /** The upload is promoted on the orchestration queue: video.uploaded never waits behind encodes. */
  promoteOnOrchestrator: 'promote-on-orchestrator',
} as const;

/**
 * One workflow per video, from creation to deletion (SPEC §5, §11), as an entity workflow:
 *   wait for the upload (or import) → process (workflows/video/pipeline/*) → idle.
 * Once processing ends (ready or failed) the run continues-as-new with its state, so an idle
 * video's history is a few events and never replays pipeline code. The idle loop is where later
 * requests land: retry and delete today, further jobs (MP4, captions, clips) next to them.
 */
export async function videoWorkflow(input: VideoWorkflowInput): Promise<void> {
  const { videoId, workspaceId, storageKey, source } = input;
  const tuning = input.tuning ?? {};
  // SPEC §25 (docs/fairness.md): every activity queues under the workspace, with the weight its
  // plan had when the video's workflow was started; each at the priority of what it is for.
  const fair = inheritedFairness(workflowInfo().priority, workspaceId);
  const lanes = { transcodeQueue: input.transcodeQueue, criticalQueue: input.criticalQueue, fair, ready: () => state.status === 'ready' };
  // Short reads and writes of rows and events, on the orchestrating worker. The timeout is also
  // how long an attempt whose worker died (SIGKILL, OOM) holds the video up before it is tried
  // again, so it is a few times what a slow query takes, not minutes. Retried without limit.
  const acts = proxyActivities<Activities>({
    startToCloseTimeout: '20 seconds',
    retry: { initialInterval: '1s', maximumInterval: '1 minute', nonRetryableErrorTypes: MEDIA_ERRORS },
    priority: priority(Priority.critical, fair),
  });
  // Placed by workflows/video/lanes.ts: the short steps to `ready` on the critical lane, encodes
  // on the transcode queue, critical before `ready` and bulk after.
  const io = placedActivities({
    startToCloseTimeout: '6 hours',
    heartbeatTimeout: tuning.heartbeatTimeoutMs ?? 30_000,
    retry: { initialInterval: '2s', maximumInterval: '1 minute', maximumAttempts: 6, nonRetryableErrorTypes: MEDIA_ERRORS },
    // A cancelled transcode or import settles only once it has stopped (ffmpeg killed, upload
    // aborted), so a deletion cannot remove the files while it still writes them.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  }, lanes);
  // Removing a deleted video's files must succeed eventually, however long storage is down: no attempt limit.
  const cleanup = placedActivities({
    startToCloseTimeout: '10 minutes',
    retry: { initialInterval: '2s', maximumInterval: '5 minutes' },
  }, lanes);

  // Moving an upload to its original key: a server-side copy of up to 50 GiB, so heartbeats.
  // Histories from before promoteOnOrchestrator ran it on the transcode queue, where it waited for
  // a free encode slot, and video.uploaded with it; it is storage I/O only (a rename or an S3
  // copy), so it now runs on this workflow's own queue.
  const promoteOptions: ActivityOptions = {
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: '2 minutes',
    retry: { initialInterval: '2s', maximumInterval: '1 minute', maximumAttempts: 10, nonRetryableErrorTypes: [ErrorCodes.uploadMissing] },
    priority: priority(Priority.critical, fair),
  };
  const promoteBehindEncodes = proxyActivities<Activities>({ taskQueue: input.transcodeQueue, ...promoteOptions });
  const promoteHere = proxyActivities<Activities>(promoteOptions);

  const state: VideoState = input.resume
    ? { ...input.resume, renditions: input.resume.renditions.map((r) => ({ ...r })) }
    : { status: source.kind === 'upload' ? 'pending_upload' : 'processing', progress: 0, renditions: [], deleting: false };
  let uploaded = false;
  // Where the accepted upload was found (a staging key), when it is not the original key already.
  let uploadedFrom: string | undefined;
  let retryRequested = false;
  let deleteRequested = false;
  let pipeline: CancellationScope | undefined;
  let thumbnailSettled: Promise<unknown> = Promise.resolve();

  const validateObservation = (obs: UploadObservation, declared: number | null) => {
    if (obs.objectSize === null) {
      throw ApplicationFailure.create({ type: ErrorCodes.uploadMissing, message: 'No object was uploaded to the upload URL', nonRetryable: true });
    }
    if (declared !== null && obs.objectSize !== declared) {
      throw ApplicationFailure.create({
        type: ErrorCodes.uploadSizeMismatch,
        message: `The uploaded object is ${obs.objectSize} bytes; ${declared} were declared`,
        nonRetryable: true,
      });
    }
  };

  setHandler(videoStateQuery, () => state);
  setHandler(deleteVideoSignal, () => {
    deleteRequested = true;
    state.deleting = true;
    pipeline?.cancel();
  });
  setHandler(renditionProgressSignal, ({ name, progress }) => {
    const r = state.renditions.find((x) => x.name === name);
    if (r && r.status === 'processing') r.progress = Math.max(r.progress, Math.min(99, Math.round(progress)));
    updateProgress();
  });
  // Issue 47: chunk progress of a ladder group, weighed by the pipeline that runs the group.
  const ladderProgress = new Map<string, (chunk: number, pct: number) => void>();
  setHandler(ladderProgressSignal, ({ rungs, chunk, progress }) => {
    ladderProgress.get(groupKey(rungs))?.(chunk, progress);
  });
  setHandler(
    completeUploadUpdate,
    (obs) => {
      const first = state.status === 'pending_upload' && !uploaded;
      if (first) {
        uploaded = true;
        uploadedFrom = obs.sourceKey;
      }
      // The main loop writes `processing` a moment later; answer with what the caller caused.
      return { status: state.status === 'pending_upload' ? 'processing' : state.status, first };
    },
    {
      validator: (obs) => {
        if (state.deleting) throw ApplicationFailure.create({ type: ErrorCodes.invalidState, message: 'The video is being deleted' });
        // Already uploaded: accepted as a no-op, so complete/confirm are idempotent.
        if (state.status !== 'pending_upload' || uploaded) return;
        validateObservation(obs, source.kind === 'upload' ? source.declaredSize : null);
      },
    },
  );
  setHandler(
    retryUpdate,
    () => {
      retryRequested = true;
      // Accepted: reads say `processing` at once (only ready and failed wait for the row).
      state.status = 'processing';
      state.errorCode = undefined;
      state.errorMessage = undefined;
      return state;
    },
    {
      validator: (obs) => {
        if (state.status !== 'failed' || state.deleting || retryRequested) {
          throw ApplicationFailure.create({ type: ErrorCodes.invalidState, message: `Only failed videos can be retried (status: ${state.status})` });
        }
        // A URL import may be retried from scratch; an upload needs its original.
        if (source.kind === 'upload' || obs.objectSize !== null) validateObservation(obs, null);
      },
    },
  );

  function updateProgress(): void {
    const rs = state.renditions;
    if (rs.length === 0) return;
    state.progress = Math.round(rs.reduce((sum, r) => sum + (r.status === 'ready' ? 100 : r.progress), 0) / rs.length);
  }

  async function setStatus(status: VideoStatus, extra: { errorCode?: string; errorMessage?: string } = {}): Promise<void> {
    upsertSearchAttributes([{ key: VideoStatusKey, value: status }]);
    await acts.recordState({
      videoId,
      status,
      progress: state.progress,
      errorCode: extra.errorCode ?? null,
      errorMessage: extra.errorMessage ?? null,
      markReady: status === 'ready',
    });
    // The query never says ready or failed ahead of Postgres: when a read says `ready`,
    // /playback and the CDN, which read the row, agree.
    state.status = status;
    state.errorCode = extra.errorCode;
    state.errorMessage = extra.errorMessage;
  }

  async function emit(type: string, error?: { code: string; message: string }): Promise<void> {
    // uuid4() is seeded by the workflow, so the event id is stable across replays and retries.
    await acts.emitEvent({ eventId: `evt_${uuid4().replace(/-/g, '')}`, videoId, workspaceId, type, error });
  }

  async function fail(code: string, message: string): Promise<void> {
    await setStatus('failed', { errorCode: code, errorMessage: message });
    await emit('video.failed', { code, message });
  }

  const ctx: PipelineContext = {
    input,
    state,
    acts,
    io,
    setStatus: (status) => setStatus(status),
    emit: (type) => emit(type),
    updateProgress,
    onLadderProgress: (rungs, fn) => {
      if (fn) ladderProgress.set(groupKey(rungs), fn);
      else ladderProgress.delete(groupKey(rungs));
    },
    track: (job) => {
      thumbnailSettled = job;
    },
  };

  // Which pipeline a processing run takes is decided when it starts, and kept in its history.
  const transcodeAll = () => (patched(Patches.transcodeV2) ? ladderPipeline(ctx) : legacyPipeline(ctx));

  async function promoteOriginal(sourceKey: string): Promise<void> {
    try {
      const promote = patched(Patches.promoteOnOrchestrator) ? promoteHere : promoteBehindEncodes;
      await promote.promoteUpload({ workspaceId, videoId, sourceKey, storageKey, contentType: source.kind === 'upload' ? source.contentType : undefined });
    } catch (err) {
      const cause = err instanceof ActivityFailure ? err.cause : err;
      const missing = cause instanceof ApplicationFailure && cause.type === ErrorCodes.uploadMissing;
      await fail(missing ? ErrorCodes.uploadMissing : ErrorCodes.processingFailed, `The upload could not be stored: ${cause instanceof Error ? cause.message : String(cause)}`);
    }
  }

  async function process(): Promise<void> {
    pipeline = new CancellationScope();
    try {
      await pipeline.run(transcodeAll);
    } catch (err) {
      // Once a delete is requested any failure is moot (a cancelled activity may also end in a
      // timeout); wait for the thumbnail too, so no activity writes files after they are removed.
      if (deleteRequested) {
        await thumbnailSettled;
        return;
      }
      const cause = err instanceof ActivityFailure ? err.cause : err;
      if (cause instanceof ApplicationFailure && cause.type && (MEDIA_ERRORS as string[]).includes(cause.type)) {
        await fail(cause.type, cause.message);
      } else {
        await fail(ErrorCodes.processingFailed, `Processing failed: ${cause instanceof Error ? cause.message : String(cause)}`);
      }
    } finally {
      pipeline = undefined;
    }
  }

  /** Processing has ended in this run: start a fresh, idle run with the state (docs/transcoding.md). */
  async function idle(): Promise<never> {
    await condition(allHandlersFinished);
    return continueAsNew<typeof videoWorkflow>({ ...input, resume: { ...state, deleting: false } });
  }

  let processedHere = false;
  if (!input.resume) {
    upsertSearchAttributes([{ key: VideoStatusKey, value: state.status }]);
    if (source.kind === 'upload') {
      const arrived = await condition(() => uploaded || deleteRequested, source.uploadTimeoutMs);
      if (!deleteRequested) {
        if (arrived) {
          // Status first: it closes the upload URL (the local driver and tus refuse a PUT/PATCH
          // once the video is no longer pending_upload) before the staging object is moved.
          // Only updates from the uploads room on carry a staging key: older histories promote nothing.
          await setStatus('processing');
          if (uploadedFrom) await promoteOriginal(uploadedFrom);
          if (state.status === 'processing') await emit('video.uploaded');
          // A failed promotion ends processing in this run, like any failure.
          else processedHere = true;
        } else {
          // Anything a URL wrote without completing goes: an expired upload leaves nothing behind.
          if (patched('uploads-sweep-expired')) await cleanup.sweepUploads({ workspaceId, videoId });
          await fail(ErrorCodes.uploadExpired, 'No upload was completed before the upload URL expired');
          processedHere = true;
        }
      }
    }
  }

  while (!deleteRequested) {
    if (state.status === 'processing') {
      await process();
      processedHere = true;
    }
    // A retry accepted while this run was failing (between the status write and the event) is
    // taken here, by this run's own loop: continuing-as-new would carry `processing` without
    // writing it to Postgres. No recorded history has such a retry, so none replays differently.
    if (processedHere && !deleteRequested && !retryRequested && patched(Patches.idleContinueAsNew)) await idle();
    // Idle: every later request to this video lands here.
    await condition(() => deleteRequested || retryRequested);
    if (retryRequested && !deleteRequested) {
      retryRequested = false;
      state.renditions = [];
      await setStatus('processing');
    }
  }

  // Deletion must finish even though the request to delete is itself a cancellation of sorts.
  await CancellationScope.nonCancellable(async () => {
    upsertSearchAttributes([{ key: VideoStatusKey, value: 'deleting' }]);
    await cleanup.deleteVideoFiles({ workspaceId, videoId });
    await emit('video.deleted');
    await acts.purgeVideo({ videoId });
    // A presigned S3 URL cannot be revoked: bytes PUT to it after the deletion land in the
    // staging prefix, so sweep it once more when the URL has died (SPEC §12). The idle runs
    // carry the same input, so this holds whichever run the delete reaches.
    if (source.kind === 'upload' && source.uploadUrlExpiresAt !== undefined) {
      const wait = source.uploadUrlExpiresAt + 5_000 - Date.now();
      if (wait > 0) await sleep(wait);
      await cleanup.sweepUploads({ workspaceId, videoId });
    }
  });
}
