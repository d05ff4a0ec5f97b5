/**
 * Live figures (issues 23 and 35), from ONE run of this script; only meaningful on a quiet machine.
 *
 *   1. Glass to glass, read off the decoded picture (test/live/clock.ts): the camera paints
 *      Date.now() into every frame, the viewer's Chromium reads it back off each decoded frame;
 *      the median over `--samples` seconds of frames, for:
 *      - `latency_mode: standard` (2 s segments), an ffmpeg camera over RTMP, hls.js;
 *      - `low` (LL-HLS from the edge), the same camera, hls.js `lowLatencyMode`;
 *      - WHEP: a Chromium camera (canvas) over WHIP, another tab over WHEP;
 *      - the floor: the same camera as plain ffmpeg writing 1 s HLS segments to a static server;
 *      - `low` while a 1080p VOD ladder encodes (at the VOD niceness, MEDIA_FFMPEG_NICE), and the
 *        same with the VOD encode at niceness 0 (what item 4 changes).
 *   2. The live ladder's CPU: 720p30 in, 3 encoded rungs (the worst case), on ONE core (taskset):
 *      real-time factor and CPU seconds per media second, hence the concurrent 720p broadcasts
 *      this machine holds at real time (cores / CPU per media second).
 *
 *   LIVE_EDGE_PATH=… npm run bench:live -- [--samples 10] [--rtf-seconds 20]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { liveFfmpegArgs, planLiveLadder } from '../lib/live/ladder';
import { clockFfmpeg, clockSite, median } from '../test/live/clock';
import { type LiveStack, startEdge, startLiveStack, waitFor } from '../test/live/helpers';
import { whepIn } from '../test/live/whep-page';
import { runMain } from '../test/support/main';

const argv = process.argv.slice(2);
const arg = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
const samples = Number(arg('samples', '10'));
const rtfSeconds = Number(arg('rtf-seconds', '20'));
const ARGS = ['--no-sandbox', '--disable-gpu', '--autoplay-policy=no-user-gesture-required', '--use-fake-ui-for-media-stream'];
type Win = Window & { g2g: number[]; clockReads: number[] };

interface Figure {
  medianMs: number;
  p90Ms: number;
  n: number;
}

/** Waits for the clock to be read, then takes `samples` seconds of frames. */
async function measure(tab: import('playwright-core').Page): Promise<Figure> {
  try {
    await tab.waitForFunction(() => (window as unknown as Win).clockReads?.length > 10, undefined, { timeout: 90_000, polling: 250 });
  } catch {
    // Nothing played within 90 s (the pipeline fell behind real time): a figure of its own.
    return { medianMs: NaN, p90Ms: NaN, n: 0 };
  }
  // Let the player settle at its distance from the edge first.
  await new Promise((r) => setTimeout(r, 4000));
  await tab.evaluate(() => ((window as unknown as Win).g2g = []));
  await new Promise((r) => setTimeout(r, samples * 1000));
  const xs = await tab.evaluate(() => (window as unknown as Win).g2g.slice());
  const sorted = [...xs].sort((a, b) => a - b);
  return { medianMs: median(xs), p90Ms: sorted[Math.floor(sorted.length * 0.9)] ?? NaN, n: xs.length };
}

async function endBroadcast(s: LiveStack, id: string, videoId: string | null): Promise<number> {
  await s.post(`/v1/live-streams/${id}/complete`).expect(200);
  const t0 = Date.now();
  if (videoId) await waitFor('ready', async () => (await s.get(`/v1/videos/${videoId}`).expect(200)).body.status === 'ready', 60_000, 100);
  const ms = Date.now() - t0;
  await waitFor('idle', async () => (await s.get(`/v1/live-streams/${id}`).expect(200)).body.status === 'idle', 60_000);
  return ms;
}

/** An ffmpeg camera over RTMP into a stream of `mode`, watched in hls.js. */
async function hlsRun(s: LiveStack, browser: Browser, site: Awaited<ReturnType<typeof clockSite>>, mode: 'standard' | 'low'): Promise<Figure & { endToReadyMs: number }> {
  const ls = (await s.post('/v1/live-streams', { visibility: 'public', latency_mode: mode, reconnect_window: 0 }).expect(201)).body;
  const cam = clockFfmpeg(['-f', 'flv', `${s.rtmpBase}/${ls.stream_key}`], { seconds: 600, gop: mode === 'low' ? 1 : 2, preset: 'veryfast' });
  const tab = await browser.newPage();
  try {
    const active = await waitFor('active', async () => {
      const r = (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body;
      return r.status === 'active' && r;
    }, 120_000);
    // Low mode: wait until the master is the edge's LL-HLS one.
    if (mode === 'low') await waitFor('LL-HLS master', async () => (await (await fetch(ls.hls_url)).text()).includes('ll/'), 30_000);
    await tab.goto(site.hls(ls.hls_url));
    const f = await measure(tab);
    cam.stop();
    return { ...f, endToReadyMs: await endBroadcast(s, ls.id, active.active_video_id) };
  } finally {
    cam.stop();
    await tab.close();
  }
}

/** A Chromium camera over WHIP, another tab over WHEP. */
async function whepRun(s: LiveStack, browser: Browser, site: Awaited<ReturnType<typeof clockSite>>): Promise<Figure> {
  const ls = (await s.post('/v1/live-streams', { visibility: 'public', latency_mode: 'low', reconnect_window: 0 }).expect(201)).body;
  const pub = await browser.newPage();
  const tab = await browser.newPage();
  try {
    await pub.goto(`${site.base}/blank`);
    await pub.evaluate(async ([url, key]) => {
      const w = window as unknown as { vhWhip: (u: string, k: string, st: MediaStream) => Promise<unknown>; vhClock: { camera(fps: number): MediaStream } };
      await w.vhWhip(url, key, w.vhClock.camera(30));
    }, [ls.ingest.whip_url, ls.stream_key]);
    const active = await waitFor('active', async () => {
      const r = (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body;
      return r.status === 'active' && r;
    }, 120_000);
    await tab.goto(`${site.base}/blank`);
    await tab.evaluate(async (url) => {
      const w = window as unknown as { vhWhep: (u: string, v: HTMLVideoElement) => Promise<unknown>; vhMeasure: (v: HTMLVideoElement) => void };
      const v = document.getElementById('v') as HTMLVideoElement;
      await w.vhWhep(url, v);
      w.vhMeasure(v);
    }, ls.webrtc_url);
    const f = await measure(tab);
    await endBroadcast(s, ls.id, active.active_video_id);
    return f;
  } finally {
    await Promise.all([pub.close(), tab.close()]);
  }
}

/**
 * An OBS-style ffmpeg camera over RTMP, or the same over SRT (x264 with B-frames, 2 s keyframes, AAC) watched over WHEP:
 * WHEP cannot forward that source, so it plays the WebRTC rendition the session's ffmpeg makes
 * (lib/live/webrtc.ts; SPEC §22 "every broadcast plays over WHEP").
 */
async function encoderWhepRun(s: LiveStack, browser: Browser, site: Awaited<ReturnType<typeof clockSite>>, srt?: (key: string) => string): Promise<Figure> {
  const ls = (await s.post('/v1/live-streams', { visibility: 'public', latency_mode: 'low', reconnect_window: 0 }).expect(201)).body;
  // The same encoder settings over SRT (MPEG-TS, as a hardware encoder sends it) or RTMP (FLV, as OBS).
  const out = srt ? ['-f', 'mpegts', srt(ls.stream_key)] : ['-f', 'flv', `${s.rtmpBase}/${ls.stream_key}`];
  const cam = clockFfmpeg(['-bf', '2', '-g', '60', ...out], { seconds: 600, gop: 2, preset: 'veryfast' });
  const tab = await browser.newPage();
  try {
    const active = await waitFor('active', async () => {
      const r = (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body;
      return r.status === 'active' && r;
    }, 120_000);
    await tab.goto(`${site.base}/blank`);
    await whepIn(tab, ls.webrtc_url);
    const f = await measure(tab);
    cam.stop();
    await endBroadcast(s, ls.id, active.active_video_id);
    return f;
  } finally {
    cam.stop();
    await tab.close();
  }
}

/** The floor: the same camera as plain ffmpeg writing 1 s HLS segments, served statically. */
async function floorRun(browser: Browser, site: Awaited<ReturnType<typeof clockSite>>): Promise<Figure> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-live-floor-'));
  const server = http.createServer((req, res) => {
    const file = path.join(dir, path.basename(new URL(req.url ?? '/', 'http://x').pathname));
    res.setHeader('Access-Control-Allow-Origin', '*');
    fs.readFile(file, (err, body) => (err ? res.writeHead(404).end() : res.writeHead(200, { 'Cache-Control': 'no-cache' }).end(body)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const cam = clockFfmpeg(['-f', 'hls', '-hls_time', '1', '-hls_list_size', '6', '-hls_flags', 'delete_segments+independent_segments', path.join(dir, 'index.m3u8')], { seconds: 600, gop: 1, preset: 'veryfast' });
  const tab = await browser.newPage();
  try {
    await waitFor('floor playlist', async () => fs.existsSync(path.join(dir, 'index.m3u8')), 30_000);
    await tab.goto(site.hls(`http://127.0.0.1:${(server.address() as AddressInfo).port}/index.m3u8`));
    return await measure(tab);
  } finally {
    cam.stop();
    await tab.close();
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A 1080p VOD ladder (1080p/720p/480p, x264 veryfast) encoding as fast as it can, at `nice`. */
function vodLoad(nice: number): ChildProcess {
  const args = [
    '-n', String(nice), 'ffmpeg', '-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=1920x1080:rate=30', '-t', '900',
    '-filter_complex', '[0:v]split=3[a][b][c];[b]scale=1280:720[b2];[c]scale=854:480[c2]',
    '-map', '[a]', '-c:v', 'libx264', '-preset', 'veryfast', '-f', 'null', '-',
    '-map', '[b2]', '-c:v', 'libx264', '-preset', 'veryfast', '-f', 'null', '-',
    '-map', '[c2]', '-c:v', 'libx264', '-preset', 'veryfast', '-f', 'null', '-',
  ];
  return spawn('nice', args, { stdio: 'ignore' });
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

const sec = (f: Figure) => (f.n ? `${(f.medianMs / 1000).toFixed(2)} s (p90 ${(f.p90Ms / 1000).toFixed(2)} s, ${f.n} frames)` : 'no clock read within 90 s');

async function main(): Promise<void> {
  const rtf = await realTimeFactor();
  console.log(`live ladder 720p30 → ${rtf.rungs.join('/')} on one core: ${rtf.rtf.toFixed(2)}× real time, ${rtf.cpuPerMediaSecond.toFixed(2)} CPU s per media s`);
  const s = await startLiveStack({ env: { LIVE_SEGMENT_SECONDS: '2', LIVE_LOW_LATENCY_SEGMENT_SECONDS: '1', LIVE_X264_PRESET: 'veryfast' } });
  const edge = await startEdge(s, { LIVE_INGEST_HOST: '0.0.0.0' });
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ARGS });
  const site = await clockSite(s.url);
  try {
    const floor = await floorRun(browser, site);
    console.log(`floor: ${sec(floor)}`);
    const standard = await hlsRun(s, browser, site, 'standard');
    console.log(`standard: ${sec(standard)}`);
    const low = await hlsRun(s, browser, site, 'low');
    console.log(`low: ${sec(low)}`);
    const whep = await whepRun(s, browser, site);
    console.log(`whep: ${sec(whep)}`);
    const rtmpWhep = await encoderWhepRun(s, browser, site);
    console.log(`rtmp (B-frames) → whep: ${sec(rtmpWhep)}`);
    const srtWhep = await encoderWhepRun(s, browser, site, edge.url);
    console.log(`srt (B-frames) → whep: ${sec(srtWhep)}`);
    const loaded: Record<number, Figure> = {};
    for (const nice of [s.config.media.nice, 0]) {
      const vod = vodLoad(nice);
      try {
        loaded[nice] = await hlsRun(s, browser, site, 'low');
      } finally {
        vod.kill('SIGKILL');
      }
      console.log(`low while a 1080p VOD ladder encodes at nice ${nice}: ${sec(loaded[nice])}`);
    }
    const cores = os.availableParallelism();
    console.log(`\nlive bench (clock camera 640x360@30; machine: ${cores} cores, load average ${os.loadavg()[0].toFixed(1)} at the end)`);
    console.log('| figure | value | goal |');
    console.log('|---|---|---|');
    console.log(`| glass to glass, standard (RTMP in, HLS 2 s segments, hls.js) | ${sec(standard)} | ≤ 10 s |`);
    console.log(`| glass to glass, low (RTMP in, LL-HLS, hls.js lowLatencyMode) | ${sec(low)} | ≤ 2 s |`);
    console.log(`| glass to glass, WHEP (Chromium WHIP in, WHEP out) | ${sec(whep)} | ≤ 1 s |`);
    console.log(`| glass to glass, WHEP of an OBS-style RTMP source (B-frames, 2 s GOP; the WebRTC rendition) | ${sec(rtmpWhep)} | ≤ 1 s |`);
    console.log(`| glass to glass, WHEP of the same source over SRT (MPEG-TS; the WebRTC rendition) | ${sec(srtWhep)} | ≤ 1 s |`);
    console.log(`| glass to glass, floor (plain ffmpeg 1 s HLS, static server, hls.js) | ${sec(floor)} | – |`);
    console.log(`| glass to glass, low while a 1080p VOD ladder encodes (VOD at nice ${s.config.media.nice}) | ${sec(loaded[s.config.media.nice])} | ≤ 3 s |`);
    console.log(`| the same, VOD at nice 0 (before item 4) | ${sec(loaded[0])} | – |`);
    console.log(`| live ladder 720p30 → ${rtf.rungs.join('/')} on one core | ${rtf.rtf.toFixed(2)}× real time | ≥ 1.0× |`);
    console.log(`| CPU seconds per media second (that ladder: CPU per 720p broadcast) | ${rtf.cpuPerMediaSecond.toFixed(2)} | – |`);
    console.log(`| concurrent 720p broadcasts at real time (${cores} cores / CPU per second) | ${Math.floor(cores / rtf.cpuPerMediaSecond)} | – |`);
    console.log(`| end of broadcast → recording ready (standard, low) | ${standard.endToReadyMs} ms, ${low.endToReadyMs} ms | ≤ 10 s |`);
  } finally {
    await browser.close();
    site.close();
    await edge.stop();
    await s.close();
  }
}

runMain(main);
