import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  uuid4,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { planLadder, type Rung } from '../lib/media/ladder';
import {
  completeUploadUpdate,
  deleteVideoSignal,
  ErrorCodes,
  renditionProgressSignal,
  retryUpdate,
  type UploadObservation,
  type VideoState,
  type VideoStatus,
  VideoStatusKey,
  videoStateQuery,
  type VideoWorkflowInput,
} from './defs';

const MEDIA_ERRORS = [ErrorCodes.invalidMedia, ErrorCodes.noVideoStream, ErrorCodes.importFailed];

/**
 * One workflow per video, from creation to deletion (SPEC §5, §11): wait for the upload (or
 * import from a URL), probe, thumbnail, renditions lowest first with the master playlist
 * republished after each, then wait for a retry or a delete for as long as the video exists.
 */
export async function videoWorkflow(input: VideoWorkflowInput): Promise<void> {
  const { videoId, workspaceId, storageKey, source } = input;
  const tuning = input.tuning ?? {};
  const acts = proxyActivities<Activities>({
    startToCloseTimeout: '2 minutes',
    retry: { initialInterval: '1s', maximumInterval: '1 minute', nonRetryableErrorTypes: MEDIA_ERRORS },
  });
  const io = proxyActivities<Activities>({
    taskQueue: input.transcodeQueue,
    startToCloseTimeout: '6 hours',
    heartbeatTimeout: tuning.heartbeatTimeoutMs ?? 30_000,
    retry: { initialInterval: '2s', maximumInterval: '1 minute', maximumAttempts: 6, nonRetryableErrorTypes: MEDIA_ERRORS },
    // A cancelled transcode or import settles only once it has stopped (ffmpeg killed, upload
    // aborted), so a deletion cannot remove the files while it still writes them.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
  // Removing a deleted video's files must succeed eventually, however long storage is down: no attempt limit.
  const cleanup = proxyActivities<Activities>({
    taskQueue: input.transcodeQueue,
    startToCloseTimeout: '10 minutes',
    retry: { initialInterval: '2s', maximumInterval: '5 minutes' },
  });

  const state: VideoState = {
    status: source.kind === 'upload' ? 'pending_upload' : 'processing',
    progress: 0,
    renditions: [],
    deleting: false,
  };
  let uploaded = false;
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
  setHandler(
    completeUploadUpdate,
    () => {
      const first = state.status === 'pending_upload' && !uploaded;
      if (first) uploaded = true;
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

  async function transcodeAll(): Promise<void> {
    if (source.kind === 'url' && !(await acts.originalExists({ storageKey }))) {
      await io.importFromUrl({ videoId, workspaceId, storageKey, url: source.url });
    }
    const info = await io.probeSource({ storageKey });
    const rungs = planLadder({ width: info.width, height: info.height, rotation: info.rotation });
    state.renditions = rungs.map((r) => ({ name: r.name, width: r.width, height: r.height, bitrate: r.videoBitrate, status: 'queued', progress: 0 }));
    state.progress = 0;
    await acts.recordMetadata({
      videoId,
      durationSeconds: info.durationSeconds,
      width: info.width,
      height: info.height,
      sizeBytes: info.sizeBytes,
      renditions: state.renditions,
    });
    const thumbnail = io.makeThumbnail({ workspaceId, videoId, storageKey, durationSeconds: info.durationSeconds });
    // Handled at once: if a rendition fails or is cancelled first, an unobserved rejection would fail the workflow task.
    thumbnailSettled = thumbnail.catch(() => undefined);
    const published: Rung[] = [];
    let publishing: Promise<void> = Promise.resolve();
    // Serialised so an older, shorter master can never overwrite a newer one; each write takes
    // the set as it is when it runs.
    const publish = () => {
      publishing = publishing.then(() => io.publishMaster({ workspaceId, videoId, rungs: rungs.filter((x) => published.includes(x)) }));
      return publishing;
    };

    const renderRung = async (i: number): Promise<void> => {
      const rung = rungs[i];
      const r = state.renditions[i];
      r.status = 'processing';
      await acts.recordRendition({ videoId, name: r.name, status: 'processing', progress: 0 });
      try {
        await io.transcodeRendition({
          workspaceId,
          videoId,
          storageKey,
          rung,
          hasAudio: info.hasAudio,
          fps: info.fps,
          durationSeconds: info.durationSeconds,
        });
      } catch (err) {
        if (isCancellation(err) || state.status !== 'ready') throw err;
        // Already playable: a higher rung failing leaves the video ready without that rung.
        r.status = 'failed';
        await acts.recordRendition({ videoId, name: r.name, status: 'failed', progress: r.progress });
        return;
      }
      // A rendition is reported ready only once the master playlist lists it.
      published.push(rung);
      await publish();
      await acts.recordRendition({ videoId, name: r.name, status: 'ready', progress: 100 });
      r.status = 'ready';
      r.progress = 100;
      updateProgress();
    };

    // The lowest rung alone first: it is the quickest way to a playable video.
    await renderRung(0);
    await thumbnail;
    await setStatus('ready');
    await emit('video.ready');
    // Then the rest at once, lowest first in the queue. Separate ffmpeg processes each keep only
    // part of a core busy on small rungs; running them together fills the machine, which is what
    // brings the whole ladder close to a single-pass encode (bench/transcode.ts).
    // allSettled: on cancellation every rung must have stopped before the pipeline unwinds,
    // or a deletion could remove files that a still-running encode then writes.
    const rest = await Promise.allSettled(rungs.slice(1).map((_, j) => renderRung(j + 1)));
    const rejected = rest.find((x): x is PromiseRejectedResult => x.status === 'rejected');
    if (rejected) throw rejected.reason;
    await acts.recordState({ videoId, progress: state.progress });
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

  upsertSearchAttributes([{ key: VideoStatusKey, value: state.status }]);
  if (source.kind === 'upload') {
    const arrived = await condition(() => uploaded || deleteRequested, source.uploadTimeoutMs);
    if (!deleteRequested) {
      if (arrived) {
        await setStatus('processing');
        await emit('video.uploaded');
      } else {
        await fail(ErrorCodes.uploadExpired, 'No upload was completed before the upload URL expired');
      }
    }
  }

  while (!deleteRequested) {
    if (state.status === 'processing') await process();
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
  });
}
