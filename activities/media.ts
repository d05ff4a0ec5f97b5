import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { classifyFfmpegError, FfmpegError, masterPlaylist, MediaError, probe, runFfmpeg, thumbnailArgs, thumbnailTime, transcodeArgs } from '../lib/media';
import type { Rung } from '../lib/media/ladder';
import { keys } from '../lib/storage';
import { renditionProgressSignal } from '../workflows/defs';
import type { ActivityDeps } from './deps';

const PLAYLIST_TYPE = 'application/vnd.apple.mpegurl';

/** Media failures that retrying cannot fix become non-retryable, typed failures. */
export function toFailure(err: unknown): unknown {
  if (err instanceof MediaError) return ApplicationFailure.nonRetryable(err.message, err.code);
  if (err instanceof FfmpegError && classifyFfmpegError(err.stderr) === 'invalid_media') {
    const last = err.stderr.trim().split('\n').pop() ?? '';
    return ApplicationFailure.nonRetryable(`The file could not be decoded as video (ffmpeg: ${last.slice(0, 200)})`, 'invalid_media');
  }
  return err;
}

async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vidhost-'));
  try {
    return await fn(dir);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

export function mediaActivities({ config, storage, temporal, log }: ActivityDeps) {
  const { ffmpegPath, ffprobePath } = config.media;

  return {
    async probeSource(p: { storageKey: string }) {
      try {
        const info = await probe(await storage.mediaSource(p.storageKey), { ffprobePath });
        const head = await storage.head(p.storageKey);
        return { ...info, sizeBytes: head?.size ?? info.sizeBytes };
      } catch (err) {
        throw toFailure(err);
      }
    },

    async makeThumbnail(p: { workspaceId: string; videoId: string; storageKey: string; durationSeconds: number | null }): Promise<void> {
      await withTempDir(async (dir) => {
        const output = path.join(dir, 'thumbnail.jpg');
        const input = await storage.mediaSource(p.storageKey);
        try {
          await runFfmpeg(thumbnailArgs({ input, output, atSeconds: thumbnailTime(p.durationSeconds) }), {
            ffmpegPath,
            signal: Context.current().cancellationSignal,
          });
          // A seek past the last keyframe of a very short clip yields no frame; take the first one.
          if (!(await fs.stat(output).catch(() => null))) {
            await runFfmpeg(thumbnailArgs({ input, output, atSeconds: 0 }), { ffmpegPath, signal: Context.current().cancellationSignal });
          }
        } catch (err) {
          throw toFailure(err);
        }
        await storage.putFile(keys.thumbnail(p.workspaceId, p.videoId), output, { contentType: 'image/jpeg' });
      });
    },

    /** One rung: encode to a temp dir, heartbeating progress, then upload segments and (last) the playlist. */
    async transcodeRendition(p: {
      workspaceId: string;
      videoId: string;
      storageKey: string;
      rung: Rung;
      hasAudio: boolean;
      fps: number | null;
      durationSeconds: number | null;
    }): Promise<{ segments: number }> {
      const ctx = Context.current();
      const workflowId = ctx.info.workflowExecution?.workflowId;
      const handle = workflowId ? temporal.workflow.getHandle(workflowId) : undefined;
      let progress = 0;
      let lastSignal = 0;
      let lastSignalled = 0;
      const onProgress = (pct: number) => {
        progress = pct;
        ctx.heartbeat({ progress });
        const now = Date.now();
        // The workflow's query shows live progress. Signals land in its history, so at most one per
        // 2 s and per 2 points: ≤ 50 a rung however long the encode (histories cap at 50k events).
        if (handle && now - lastSignal >= 2000 && pct - lastSignalled >= 2 && pct < 100) {
          lastSignal = now;
          lastSignalled = pct;
          handle.signal(renditionProgressSignal, { name: p.rung.name, progress: pct }).catch((err) => log.debug({ err }, 'progress signal failed'));
        }
      };
      // ffmpeg may print nothing for a while (slow input); keep the heartbeat going so cancellation is delivered.
      const beat = setInterval(() => ctx.heartbeat({ progress }), 1000);
      try {
        return await withTempDir(async (dir) => {
          const input = await storage.mediaSource(p.storageKey);
          const args = transcodeArgs({
            input,
            outputDir: dir,
            rung: p.rung,
            hasAudio: p.hasAudio,
            fps: p.fps,
            preset: config.media.x264Preset,
            segmentSeconds: config.media.segmentSeconds,
          });
          try {
            await runFfmpeg(args, { ffmpegPath, durationSeconds: p.durationSeconds ?? undefined, onProgress, signal: ctx.cancellationSignal });
          } catch (err) {
            throw toFailure(err);
          }
          const prefix = keys.rendition(p.workspaceId, p.videoId, p.rung.name);
          const segments = (await fs.readdir(dir)).filter((f) => f.endsWith('.ts')).sort();
          for (const seg of segments) {
            await storage.putFile(prefix + seg, path.join(dir, seg), { contentType: 'video/mp2t' });
            ctx.heartbeat({ progress, uploading: seg });
          }
          await storage.putFile(prefix + 'index.m3u8', path.join(dir, 'index.m3u8'), { contentType: PLAYLIST_TYPE });
          return { segments: segments.length };
        });
      } finally {
        clearInterval(beat);
      }
    },

    /** Rewrites the master playlist with the rungs published so far (idempotent). */
    async publishMaster(p: { workspaceId: string; videoId: string; rungs: Rung[] }): Promise<void> {
      const text = masterPlaylist(p.rungs, (r) => `${r.name}/index.m3u8`);
      await storage.put(keys.master(p.workspaceId, p.videoId), text, { contentType: PLAYLIST_TYPE });
    },
  };
}
