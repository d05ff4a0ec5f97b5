import type Router from '@koa/router';
import { z } from 'zod';
import { mp4Support, passthrough } from '../../lib/outputs/options';
import { loadVideoRow } from '../../lib/videos/read';
import { boundPassed, jobsInFlight, lockJobAdmission } from '../../lib/videos/jobs';
import type { Deps } from '../deps';
import { badRequest, conflict, notFound, tooManyJobs } from '../errors';
import { auth } from '../middleware/auth';
import { parseBody } from '../middleware/validate';
import { createVideo, type NewVideo } from '../upload/create';
import { visibility } from '../upload/schema';
import { findVideo } from '../videos/find';
import { readVideo } from '../videos/routes';

/** Shorter than this, a clip would have no frame to show at common frame rates. */
const MIN_CLIP_SECONDS = 0.1;

export const clipBody = z
  .object({
    start_time: z.number().finite().min(0),
    end_time: z.number().finite().positive(),
    title: z.string().trim().min(1).max(200).optional(),
    visibility: visibility.optional(),
    mp4_support: mp4Support.optional(),
    passthrough: passthrough.optional(),
  })
  .strict();

/** The source's bytes pro rata of the range (at least 1 byte, so a clip at the limit never fits). */
export function clipSizeEstimate(sourceBytes: number | string | null, duration: number, start: number, end: number): number {
  const bytes = Number(sourceBytes ?? 0);
  return Math.max(1, Math.ceil((bytes * (end - start)) / Math.max(duration, 0.001)));
}

/**
 * SPEC §14 clips: a new video, with its own workflow and id, whose original is the range of the
 * source's original (cut frame-accurately by the clip's workflow), then processed like an upload.
 */
export function clipRoutes(r: Router, deps: Deps): void {
  r.post('/videos/:id/clips', async (ctx) => {
    const source = await findVideo(ctx, deps, ctx.params.id);
    const body = parseBody(ctx, clipBody);
    if (source.status !== 'ready' || source.duration_seconds === null) {
      throw conflict('not_ready', `Clips can be cut from ready videos only (status: ${source.status})`);
    }
    const duration = source.duration_seconds;
    const field = (name: string, message: string) => badRequest('invalid_range', message, [{ field: name, message }]);
    if (body.start_time >= duration) throw field('start_time', `start_time must be before the end of the video (${duration} s)`);
    if (body.end_time > duration + 0.001) throw field('end_time', `end_time must be within the video's ${duration} seconds`);
    if (body.end_time - body.start_time < MIN_CLIP_SECONDS) throw field('end_time', `end_time must be at least ${MIN_CLIP_SECONDS} s after start_time`);
    if (!(await deps.storage.head(source.storage_key))) throw conflict('original_missing', 'The source video has no original to cut from');

    const a = auth(ctx);
    const clip: NewVideo = {
      filename: 'clip.mp4',
      contentType: 'video/mp4',
      // Reserved against the storage quota like an upload's declared size (403
      // storage_quota_exceeded when it does not fit); the pipeline's probe of the cut original
      // replaces it with the real size (recordMetadata), which settles the reservation.
      size: clipSizeEstimate(source.size_bytes, duration, body.start_time, Math.min(body.end_time, duration)),
      title: body.title ?? `${source.title} (clip)`.slice(0, 200),
      description: source.description ?? undefined,
      visibility: body.visibility ?? source.visibility,
      folderId: source.folder_id,
      outputs: { passthrough: body.passthrough, mp4_support: body.mp4_support, source_video_id: source.id },
      // A clip of a protected video is protected the same way.
      protection: { playback_restriction_id: source.playback_restriction_id, encryption: source.encryption ?? undefined },
      // SPEC §24: a clip of a watermarked video carries the same mark (its original is cut from the unmarked original).
      inheritedWatermarkId: source.watermark_id ?? null,
      source: { kind: 'clip', sourceStorageKey: source.storage_key, startSeconds: body.start_time, endSeconds: Math.min(body.end_time, duration) },
    };
    // SPEC §25: a clip being made is a job of its source, bounded per video and per workspace;
    // it is made in the transaction that holds the workspace's admission lock.
    const v = await deps.db.transaction(async (tx) => {
      await lockJobAdmission(tx, a.workspaceId);
      const passed = boundPassed(await jobsInFlight(tx, a.workspaceId, source.id), deps.config.jobs);
      if (passed) throw tooManyJobs(passed, deps.config.jobs);
      return createVideo(deps, a, clip, tx);
    });
    const row = await loadVideoRow(deps.db, v.id, a.workspaceId);
    if (!row) throw notFound('Video');
    ctx.status = 202;
    ctx.body = await readVideo(deps, row);
  });
}
