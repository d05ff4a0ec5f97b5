/**
 * Transcode speed against the single-pass floor, every figure from ONE run of this script
 * (issue 11; numbers are only meaningful on a quiet machine):
 *
 *   Part 1 (`--seconds`, default 30 s of 1080p): floor = ONE ffmpeg making the whole ladder;
 *     pipeline = upload → complete → `ready` (playable) → every rendition, through the real API,
 *     Temporal, activities and storage, with in-process workers. Ratios: playable/floor (aim ≤ 0.07),
 *     ladder/floor (aim ≤ 1.10).
 *   Part 2 (`--long-seconds`, default 300 s of 1080p; skip with `--no-scale`): chunked ladder on
 *     transcode worker PROCESSES pinned with taskset: 1 worker on core 0, then 2 workers on cores
 *     0 and 1. Ratios: time(2)/time(1) (aim ≤ 0.60); the chunked ladder's CPU time / the floor's
 *     CPU time (aim ≤ 1.15); time to `ready`; per-chunk encode times, and from them a paper
 *     estimate of a 2-hour source on 1, 10 and 100 workers.
 *
 *   npm run bench -- --seconds 30 --long-seconds 300 [--runs 3] [--chunk-seconds 30] [--no-scale]
 *                    [--bitrate 6000000] [--noise] [--no-passthrough]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { singlePassLadderArgs } from '../lib/media/args';
import { chunkLadderArgs } from '../lib/media/chunks';
import type { Mark } from '../lib/media/watermark';
import { planLadder } from '../lib/media/ladder';
import { runFfmpeg } from '../lib/media/run';
import { allRenditionsReady, allRunEvents, isStatus, uploadFormA, waitForVideo } from '../test/support/flow';
import { spawnGroup, type Proc } from '../test/support/child';
import { makeClip } from '../test/support/media';
import { startStack, type Stack } from '../test/support/stack';
import { runMain } from '../test/support/main';

const argv = process.argv.slice(2);
function arg(name: string, fallback: number): number {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? Number(argv[i + 1]) : fallback;
}
const seconds = arg('seconds', 30);
const longSeconds = arg('long-seconds', 300);
const runs = arg('runs', 1);
const chunkSeconds = arg('chunk-seconds', 30);
const scale = !argv.includes('--no-scale');
const bitrate = arg('bitrate', 6_000_000);
const content = argv.includes('--noise') ? ('noise' as const) : ('testsrc' as const);
// --no-passthrough: the fallback path (lowest rung first, then the rest), as for an ineligible source.
const passthrough = !argv.includes('--no-passthrough');
// --overlay-only: only the watermark's cost (SPEC §24), no stack.
const overlayOnly = argv.includes('--overlay-only');
const preset = process.env.X264_PRESET ?? 'veryfast';
const root = path.resolve(__dirname, '..');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);

/**
 * CPU seconds the whole machine has spent (every process: user, nice, system, irq, softirq, steal
 * from /proc/stat). The workers' own counters miss ffmpeg's CPU (they read 0.2 s for a whole
 * ladder; ffmpeg runs under prlimit → bwrap, most likely reaped inside the sandbox's own process
 * tree, so its CPU never reaches the worker's cutime). Measured the same way for
 * the floor and the ladder, on an otherwise quiet machine; the ladder's figure includes everything
 * it costs (Temporal, Postgres, storage, the API and workers), not only ffmpeg.
 */
function machineCpu(): number {
  const [, user, nice, system, , , irq, softirq, steal] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  return (user + nice + system + irq + softirq + steal) / 100;
}

async function floor(clip: string, duration: number): Promise<{ wall: number; cpu: number }> {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-bench-floor-'));
  try {
    const rungs = planLadder({ width: 1920, height: 1080 });
    const cpu0 = machineCpu();
    const t0 = performance.now();
    await runFfmpeg(singlePassLadderArgs({ input: clip, outputRoot: out, rungs, hasAudio: true, fps: 24, preset }), { durationSeconds: duration });
    return { wall: (performance.now() - t0) / 1000, cpu: machineCpu() - cpu0 };
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

/**
 * SPEC §24: the production ladder command (chunkLadderArgs, the whole source as one chunk, every
 * rung from one decode) without and with a watermark (a 256×128 PNG, scale 0.15, opacity 0.8),
 * one after the other on the same machine: the overlay's cost as a ratio of the plain ladder.
 */
async function overlayCost(clip: string, duration: number): Promise<{ plain: number; marked: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-bench-mark-'));
  try {
    const file = path.join(dir, 'mark.png');
    await runFfmpeg(['-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=magenta:s=256x128', '-frames:v', '1', file], {});
    const mark: Mark = { file, format: 'png', width: 256, height: 128, position: 'bottom-right', padding: 0.05, scale: 0.15, opacity: 0.8 };
    const rungs = planLadder({ width: 1920, height: 1080 });
    const once = async (withMark: boolean) => {
      const out = fs.mkdtempSync(path.join(dir, 'out-'));
      for (const r of rungs) fs.mkdirSync(path.join(out, r.name));
      const t0 = performance.now();
      await runFfmpeg(chunkLadderArgs({ input: clip, outputRoot: out, rungs, chunk: { index: 0, start: 0, end: null }, hasAudio: true, segmentSeconds: 6, fps: 24, preset, mark: withMark ? mark : null }), { durationSeconds: duration });
      return (performance.now() - t0) / 1000;
    };
    const plain = await once(false);
    const marked = await once(true);
    return { plain, marked };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function printOverlayCost(clip: string): Promise<void> {
  process.stdout.write('watermark overlay: the ladder without and with a mark... ');
  const o = await overlayCost(clip, seconds);
  console.log(`${f1(o.plain)} s / ${f1(o.marked)} s`);
  console.log(`  ladder with a watermark / plain ladder     ${f1(o.marked)} / ${f1(o.plain)} s = ${f2(o.marked / o.plain)}x   (goal ≤ 1.10x)`);
}

async function pipeline(stack: Stack, clip: string): Promise<{ id: string; uuid: string; ready: number; all: number }> {
  const { id } = await uploadFormA(stack, clip, { complete: false });
  const t0 = performance.now();
  await stack.post('/v1/upload/complete', { video_id: id }).expect(202);
  const v = await waitForVideo(stack, id, isStatus('ready'), 3_600_000);
  const ready = (performance.now() - t0) / 1000;
  await waitForVideo(stack, id, allRenditionsReady, 7_200_000);
  return { id, uuid: v.uuid, ready, all: (performance.now() - t0) / 1000 };
}

/** A transcode worker process pinned to one core, one activity at a time. */
function pinnedWorker(env: Record<string, string>, core: number): Proc {
  return spawnGroup(`worker-core${core}`, 'workers/main.ts', { ...env, WORKER_ROLES: 'transcode', TRANSCODE_CONCURRENCY: '1', LOG_LEVEL: 'warn' }, [], ['taskset', '-c', String(core)]);
}

/** encodeChunk durations (s) from the video's history: started → completed. */
async function chunkTimes(stack: Stack, uuid: string): Promise<number[]> {
  const events = await allRunEvents(stack, `video-${uuid}`);
  const byId = new Map(events.map((e) => [String(e.eventId), e]));
  const ms = (e: (typeof events)[number] | undefined) => {
    const t = e?.eventTime;
    return t ? Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6 : 0;
  };
  const times: number[] = [];
  for (const e of events) {
    const done = e.activityTaskCompletedEventAttributes;
    if (!done) continue;
    const sched = byId.get(String(done.scheduledEventId));
    if (sched?.activityTaskScheduledEventAttributes?.activityType?.name !== 'encodeChunk') continue;
    times.push((ms(e) - ms(byId.get(String(done.startedEventId)))) / 1000);
  }
  return times;
}

async function partOne(): Promise<void> {
  process.stdout.write(`generating a ${seconds} s 1080p H.264/AAC clip (${content}, ${f1(bitrate / 1e6)} Mb/s)... `);
  // 6 Mb/s: a typical 1080p upload, within the passthrough's bitrate rule (ultrafast's default ~13 Mb/s is not).
  const clip = await makeClip({ width: 1920, height: 1080, seconds, videoBitrate: bitrate, content });
  console.log(`${(fs.statSync(clip).size / 1e6).toFixed(1)} MB`);
  if (overlayOnly) return printOverlayCost(clip);
  const stack = await startStack({ env: { TRANSCODE_PASSTHROUGH: String(passthrough), X264_PRESET: preset, LOG_LEVEL: 'warn', TRANSCODE_CONCURRENCY: String(os.availableParallelism()), RATE_LIMIT_PER_MINUTE: '100000' } });
  const rows: Array<{ floor: number; ready: number; all: number }> = [];
  for (let i = 0; i < runs; i++) {
    process.stdout.write(`run ${i + 1}/${runs}: floor (single ffmpeg, whole ladder)... `);
    const f = await floor(clip, seconds);
    console.log(`${f1(f.wall)} s`);
    process.stdout.write('           pipeline (API → Temporal → activities)... ');
    const p = await pipeline(stack, clip);
    console.log(`ready ${f1(p.ready)} s, every rendition ${f1(p.all)} s`);
    rows.push({ floor: f.wall, ready: p.ready, all: p.all });
  }
  const f = median(rows.map((r) => r.floor));
  const ready = median(rows.map((r) => r.ready));
  const all = median(rows.map((r) => r.all));
  console.log('');
  console.log(`PART 1: preset ${preset}, ${os.availableParallelism()} cores, ${seconds} s 1080p source (${content}, ${f1(bitrate / 1e6)} Mb/s), passthrough ${passthrough ? 'on' : 'off'}, median of ${runs}`);
  console.log(`  single-pass floor            ${f1(f)} s   1.00x`);
  console.log(`  playable (ready)             ${f1(ready)} s   ${f2(ready / f)}x   (goal ≤ 0.07x)`);
  console.log(`  every rendition done         ${f1(all)} s   ${f2(all / f)}x   (goal ≤ 1.10x)`);
  console.log('');
  await stack.close();
}

async function partTwo(): Promise<void> {
  process.stdout.write(`generating a ${longSeconds} s 1080p H.264/AAC clip... `);
  const clip = await makeClip({ width: 1920, height: 1080, seconds: longSeconds, videoBitrate: 6_000_000 });
  console.log(`${(fs.statSync(clip).size / 1e6).toFixed(1)} MB`);
  const env = { X264_PRESET: preset, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000', TRANSCODE_CHUNK_SECONDS: String(chunkSeconds), TRANSCODE_CHUNK_THRESHOLD_SECONDS: String(Math.min(120, chunkSeconds * 2)) };
  // Orchestration in this process (unpinned, light); ffmpeg only in the pinned worker processes.
  const stack = await startStack({ workers: ['workflow'], env });
  process.stdout.write('floor (single ffmpeg, whole ladder, unpinned)... ');
  const fl = await floor(clip, longSeconds);
  console.log(`${f1(fl.wall)} s wall, ${f1(fl.cpu)} s CPU`);

  const runWith = async (cores: number[]) => {
    const workers = cores.map((c) => pinnedWorker(stack.env, c));
    await new Promise((r) => setTimeout(r, 3000)); // let them poll
    const cpu0 = machineCpu();
    try {
      const p = await pipeline(stack, clip);
      const cpu = machineCpu() - cpu0;
      return { ...p, cpu, chunks: await chunkTimes(stack, p.uuid) };
    } finally {
      await Promise.all(workers.map((w) => w.kill('SIGTERM')));
    }
  };
  process.stdout.write('1 worker pinned to core 0... ');
  const one = await runWith([0]);
  console.log(`ready ${f1(one.ready)} s, ladder ${f1(one.all)} s, ${one.chunks.length} chunks`);
  process.stdout.write('2 workers pinned to cores 0 and 1... ');
  const two = await runWith([0, 1]);
  console.log(`ready ${f1(two.ready)} s, ladder ${f1(two.all)} s`);

  const perChunk = median(one.chunks);
  const overhead = Math.max(0, one.all - one.chunks.reduce((a, b) => a + b, 0));
  const estimate = (workers: number) => {
    const chunks = Math.ceil(7200 / chunkSeconds);
    // Per-chunk time scales with chunk length; chunks are spread evenly; fixed overhead as measured.
    return overhead + Math.ceil(chunks / workers) * perChunk * (chunkSeconds / (longSeconds / Math.max(1, one.chunks.length)));
  };
  console.log('');
  console.log(`PART 2: preset ${preset}, ${longSeconds} s 1080p source, chunks of ~${chunkSeconds} s, one run`);
  console.log(`  2 pinned workers / 1 pinned worker (ladder)   ${f1(two.all)} / ${f1(one.all)} s = ${f2(two.all / one.all)}x   (goal ≤ 0.60x)`);
  console.log(`  chunked ladder CPU / floor CPU (machine-wide) ${f1(one.cpu)} / ${f1(fl.cpu)} s = ${f2(one.cpu / fl.cpu)}x   (goal ≤ 1.15x)`);
  console.log(`  time to ready (1 worker / 2 workers)          ${f1(one.ready)} s / ${f1(two.ready)} s`);
  console.log(`  per-chunk encode (1 core): median ${f1(perChunk)} s, min ${f1(Math.min(...one.chunks))} s, max ${f1(Math.max(...one.chunks))} s; fixed overhead ${f1(overhead)} s`);
  console.log(`  paper estimate, 2-hour 1080p source (${Math.ceil(7200 / chunkSeconds)} chunks), one core per worker:`);
  for (const n of [1, 10, 100]) console.log(`    ${String(n).padStart(3)} workers: ${f1(estimate(n) / 60)} min`);
  await stack.close();
}

async function main(): Promise<void> {
  await partOne();
  if (overlayOnly) return;
  await printOverlayCost(await makeClip({ width: 1920, height: 1080, seconds, videoBitrate: bitrate, content }));
  if (scale) await partTwo();
}

runMain(main);
