// Pure: measured quality of renditions against the source scaled to each rung (SPEC §21), with
// ffmpeg's `ssim` and `psnr` filters on sampled frames. No I/O, no Node built-ins.
import { GLOBAL_ARGS, joinPath } from './args';

export type Quality = { ssim_db: number; psnr_db: number };

export type QualityRendition = {
  /** A self-contained file of the rendition (its segments joined). */
  input: string;
  inputArgs?: readonly string[];
  width: number;
  height: number;
};

/** Frames compared per rendition at most; every Nth frame is taken (same N for source and rendition). */
export const QUALITY_SAMPLE_FRAMES = 120;

/** Every how many frames to compare so that about QUALITY_SAMPLE_FRAMES are (1 when unknown or short). */
export function sampleEvery(fps: number | null | undefined, durationSeconds: number | null | undefined): number {
  if (!fps || !durationSeconds || fps <= 0 || durationSeconds <= 0) return 1;
  return Math.max(1, Math.floor((fps * durationSeconds) / QUALITY_SAMPLE_FRAMES));
}

export const ssimStatsName = (i: number): string => `ssim_${i}.log`;
export const psnrStatsName = (i: number): string => `psnr_${i}.log`;

/**
 * One ffmpeg that decodes the source once and compares it with every rendition: the source's
 * sampled frames are scaled to each rendition's size (bicubic, as the encodes) and the pair goes
 * through `ssim` and `psnr`, whose per-frame statistics land in `<statsDir>/ssim_<i>.log` and
 * `psnr_<i>.log`. Frames are matched by index (`select` on n), which holds because encodes keep
 * every source frame; `shortest=1` stops at the shorter of the two.
 */
export function qualityArgs(o: {
  source: string;
  sourceInputArgs?: readonly string[];
  renditions: readonly QualityRendition[];
  every: number;
  statsDir: string;
}): string[] {
  const n = o.renditions.length;
  if (n === 0) throw new RangeError('qualityArgs needs at least one rendition');
  const every = Math.max(1, Math.floor(o.every));
  const pick = every > 1 ? `select='not(mod(n\\,${every}))',` : '';
  const graph: string[] = [];
  graph.push(`[0:v:0]${pick}setpts=N/TB${n > 1 ? `,split=${n}${o.renditions.map((_, i) => `[s${i}]`).join('')}` : '[s0]'}`);
  o.renditions.forEach((r, i) => {
    const ssim = joinPath(o.statsDir, ssimStatsName(i));
    const psnr = joinPath(o.statsDir, psnrStatsName(i));
    graph.push(
      `[s${i}]scale=${r.width}:${r.height}:flags=bicubic,format=yuv420p,split[r${i}a][r${i}b]`,
      `[${i + 1}:v:0]${pick}setpts=N/TB,format=yuv420p,split[d${i}a][d${i}b]`,
      `[d${i}a][r${i}a]ssim=stats_file=${ssim}:shortest=1[x${i}]`,
      `[d${i}b][r${i}b]psnr=stats_file=${psnr}:shortest=1[y${i}]`,
    );
  });
  const inputs = o.renditions.flatMap((r) => [...(r.inputArgs ?? []), '-i', r.input]);
  const outputs = o.renditions.flatMap((_, i) => ['-map', `[x${i}]`, '-f', 'null', '-', '-map', `[y${i}]`, '-f', 'null', '-']);
  return [...GLOBAL_ARGS, ...(o.sourceInputArgs ?? []), '-i', o.source, ...inputs, '-filter_complex', graph.join(';'), ...outputs];
}

/** SSIM as dB, the scale quality floors are stated in: −10·log10(1 − SSIM); 0.99 → 20 dB. */
export const ssimToDb = (ssim: number): number => (ssim >= 1 ? 100 : Math.min(100, -10 * Math.log10(1 - ssim)));

const round2 = (n: number): number => Math.round(n * 100) / 100;

/**
 * The rendition's quality from the filters' per-frame logs: the mean SSIM (All) as dB, and PSNR
 * from the mean MSE (as ffmpeg's own summary). Null when no frame was compared.
 */
export function parseQuality(ssimLog: string, psnrLog: string): Quality | null {
  const ssims = [...ssimLog.matchAll(/All:([0-9.]+)/g)].map((m) => Number(m[1])).filter(Number.isFinite);
  const mses = [...psnrLog.matchAll(/mse_avg:([0-9.]+)/g)].map((m) => Number(m[1])).filter(Number.isFinite);
  if (ssims.length === 0 || mses.length === 0) return null;
  const ssim = ssims.reduce((a, b) => a + b, 0) / ssims.length;
  const mse = mses.reduce((a, b) => a + b, 0) / mses.length;
  const psnr = mse <= 0 ? 100 : Math.min(100, 10 * Math.log10((255 * 255) / mse));
  return { ssim_db: round2(ssimToDb(ssim)), psnr_db: round2(psnr) };
}
