/**
 * The added cost of each extra audio track to the ladder time (SPEC §19), as a ratio, through the
 * real pipeline (API, Temporal, activities, storage, in-process workers):
 *
 *   ladder(N) = upload complete → every rendition ready, for the same video with N audio streams;
 *   ratio per extra track = (ladder(N) − ladder(1)) / (N − 1) / ladder(1).
 *
 * Every source stream is measured (EBU R128) and encoded once as its own rendition, beside the
 * video rungs, so on an idle multi-core machine the wall time barely moves; the second figure is
 * what a track really costs, in CPU seconds, against the video ladder's encode (both plain ffmpeg,
 * the same arguments as the activities, timed by bash's `times`):
 *
 *   cpu ratio = CPU(loudness pass + one AAC rendition) / CPU(every video rung from one decode)
 *
 * Numbers are only meaningful on a quiet machine.
 *
 *   npm run bench:audio -- [--seconds 20] [--height 720] [--tracks 1,2,4] [--runs 1] [--cpu-only]
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { GLOBAL_ARGS } from '../lib/media/args';
import { audioRenditionArgs, loudnessArgs } from '../lib/media/audio';
import { chunkLadderArgs } from '../lib/media/chunks';
import { planLadder } from '../lib/media/ladder';
import { putFile, waitForVideo } from '../test/support/flow';
import { startStack, type Stack } from '../test/support/stack';
import { runMain } from '../test/support/main';

const run = promisify(execFile);
const argv = process.argv.slice(2);
const arg = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
const seconds = Number(arg('seconds', '20'));
const height = Number(arg('height', '720'));
const trackCounts = arg('tracks', '1,2,4').split(',').map(Number);
const runs = Number(arg('runs', '1'));

async function source(tracks: number): Promise<string> {
  const file = path.join(os.tmpdir(), `vidhost-bench-audio-${height}p-${seconds}s-${tracks}a.mkv`);
  if (fs.existsSync(file)) return file;
  const width = Math.round((height * 16) / 9 / 2) * 2;
  const args = ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=size=${width}x${height}:rate=30:duration=${seconds}`];
  for (let i = 0; i < tracks; i++) args.push('-f', 'lavfi', '-i', `sine=frequency=${300 + 100 * i}:sample_rate=48000:duration=${seconds},aformat=channel_layouts=stereo`);
  args.push('-map', '0:v');
  for (let i = 0; i < tracks; i++) args.push('-map', `${i + 1}:a`, `-metadata:s:a:${i}`, `language=${['eng', 'fre', 'spa', 'ger', 'ita', 'jpn'][i % 6]}`);
  args.push('-c:v', 'libx264', '-preset', 'ultrafast', '-g', '60', '-c:a', 'aac', '-b:a', '128k', file);
  await run('ffmpeg', args);
  return file;
}

async function ladderSeconds(s: Stack, file: string): Promise<number> {
  const size = fs.statSync(file).size;
  const init = await s.post('/v1/upload/init', { filename: path.basename(file), size, content_type: 'video/x-matroska' }).expect(201);
  await putFile(init.body.upload_url, file, 'video/x-matroska', init.body.upload_headers);
  const t0 = performance.now();
  await s.post('/v1/upload/complete', { video_id: init.body.video_id }).expect(202);
  const v = await waitForVideo(s, init.body.video_id, (x) => x.status === 'failed' || (x.status === 'ready' && x.renditions.every((r: { status: string }) => r.status === 'ready')), 1_800_000);
  if (v.status !== 'ready') throw new Error(`bench video failed: ${JSON.stringify(v)}`);
  return (performance.now() - t0) / 1000;
}

/** User + system CPU seconds of one ffmpeg run (its children's times, as bash reports them). */
async function cpuSeconds(args: string[]): Promise<number> {
  const { stdout } = await run('bash', ['-c', 'ffmpeg "$@" >/dev/null 2>&1; times', '_', ...args]);
  const children = stdout.trim().split('\n')[1] ?? '';
  return [...children.matchAll(/(\d+)m([\d.]+)s/g)].reduce((sum, m) => sum + Number(m[1]) * 60 + Number(m[2]), 0);
}

async function cpuRatio(file: string): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-bench-audio-'));
  try {
    const rungs = planLadder({ width: Math.round((height * 16) / 9 / 2) * 2, height });
    for (const r of rungs) fs.mkdirSync(path.join(dir, r.name));
    const ladder = await cpuSeconds(['-y', ...chunkLadderArgs({ input: file, outputRoot: dir, rungs, chunk: { index: 0, start: 0, end: null }, hasAudio: false, segmentSeconds: 6, fps: 30, preset: 'veryfast' }).slice(GLOBAL_ARGS.length)]);
    const measure = await cpuSeconds(loudnessArgs({ input: file, stream: 0 }).slice(7));
    fs.mkdirSync(path.join(dir, 'a0'));
    const encode = await cpuSeconds(audioRenditionArgs({ input: file, outputDir: path.join(dir, 'a0'), stream: 0, channels: 2, bitrate: 128_000, segmentSeconds: 6 }).slice(GLOBAL_ARGS.length));
    console.log(`CPU: video ladder ${ladder.toFixed(2)} s; one audio track ${(measure + encode).toFixed(2)} s (loudness ${measure.toFixed(2)} + AAC ${encode.toFixed(2)}); ratio ${((measure + encode) / ladder).toFixed(3)} per track`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  await cpuRatio(await source(1));
  if (argv.includes('--cpu-only')) return;
  const s = await startStack({ env: { X264_PRESET: 'veryfast' } });
  const times = new Map<number, number>();
  for (const n of trackCounts) {
    const file = await source(n);
    const samples: number[] = [];
    for (let r = 0; r < runs; r++) samples.push(await ladderSeconds(s, file));
    samples.sort((a, b) => a - b);
    times.set(n, samples[Math.floor(samples.length / 2)]);
    console.log(`${n} audio track(s): ladder ${times.get(n)!.toFixed(2)} s (median of ${runs})`);
  }
  const base = times.get(trackCounts[0])!;
  for (const n of trackCounts.slice(1)) {
    const perTrack = (times.get(n)! - base) / (n - trackCounts[0]) / base;
    console.log(`${n} tracks vs ${trackCounts[0]}: ×${(times.get(n)! / base).toFixed(3)} the ladder time; +${(perTrack * 100).toFixed(1)}% per extra track (ratio ${perTrack.toFixed(3)})`);
  }
  await s.close();
}

runMain(main);
