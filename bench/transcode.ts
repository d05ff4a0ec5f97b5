/**
 * Pipeline speed against the single-pass floor, on this machine, in one process:
 *   - floor: ONE ffmpeg process producing the whole ladder (split + scale, one decode);
 *   - ours: upload → complete → `ready` (playable) → every rendition done, through the real
 *     API, Temporal, activities and storage.
 * Prints both and their ratios. `npm run bench -- --seconds 30 --runs 1`
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { singlePassLadderArgs } from '../lib/media/args';
import { planLadder } from '../lib/media/ladder';
import { runFfmpeg } from '../lib/media/run';
import { uploadFormA, waitForVideo, allRenditionsReady, isStatus } from '../test/support/flow';
import { mochaHooks } from '../test/support/hooks';
import { makeClip } from '../test/support/media';
import { startStack } from '../test/support/stack';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const seconds = arg('seconds', 30);
const runs = arg('runs', 1);
const preset = process.env.X264_PRESET ?? 'veryfast';
const concurrency = arg('concurrency', os.availableParallelism());

async function floor(clip: string): Promise<number> {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-bench-floor-'));
  try {
    const rungs = planLadder({ width: 1920, height: 1080 });
    const t0 = performance.now();
    await runFfmpeg(singlePassLadderArgs({ input: clip, outputRoot: out, rungs, hasAudio: true, fps: 24, preset }), { durationSeconds: seconds });
    return (performance.now() - t0) / 1000;
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  process.stdout.write(`generating a ${seconds} s 1080p H.264 clip... `);
  const clip = await makeClip({ width: 1920, height: 1080, seconds });
  console.log(`${(fs.statSync(clip).size / 1e6).toFixed(1)} MB`);
  const stack = await startStack({ env: { X264_PRESET: preset, LOG_LEVEL: 'warn', TRANSCODE_CONCURRENCY: String(concurrency) } });
  const rows: Array<{ floor: number; ready: number; all: number }> = [];
  for (let i = 0; i < runs; i++) {
    process.stdout.write(`run ${i + 1}/${runs}: floor (single ffmpeg, whole ladder)... `);
    const f = await floor(clip);
    console.log(`${f.toFixed(1)} s`);
    process.stdout.write('           pipeline (API → Temporal → activities)... ');
    const { id } = await uploadFormA(stack, clip, { complete: false });
    const t0 = performance.now();
    await stack.post('/v1/upload/complete', { video_id: id }).expect(202);
    await waitForVideo(stack, id, isStatus('ready'), 600_000);
    const ready = (performance.now() - t0) / 1000;
    await waitForVideo(stack, id, allRenditionsReady, 900_000);
    const all = (performance.now() - t0) / 1000;
    console.log(`ready ${ready.toFixed(1)} s, all renditions ${all.toFixed(1)} s`);
    rows.push({ floor: f, ready, all });
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const f = median(rows.map((r) => r.floor));
  const ready = median(rows.map((r) => r.ready));
  const all = median(rows.map((r) => r.all));
  console.log('');
  console.log(`preset ${preset}, ${os.availableParallelism()} cores, ${concurrency} transcodes at once, ${seconds} s 1080p source, median of ${runs}`);
  console.log(`  single-pass floor            ${f.toFixed(1)} s   1.00x`);
  console.log(`  playable (ready)             ${ready.toFixed(1)} s   ${(ready / f).toFixed(2)}x   (aim: ≤ 10 s)`);
  console.log(`  every rendition done         ${all.toFixed(1)} s   ${(all / f).toFixed(2)}x   (aim: ≤ 1.30x)`);
  await mochaHooks.afterAll.call({ timeout() {} } as never);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
