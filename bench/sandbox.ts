/**
 * The cost of the media sandbox (issue 9): the same 1080p ladder (probe, thumbnail, every rung as
 * its own ffmpeg, `--concurrency` at once, as the transcode worker runs them) with
 * MEDIA_SANDBOX=none and =bwrap, alternating, in one process. Both modes keep the input
 * allow-lists and prlimit; only bubblewrap differs.
 *   npx tsx bench/sandbox.ts --seconds 30 --runs 1
 * The machine may be shared: compare the two columns of the same run, not across runs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { thumbnailArgs, thumbnailTime, transcodeArgs } from '../lib/media/args';
import { planLadder } from '../lib/media/ladder';
import { DEFAULT_LIMITS } from '../lib/media/limits';
import { createMediaTools, detectBwrap } from '../lib/media/tools';
import { makeClip } from '../test/support/media';
import { arg } from './args';


const seconds = arg('seconds', 30);
const runs = arg('runs', 1);
const concurrency = arg('concurrency', os.availableParallelism());
const preset = process.env.X264_PRESET ?? 'veryfast';

async function ladder(clip: string, sandbox: 'none' | 'bwrap'): Promise<number> {
  const tools = createMediaTools({ ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe', sandbox, formatCheck: true, limits: DEFAULT_LIMITS });
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `vh-bench-${sandbox}-`));
  try {
    const t0 = performance.now();
    const input = await tools.open(clip);
    const info = input.info;
    await tools.ffmpeg(thumbnailArgs({ input: input.path, inputArgs: input.inputArgs, output: path.join(root, 'thumb.jpg'), atSeconds: thumbnailTime(info.durationSeconds) }), input, { outputDir: root, durationSeconds: info.durationSeconds });
    const queue = planLadder({ width: info.width, height: info.height, rotation: info.rotation });
    const worker = async (): Promise<void> => {
      for (let rung = queue.shift(); rung; rung = queue.shift()) {
        // Each rung opens its input again, as transcodeRendition does.
        const own = await tools.open(clip);
        const dir = fs.mkdtempSync(path.join(root, `${rung.name}-`));
        await tools.ffmpeg(transcodeArgs({ input: own.path, inputArgs: own.inputArgs, outputDir: dir, rung, hasAudio: info.hasAudio, fps: info.fps, preset }), own, { outputDir: dir, durationSeconds: info.durationSeconds });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return (performance.now() - t0) / 1000;
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const bwrap = await detectBwrap();
  if (bwrap.mode !== 'bwrap') throw new Error(`cannot measure: ${bwrap.reason}`);
  process.stdout.write(`generating a ${seconds} s 1080p H.264 clip... `);
  const clip = await makeClip({ width: 1920, height: 1080, seconds });
  console.log(`${(fs.statSync(clip).size / 1e6).toFixed(1)} MB; preset ${preset}, ${concurrency} rungs at once`);
  const rows: Array<{ none: number; bwrap: number }> = [];
  for (let i = 0; i < runs; i++) {
    // Alternate which goes first so a load change on a shared machine does not favour one side.
    const order: Array<'none' | 'bwrap'> = i % 2 === 0 ? ['none', 'bwrap'] : ['bwrap', 'none'];
    const row = { none: 0, bwrap: 0 };
    for (const mode of order) {
      process.stdout.write(`run ${i + 1}/${runs}: ${mode}... `);
      row[mode] = await ladder(clip, mode);
      console.log(`${row[mode].toFixed(1)} s`);
    }
    rows.push(row);
  }
  const sum = (k: 'none' | 'bwrap') => rows.reduce((a, r) => a + r[k], 0);
  console.log(`\nladder without sandbox: ${(sum('none') / runs).toFixed(1)} s, with bwrap: ${(sum('bwrap') / runs).toFixed(1)} s, ratio ${(sum('bwrap') / sum('none')).toFixed(3)}`);
  console.log('(shared machine: the ratio of the same run is the figure; absolute times vary with load)');
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
