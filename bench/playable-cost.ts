// bench/playable.ts's cost of on-request rungs, by the bare ffmpeg the CDN runs (onRequestEncodeArgs),
// outside the stack: the CPU of one segment after a seek (where in its GOP it starts), of a
// viewer playing on (the cutter's runs: the asked segment, then look-ahead reaching on to a
// keyframe), and how many viewers of distinct positions one core sustains, measured by running
// them at once pinned to one core (taskset) at the pace of playback.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { JitEncode, JitPlan } from '../lib/media/jit';
import { onRequestEncodeArgs, planEncodeSegments } from '../lib/media/jitEncode';
import type { Rung } from '../lib/media/ladder';
import { mp4KeyframeIndex } from '../lib/media/mp4index';

const run = promisify(execFile);

/** Wall and CPU seconds of one ffmpeg (optionally on core 0 only). */
async function timed(args: string[], pin = false): Promise<{ wall: number; cpu: number }> {
  const cmd = [...(pin ? ['taskset', '-c', '0'] : []), 'ffmpeg', ...args];
  const { stderr } = await run('/usr/bin/time', ['-f', 'TIME %e %U %S', ...cmd], { maxBuffer: 64 * 1024 * 1024 });
  const m = /TIME ([0-9.]+) ([0-9.]+) ([0-9.]+)/.exec(stderr);
  if (!m) throw new Error(`no timing in ${stderr.slice(-300)}`);
  return { wall: Number(m[1]), cpu: Number(m[2]) + Number(m[3]) };
}

export async function planOf(file: string, seconds: number): Promise<Pick<JitPlan, 'boundaries' | 'midGop' | 'durationSeconds'>> {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const r = await mp4KeyframeIndex(async (o, l) => {
      const b = Buffer.alloc(l);
      fs.readSync(fd, b, 0, l, o);
      return b;
    }, size);
    const planned = planEncodeSegments(r.ok ? r.index.keyframes.map((k) => k.time) : [], seconds)!;
    return { ...planned, durationSeconds: seconds };
  } finally {
    fs.closeSync(fd);
  }
}

const encodeOf = (r: Rung, fps: number): JitEncode => ({ width: r.width, height: r.height, videoBitrate: r.videoBitrate, maxrate: r.maxrate, bufsize: r.bufsize, fps, preset: 'veryfast', crf: 23 });

/** Segments `first`…`last` of rung `r` in one ffmpeg, into a temp dir. */
async function cut(file: string, plan: Pick<JitPlan, 'boundaries' | 'midGop' | 'durationSeconds'>, r: Rung, fps: number, first: number, last: number, pin = false) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-bench-onreq-'));
  try {
    const full: JitPlan & { encode: JitEncode } = { version: 1, storageKey: '', demuxer: null, kind: 'video', offset: 0, start: 0, ...plan, encode: encodeOf(r, fps) };
    return await timed(onRequestEncodeArgs({ plan: full, first, last, input: file, outputDir: dir }), pin);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The look-ahead the cutter starts after segment `i` (lib/playback/jit.ts): 2 segments, on to the next keyframe, at most 5. */
function lookaheadEnd(plan: Pick<JitPlan, 'boundaries' | 'midGop'>, i: number): number {
  const n = plan.boundaries.length;
  const mid = new Set(plan.midGop ?? []);
  let last = Math.min(n - 1, i + 2);
  while (last + 1 < n && last < i + 5 && mid.has(last + 1)) last++;
  return last;
}

export type CostReport = {
  rung: string;
  /** CPU and wall seconds of a seek's segment, by its place in the GOP (0 = at a keyframe). */
  seeks: Array<{ offset: number; cpu: number; wall: number }>;
  /** CPU seconds per segment for a viewer playing on: the cutter's runs, and one ffmpeg per segment (before). */
  perSegmentRuns: number;
  perSegmentAlone: number;
  segmentSeconds: number;
  /** Viewers one core sustains by CPU (segment seconds / CPU per segment). */
  byCpu: number;
  /** Pinned to one core at once, at the pace of playback: viewers and the slowest one's pace (≥ 1 keeps up). */
  pinned: Array<{ viewers: number; slowestPace: number }>;
};

/**
 * The costs of rung `r` on `file` (its keyframes from the MP4 index, as prepareOnRequest plans).
 * `playSeconds`: how much each simulated viewer plays.
 */
export async function onRequestCost(file: string, seconds: number, r: Rung, fps: number, playSeconds = 20): Promise<CostReport> {
  const plan = await planOf(file, seconds);
  const b = plan.boundaries;
  const mid = new Set(plan.midGop);
  const segmentSeconds = (b[b.length - 1] - b[0]) / (b.length - 1);
  // Seeks near the end: the segments of the last GOP before the final minute, each where it starts in its GOP.
  let at = b.findIndex((x) => x >= seconds - 70);
  while (at > 0 && mid.has(at)) at--;
  const seeks: CostReport['seeks'] = [];
  for (let i = at; i < b.length && (i === at || mid.has(i)) && seeks.length < 6; i++) {
    const t = await cut(file, plan, r, fps, i, i);
    seeks.push({ offset: b[i] - b[at], cpu: t.cpu, wall: t.wall });
  }
  // A viewer playing `playSeconds` from the middle: the asked segment, then look-ahead runs.
  const from = Math.floor(b.length / 2);
  const count = Math.max(2, Math.round(playSeconds / segmentSeconds));
  let cpuRuns = (await cut(file, plan, r, fps, from, from)).cpu;
  for (let i = from + 1; i < from + count; ) {
    const last = lookaheadEnd(plan, i - 1);
    cpuRuns += (await cut(file, plan, r, fps, i, last)).cpu;
    i = last + 1;
  }
  let cpuAlone = 0;
  for (let i = from; i < from + count; i++) cpuAlone += (await cut(file, plan, r, fps, i, i)).cpu;
  const perSegmentRuns = cpuRuns / count;
  const byCpu = segmentSeconds / perSegmentRuns;
  // At once on core 0: each viewer plays on from its own place; it keeps up if its segments are
  // made at least as fast as they play (after a first segment's allowance).
  const pinned: CostReport['pinned'] = [];
  for (const viewers of [...new Set([Math.max(1, Math.floor(byCpu)), Math.floor(byCpu) + 1])]) {
    const paces = await Promise.all(
      Array.from({ length: viewers }, async (_, v) => {
        const start = Math.floor(((v + 1) * b.length) / (viewers + 2));
        const t0 = performance.now();
        for (let i = start; i < start + count; ) {
          const last = i === start ? i : lookaheadEnd(plan, i - 1);
          await cut(file, plan, r, fps, i, last, true);
          i = last + 1;
        }
        return (count * segmentSeconds) / ((performance.now() - t0) / 1000 - segmentSeconds);
      }),
    );
    pinned.push({ viewers, slowestPace: Math.min(...paces) });
  }
  return { rung: r.name, seeks, perSegmentRuns, perSegmentAlone: cpuAlone / count, segmentSeconds, byCpu, pinned };
}
