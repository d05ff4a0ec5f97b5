import fs from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { displayDimensions } from '../../lib/media/ladder';
import { fetchMark } from '../../lib/watermarks/local';
import { markOfVideo } from '../../lib/watermarks/store';
import { classifyFfmpegError, codecsFor, createMediaTools, FfmpegError, honestRung, isRefusedInput, masterPlaylist, MediaError, type PlaylistRung, REFUSED_INPUT_MESSAGE, thumbnailArgs, thumbnailTime, transcodeArgs } from '../../lib/media';
import type { Rung } from '../../lib/media/ladder';
import { withMasterLock, writeMaster } from '../../lib/outputs/publish';
import { PASSTHROUGH_RENDITION } from '../../lib/outputs/passthrough';
import { keys } from '../../lib/storage';
import { withTempDir } from '../outputs/common';
import { renditionProgressSignal } from '../../workflows/video/defs';
import type { ActivityDeps } from '../deps';

const PLAYLIST_TYPE = 'application/vnd.apple.mpegurl';

/** Media failures that retrying cannot fix become non-retryable, typed failures. */
export function toFailure(err: unknown): unknown {
  if (err instanceof MediaError) return ApplicationFailure.nonRetryable(err.message, err.code);
  if (err instanceof FfmpegError && err.limit) {
    return ApplicationFailure.nonRetryable(`The video exceeds a limit: processing hit its ${err.limit} limit`, 'media_too_large');
  }
  if (err instanceof FfmpegError && isRefusedInput(err.stderr)) return ApplicationFailure.nonRetryable(REFUSED_INPUT_MESSAGE, 'invalid_media');
  if (err instanceof FfmpegError && classifyFfmpegError(err.stderr) === 'invalid_media') {
    const last = err.stderr.trim().split('\n').pop() ?? '';
    return ApplicationFailure.nonRetryable(`The file could not be decoded as video (ffmpeg: ${last.slice(0, 200)})`, 'invalid_media');
  }
  return err;
}

export function mediaActivities({ config, db, storage, temporal, log }: ActivityDeps) {
  const media = createMediaTools(config.media);

  return {
    async probeSource(p: { storageKey: string }) {
      try {
        const info = await media.probe(await storage.mediaSource(p.storageKey), Context.current().cancellationSignal);
        const head = await storage.head(p.storageKey);
        return { ...info, sizeBytes: head?.size ?? info.sizeBytes };
      } catch (err) {
        throw toFailure(err);
      }
    },

    async makeThumbnail(p: { workspaceId: string; videoId: string; storageKey: string; durationSeconds: number | null }): Promise<void> {
      await withTempDir(async (dir) => {
        const output = path.join(dir, 'thumbnail.jpg');
        const signal = Context.current().cancellationSignal;
        const wm = await fetchMark(storage, await markOfVideo(db, p.videoId));
        try {
          const input = await media.open(await storage.mediaSource(p.storageKey), signal);
          const run = { outputDir: dir, signal, durationSeconds: p.durationSeconds, readOnly: wm?.readOnly };
          // SPEC §24: the mark at the source's display size, before the downscale.
          const marked = { mark: wm?.mark, frame: displayDimensions(input.info) };
          await media.ffmpeg(thumbnailArgs({ input: input.path, inputArgs: input.inputArgs, output, atSeconds: thumbnailTime(p.durationSeconds), ...marked }), input, run);
          // A seek past the last keyframe of a very short clip yields no frame; take the first one.
          if (!(await fs.stat(output).catch(() => null))) {
            await media.ffmpeg(thumbnailArgs({ input: input.path, inputArgs: input.inputArgs, output, atSeconds: 0, ...marked }), input, run);
          }
          if (!(await fs.stat(output).catch(() => null))) throw new MediaError('invalid_media', 'No frame of the video could be decoded for the thumbnail');
        } catch (err) {
          throw toFailure(err);
        } finally {
          await wm?.dispose();
        }
        await storage.putFile(keys.thumbnail(p.workspaceId, p.videoId), output, { contentType: 'image/jpeg' });
      }, 'vidhost-');
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
          let input;
          try {
            input = await media.open(await storage.mediaSource(p.storageKey), ctx.cancellationSignal);
          } catch (err) {
            throw toFailure(err);
          }
          const wm = await fetchMark(storage, await markOfVideo(db, p.videoId));
          const args = transcodeArgs({
            mark: wm?.mark,
            input: input.path,
            inputArgs: input.inputArgs,
            outputDir: dir,
            rung: p.rung,
            hasAudio: p.hasAudio,
            fps: p.fps,
            preset: config.media.x264Preset,
            rateControl: config.media.rateControl,
            segmentSeconds: config.media.segmentSeconds,
          });
          try {
            await media.ffmpeg(args, input, { outputDir: dir, durationSeconds: p.durationSeconds ?? undefined, onProgress, signal: ctx.cancellationSignal, readOnly: wm?.readOnly });
          } catch (err) {
            throw toFailure(err);
          } finally {
            await wm?.dispose();
          }
          const prefix = keys.rendition(p.workspaceId, p.videoId, p.rung.name);
          const segments = (await fs.readdir(dir)).filter((f) => f.endsWith('.ts')).sort();
          for (const seg of segments) {
            await storage.putFile(prefix + seg, path.join(dir, seg), { contentType: 'video/mp2t' });
            ctx.heartbeat({ progress, uploading: seg });
          }
          await storage.putFile(prefix + 'index.m3u8', path.join(dir, 'index.m3u8'), { contentType: PLAYLIST_TYPE });
          return { segments: segments.length };
        }, 'vidhost-');
      } finally {
        clearInterval(beat);
      }
    },

    /** Rewrites the master playlist with the rungs published so far (idempotent). */
    async publishMaster(p: {
      workspaceId: string;
      videoId: string;
      rungs: Rung[];
      /** e.g. the passthrough, with measured bandwidth and codecs */
      extra?: PlaylistRung[];
      /** SPEC §19 layout: the rungs carry no audio; lib/outputs/audio.ts adds the AUDIO group and AAC to CODECS. */
      videoOnly?: boolean;
      /**
       * SPEC §23 (issue 47): rungs whose segments are still encoded on request, with their declared
       * bandwidth (listed as they are; recorded on the video so images and the CDN know them).
       */
      onRequest?: PlaylistRung[];
      /** The variant listed first (the one players start with). */
      first?: string;
    }): Promise<void> {
      // Honest BANDWIDTH/AVERAGE-BANDWIDTH (SPEC §21): each rung as measured when it was stitched.
      const measured = new Map<string, { peak: number; average: number }>();
      if (p.rungs.length) {
        const rows: Array<{ name: string; bitrate: number; peak_bitrate: number | null }> = await db('renditions')
          .where({ video_id: p.videoId })
          .whereIn('name', p.rungs.map((r) => r.name))
          .whereNotNull('peak_bitrate')
          .select('name', 'bitrate', 'peak_bitrate');
        for (const r of rows) measured.set(r.name, { peak: r.peak_bitrate!, average: r.bitrate });
      }
      // A measured video-only rung plays with the AUDIO group's stereo rendition beside it, whose
      // bitrate its BANDWIDTH must include (RFC 8216 §4.3.4.2); a muxed rung's measure already does.
      // The audio side is the AAC rendition's nominal rate (its measured rate stays below it).
      const rungs = p.rungs.map((r) => {
        const honest = honestRung(r, measured.get(r.name), p.videoOnly ? { hasAudio: false } : {});
        return p.videoOnly && honest !== r ? { ...honest, audioBitrate: r.audioBitrate } : honest;
      });
      const all: PlaylistRung[] = [...rungs, ...(p.onRequest ?? []), ...(p.extra ?? [])];
      const text = masterPlaylist(p.videoOnly ? all.map((r) => ({ ...r, codecs: r.codecs ?? codecsFor(r, { hasAudio: false }) })) : all, (r) => `${r.name}/index.m3u8`, { first: p.first });
      // With the video's captions (SPEC §14), under the lock the caption routes also take.
      // The passthrough's entry goes with the master that lists it (issue 22): reads show it as the
      // rendition the video plays from, and on-demand images render from it until the ladder lands.
      const source = (p.extra ?? []).find((r) => r.name === PASSTHROUGH_RENDITION);
      const entry = source ? JSON.stringify({ width: source.width, height: source.height, bitrate: source.videoBitrate }) : null;
      const onRequest = p.onRequest?.length ? JSON.stringify(p.onRequest.map((r) => ({ name: r.name, width: r.width, height: r.height, bitrate: r.videoBitrate }))) : null;
      await withMasterLock(db, p.videoId, async () => {
        // The rungs still on request first: the master's notification then reaches caches that read them.
        if (p.onRequest !== undefined) await db('videos').where({ id: p.videoId }).update({ on_request_renditions: onRequest });
        await writeMaster(db, storage, { workspaceId: p.workspaceId, videoId: p.videoId, text });
        await db('videos').where({ id: p.videoId }).update({ passthrough_rendition: entry });
      });
    },
  };
}
