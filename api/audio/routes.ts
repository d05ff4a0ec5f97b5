import type Router from '@koa/router';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { eventActivities } from '../../activities/events';
import { addedTrackKey, audioKey } from '../../activities/audio/tracks';
import { cmafAudioRendition } from '../../lib/media/cmaf';
import { newId, randomToken } from '../../lib/ids';
import { assertPublicUrl, UrlNotAllowedError } from '../../lib/net/guard';
import { canonicalLanguage } from '../../lib/outputs/captions';
import type { AudioTrackRow } from '../../lib/outputs/read';
import { republishMaster } from '../../lib/outputs/publish';
import { keys } from '../../lib/storage';
import { boundPassed, jobsInFlight, lockJobAdmission } from '../../lib/videos/jobs';
import { type AudioTrackWorkflowInput, audioTrackWorkflowId } from '../../workflows/audio/defs';
import { fairness, Priority, priority } from '../../workflows/priority';
import type { Deps } from '../deps';
import { badRequest, conflict, notFound, tooManyJobs } from '../errors';
import { auth, requireFull } from '../middleware/auth';
import { parseBody } from '../middleware/validate';
import { findVideo } from '../videos/find';
import { addAudioTrackBody } from './schema';

/** lib/outputs/read.ts's row, with what only this route shows or needs. */
type TrackRow = AudioTrackRow & { error_message: string | null; origin: string };

/**
 * Audio tracks (SPEC §19, docs/audio.md). A POST records the track and starts its own workflow
 * (workflows/audio/track.ts), which waits for the upload or fetches the URL, encodes it on the
 * video's timeline and republishes the master with it; a DELETE unpublishes first, then removes.
 */
export function audioTrackRoutes(r: Router, deps: Deps): void {
  const { db, storage, config } = deps;
  const shape = (t: TrackRow) => ({ language: t.language, name: t.name, default: t.is_default, channels: t.channels, status: t.status, error_message: t.error_message });
  const emit = (videoId: string, workspaceId: string, type: string) =>
    eventActivities({ ...deps, log: deps.log }).emitEvent({ eventId: newId('evt'), videoId, workspaceId, type });

  r.get('/videos/:id/audio-tracks', async (ctx) => {
    const row = await findVideo(ctx, deps, ctx.params.id);
    const rows: TrackRow[] = await db('audio_tracks').where({ video_id: row.id }).orderBy(['ordinal', 'rendition']);
    ctx.body = { data: rows.map(shape) };
  });

  r.post('/videos/:id/audio-tracks', async (ctx) => {
    requireFull(ctx);
    const video = await findVideo(ctx, deps, ctx.params.id);
    const body = parseBody(ctx, addAudioTrackBody);
    const language = canonicalLanguage(body.language);
    if (!language) throw badRequest('invalid_language', `"${body.language}" is not a BCP-47 language tag (e.g. en, pt-BR)`);
    if (video.status !== 'ready' || video.audio_layout !== 'group') {
      throw conflict('not_ready', video.status !== 'ready'
        ? `Audio tracks can be added to ready videos only (status: ${video.status})`
        : 'This video was encoded before audio renditions existed (its rungs carry their audio); upload it again to add tracks');
    }
    if (!body.url && (body.size === undefined || body.content_type === undefined)) {
      throw badRequest('validation_failed', 'Give either `url`, or `size` and `content_type` for an upload URL', [{ field: 'url', message: 'required without size and content_type' }]);
    }
    if (body.size !== undefined && body.size > config.upload.maxBytes) throw badRequest('file_too_large', `size is above the ${config.upload.maxBytes} byte limit`);
    if (body.url) {
      try {
        await assertPublicUrl(body.url, config.allowLoopbackUrls);
      } catch (err) {
        if (err instanceof UrlNotAllowedError) throw badRequest('url_not_allowed', `The URL is not allowed: ${err.message}`);
        throw err;
      }
    }
    const rendition = `x-${language}`;
    const uploadKey = body.url ? null : keys.upload(video.workspace_id, video.id, `audio-${rendition}-${randomToken(12)}`);
    const expiresIn = config.upload.urlTtlSeconds;
    const inserted = await db.transaction(async (tx) => {
      // SPEC §25: added tracks in flight count against the video's and the workspace's job bounds.
      await lockJobAdmission(tx, video.workspace_id);
      const existing = await tx('audio_tracks').where({ video_id: video.id, rendition }).first('status');
      if (existing) return false;
      const passed = boundPassed(await jobsInFlight(tx, video.workspace_id, video.id), config.jobs);
      if (passed) throw tooManyJobs(passed, config.jobs);
      const ordinal = Number((await tx('audio_tracks').where({ video_id: video.id }).max('ordinal as m').first())?.m ?? -1) + 1;
      await tx('audio_tracks').insert({
        video_id: video.id, rendition, ordinal, language, name: body.name, is_default: body.default ?? false, channels: 2, bitrate: 128000,
        status: body.url ? 'processing' : 'pending_upload', origin: 'added', upload_key: uploadKey, source_url: body.url ?? null,
      });
      return true;
    });
    if (!inserted) throw conflict('audio_track_exists', `The video already has an added ${language} track; delete it first`);
    const presigned = uploadKey ? await storage.presignPut(uploadKey, { contentType: body.content_type!, contentLength: body.size!, expiresIn, videoId: video.id }) : null;
    const input: AudioTrackWorkflowInput = {
      videoId: video.id, workspaceId: video.workspace_id, rendition, transcodeQueue: config.temporal.transcodeQueue,
      ...(body.url ? { url: body.url } : { uploadDeadline: Date.now() + expiresIn * 1000 + 60_000 }),
    };
    try {
      await deps.temporal.workflow.start('audioTrackWorkflow', {
        taskQueue: config.temporal.taskQueue,
        workflowId: audioTrackWorkflowId(video.id, rendition),
        args: [input],
        priority: priority(Priority.onRequest, fairness(video.workspace_id, auth(ctx).plan)),
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    const saved: TrackRow = await db('audio_tracks').where({ video_id: video.id, rendition }).first();
    ctx.status = 202;
    ctx.body = { ...shape(saved), upload_url: presigned?.url ?? null, upload_headers: presigned?.headers ?? null, expires_in: presigned ? expiresIn : null };
  });

  r.delete('/videos/:id/audio-tracks/:language', async (ctx) => {
    requireFull(ctx);
    const video = await findVideo(ctx, deps, ctx.params.id);
    const language = canonicalLanguage(ctx.params.language);
    if (!language) throw badRequest('invalid_language', `"${ctx.params.language}" is not a BCP-47 language tag (e.g. en, pt-BR)`);
    const rows: TrackRow[] = await db('audio_tracks').where({ video_id: video.id, language });
    if (rows.length === 0) throw notFound('Audio track');
    await db.transaction(async (tx) => {
      await tx('audio_tracks').where({ video_id: video.id, language }).delete();
      // The group keeps a default: the first remaining rendition.
      if (rows.some((t) => t.is_default)) {
        const next = await tx('audio_tracks').where({ video_id: video.id }).orderBy(['ordinal', 'rendition']).first('rendition');
        if (next) await tx('audio_tracks').where({ video_id: video.id, rendition: next.rendition }).update({ is_default: true });
      }
    });
    // The master stops naming the renditions before their files go, so no player is sent to a 404.
    await republishMaster(db, storage, { workspaceId: video.workspace_id, videoId: video.id });
    deps.hot.files.dropVideo(video.id);
    for (const t of rows) {
      await deps.temporal.workflow.getHandle(audioTrackWorkflowId(video.id, t.rendition)).cancel().catch(() => undefined);
      await storage.deletePrefix(audioKey(video.workspace_id, video.id, t.rendition));
      // Its CMAF copy (issue 28), if the HEVC/AV1 renditions made one.
      await storage.deletePrefix(audioKey(video.workspace_id, video.id, cmafAudioRendition(t.rendition)));
      await storage.deletePrefix(addedTrackKey(video.workspace_id, video.id, t.rendition));
    }
    await emit(video.id, video.workspace_id, 'video.audio_track.deleted');
    ctx.status = 204;
  });
}
