/**
 * Live figures (issue 23), from ONE run of this script; only meaningful on a quiet machine.
 *
 *   1. Glass-to-glass latency in Chromium, `Date.now() − hls.playingDate` (median of `--samples`
 *      samples, one a second), for `latency_mode: standard` (2 s segments) and `low` (1 s),
 *      with ffmpeg pushing `--size` at `--fps` over RTMP; then `complete` → recording `ready`.
 *   2. Real-time factor of the live ladder (720p30 in, 3 encoded rungs, no passthrough: the
 *      worst case) on ONE core (taskset -c 0): media seconds / wall seconds, and the CPU seconds
 *      per media second, from which the concurrent 720p broadcasts this machine holds.
 *
 *   npm run bench:live -- [--seconds 40] [--samples 10] [--size 1280x720] [--fps 30] [--rtf-seconds 20]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { liveFfmpegArgs, planLiveLadder } from '../lib/live/ladder';
import { hlsPage, pushRtmp, startLiveStack, waitFor } from '../test/live/helpers';
import { runMain } from '../test/support/main';

const argv = process.argv.slice(2);
const arg = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
const seconds = Number(arg('seconds', '40'));
const samples = Number(arg('samples', '10'));
const size = arg('size', '1280x720');
const fps = Number(arg('fps', '30'));
const rtfSeconds = Number(arg('rtf-seconds', '20'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function latency(mode: 'standard' | 'low'): Promise<{ medianMs: number; samples: number[]; endToReadyMs: number }> {
  const s = await startLiveStack({ env: { LIVE_SEGMENT_SECONDS: '2', LIVE_LOW_LATENCY_SEGMENT_SECONDS: '1', LIVE_X264_PRESET: 'veryfast' } });
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--autoplay-policy=no-user-gesture-required'] });
  const page = await hlsPage(s.url);
  try {
    const ls = (await s.post('/v1/live-streams', { visibility: 'public', latency_mode: mode }).expect(201)).body;
    const push = pushRtmp(`${s.rtmpBase}/${ls.stream_key}`, { seconds: seconds + 60, size, fps });
    const active = await waitFor('active', async () => {
      const r = (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body;
      return r.status === 'active' && r;
    }, 180_000);
    const tab = await browser.newPage();
    await tab.goto(page.url(ls.hls_url));
    await tab.waitForFunction(() => (document.getElementById('v') as HTMLVideoElement).currentTime > 2, undefined, { timeout: 60_000 });
    const xs: number[] = [];
    for (let i = 0; i < samples; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      xs.push(await tab.evaluate(() => Date.now() - (window as unknown as { hls: { playingDate: Date } }).hls.playingDate.getTime()));
    }
    await s.post(`/v1/live-streams/${ls.id}/complete`).expect(200);
    const t0 = Date.now();
    await waitFor('ready', async () => (await s.get(`/v1/videos/${active.active_video_id}`).expect(200)).body.status === 'ready', 60_000, 100);
    const endToReadyMs = Date.now() - t0;
    push.stop();
    return { medianMs: median(xs), samples: xs, endToReadyMs };
  } finally {
    await browser.close();
    page.close();
    await s.close();
  }
}

/** The live ladder's ffmpeg on a generated 720p30 feed, pinned to one core. */
async function realTimeFactor(): Promise<{ rtf: number; cpuPerMediaSecond: number; rungs: string[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-live-bench-'));
  const rungs = planLiveLadder({ videoCodec: 'h264', audioCodec: 'aac', width: 1280, height: 720, fps: 30, bitrate: null }, { passthrough: false });
  for (const r of rungs) fs.mkdirSync(path.join(dir, r.name));
  const args = liveFfmpegArgs({ input: 'INPUT', dir, rungs, startNumbers: {}, segmentSeconds: 2, preset: 'veryfast', hasAudio: true });
  const i = args.indexOf('-i');
  // The same outputs as a broadcast's session; the input is generated instead of read from RTMP.
  const t = String(rtfSeconds);
  const input = ['-t', t, '-f', 'lavfi', '-i', 'testsrc2=size=1280x720:rate=30,format=yuv420p', '-t', t, '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000'];
  const full = ['-hide_banner', '-loglevel', 'error', '-nostats', ...input, ...args.slice(i + 2)].map((a) => (a === '0:a:0' ? '1:a:0' : a));
  const started = Date.now();
  const { cpu } = await new Promise<{ cpu: number }>((resolve, reject) => {
    const child = spawn('bash', ['-c', 'TIMEFORMAT="%U %S"; time taskset -c 0 ffmpeg "$@" >/dev/null 2>/dev/null', 'bash', ...full], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => {
      const m = /([\d.]+) ([\d.]+)\s*$/.exec(err.trim());
      if (code !== 0 || !m) return reject(new Error(`ffmpeg failed: ${err.slice(-500)}`));
      resolve({ cpu: Number(m[1]) + Number(m[2]) });
    });
  });
  const wall = (Date.now() - started) / 1000;
  fs.rmSync(dir, { recursive: true, force: true });
  return { rtf: rtfSeconds / wall, cpuPerMediaSecond: cpu / rtfSeconds, rungs: rungs.map((r) => r.name) };
}

async function main(): Promise<void> {
  const rtf = await realTimeFactor();
  console.log(`live ladder 720p30 → ${rtf.rungs.join('/')} on one core: ${rtf.rtf.toFixed(2)}× real time, ${rtf.cpuPerMediaSecond.toFixed(2)} CPU s per media s`);
  const standard = await latency('standard');
  const low = await latency('low');
  const cores = os.availableParallelism();
  console.log(`\nlive bench (${size}@${fps} pushed; machine: ${cores} cores, shared)`);
  console.log('| figure | value | goal |');
  console.log('|---|---|---|');
  console.log(`| glass-to-glass, standard (median of ${samples}) | ${(standard.medianMs / 1000).toFixed(1)} s | ≤ 10 s |`);
  console.log(`| glass-to-glass, low (median of ${samples}) | ${(low.medianMs / 1000).toFixed(1)} s | ≤ 4 s |`);
  console.log(`| live ladder real-time factor, 720p30 → ${rtf.rungs.join('/')} on one core | ${rtf.rtf.toFixed(2)}× | ≥ 1.0× |`);
  console.log(`| CPU seconds per media second (that ladder) | ${rtf.cpuPerMediaSecond.toFixed(2)} | – |`);
  console.log(`| concurrent 720p broadcasts at real time (${cores} cores / CPU per second) | ${Math.floor(cores / rtf.cpuPerMediaSecond)} | – |`);
  console.log(`| end of broadcast → recording ready (standard, low) | ${standard.endToReadyMs} ms, ${low.endToReadyMs} ms | ≤ 10 s |`);
  console.log(`\nsamples (ms): standard ${standard.samples.join(', ')}; low ${low.samples.join(', ')}`);
}

runMain(main);
