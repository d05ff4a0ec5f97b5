// Issue 28 (SPEC §21): each finished rendition's quality against the source scaled to its rung,
// SSIM and PSNR on sampled frames (lib/media/quality.ts), run in the media sandbox like every
// ffmpeg on user media. Recorded on the rendition's row (read shape `renditions[].quality`) and
// in metrics; a rendition under the floor (QUALITY_FLOOR_SSIM_DB) is reported, not withheld.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { createMediaTools } from '../../lib/media';
import { parseQuality, psnrStatsName, qualityArgs, sampleEvery, ssimStatsName, type Quality } from '../../lib/media/quality';
import { renditionPsnr, renditionsBelowQualityFloor, renditionSsim } from '../../lib/metrics/registry';
import { joinSegments, renditionSegments } from '../../lib/outputs/segments';
import type { ActivityDeps } from '../deps';
import { toFailure } from './media';
import { withTempDir } from '../outputs/common';

export type RenditionQuality = { name: string; bitrate: number | null; quality: Quality | null };

export function qualityActivities({ config, db, storage, log }: ActivityDeps) {
  const media = createMediaTools(config.media);

  return {
    /** Measures the named renditions (H.264 MPEG-TS, as stitched) in one decode of the source. Idempotent. */
    async measureQuality(p: {
      workspaceId: string;
      videoId: string;
      storageKey: string;
      rungs: Array<{ name: string; width: number; height: number }>;
      fps: number | null;
      durationSeconds: number | null;
    }): Promise<RenditionQuality[]> {
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), 1000);
      try {
        const results = await withTempDir(async (dir) => {
          const renditions = [];
          for (const r of p.rungs) {
            const joined = path.join(dir, `${r.name}.ts`);
            const segments = await renditionSegments(storage, p.workspaceId, p.videoId, r.name);
            await joinSegments(storage, p.workspaceId, p.videoId, r.name, segments, joined, () => ctx.heartbeat({ joining: r.name }));
            // Our own output, but opened like any input: probed under the allow-lists, then forced to its demuxer.
            const opened = await media.open(joined, ctx.cancellationSignal);
            renditions.push({ input: joined, inputArgs: opened.inputArgs, width: r.width, height: r.height });
          }
          const source = await media.open(await storage.mediaSource(p.storageKey), ctx.cancellationSignal);
          const args = qualityArgs({ source: source.path, sourceInputArgs: source.inputArgs, renditions, every: sampleEvery(p.fps, p.durationSeconds), statsDir: dir });
          await media.ffmpeg(args, source, { outputDir: dir, durationSeconds: p.durationSeconds, signal: ctx.cancellationSignal, onProgress: (pct) => ctx.heartbeat({ pct }) });
          return Promise.all(
            p.rungs.map(async (_, i) => parseQuality(await fs.readFile(path.join(dir, ssimStatsName(i)), 'utf8').catch(() => ''), await fs.readFile(path.join(dir, psnrStatsName(i)), 'utf8').catch(() => ''))),
          );
        });
        const out: RenditionQuality[] = [];
        for (const [i, r] of p.rungs.entries()) {
          const q = results[i];
          if (q) {
            await db('renditions').where({ video_id: p.videoId, name: r.name }).update({ ssim_db: q.ssim_db, psnr_db: q.psnr_db });
            renditionSsim.observe({ rung: r.name }, q.ssim_db);
            renditionPsnr.observe({ rung: r.name }, q.psnr_db);
            if (q.ssim_db < config.media.qualityFloorSsimDb) {
              renditionsBelowQualityFloor.inc({ rung: r.name });
              log.warn({ videoId: p.videoId, rung: r.name, ...q, floor: config.media.qualityFloorSsimDb }, 'rendition below the quality floor');
            }
          }
          const row: { bitrate: number } | undefined = await db('renditions').where({ video_id: p.videoId, name: r.name }).first('bitrate');
          out.push({ name: r.name, bitrate: row?.bitrate ?? null, quality: q });
        }
        return out;
      } catch (err) {
        throw toFailure(err);
      } finally {
        clearInterval(beat);
      }
    },
  };
}
