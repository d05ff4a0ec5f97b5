/**
 * SPEC §23, playable in seconds at any length: for long 1080p sources made by stream-copying a
 * 10 s clip in a loop, eligible (H.264/AAC) and not (HEVC), prints
 *
 *   - ready: `POST /upload/complete` → the video reads `ready` (polled every 50 ms);
 *   - seek: right after ready, a player's seek to the last minute: master → media playlists →
 *     the video and audio segments at (duration − 60 s), fetched as a player would (both bodies
 *     in full), timed from the master request;
 *   - CPU (machine-wide, /proc/stat) over ready + seek, and the bytes stored under `hls/` then;
 *
 * next to Mux's published 9.0 s median and the single-pass floor (one ffmpeg making the whole
 * ladder: measured on the 10 s clip, scaled by the length, marked "est."). The ladder the
 * pipeline encodes behind `ready` is cancelled (the video is deleted) once measured.
 *
 *   - seeks again: a viewer seeking on to other points (`--seeks`, fractions of the length) while
 *     the ladder encodes behind `ready`, each timed from its segment requests; "worst seek" is
 *     the longest of all (SPEC §23: the playhead never waits more than 2 s);
 *
 *   npm run bench:playable -- [--minutes 10,60,120] [--kinds eligible,hevc] [--bitrate 4000000] [--seeks 0.5,0.25,0.75] [--cut-nice 2] [--vod-nice 10]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { singlePassLadderArgs } from '../lib/media/args';
import { gridJitSegments, JIT_ENCODE_SEGMENT_SECONDS, jitCutArgs } from '../lib/media/jit';
import { planLadder } from '../lib/media/ladder';
import { runFfmpeg } from '../lib/media/run';
import { jitCuts } from '../lib/playback/jit';
import { keys } from '../lib/storage';
import http from 'node:http';
import { allRunEvents } from '../test/support/flow';
import { loopedClip, makeClip } from '../test/support/media';
import { startStack, type Stack } from '../test/support/stack';
import { runMain } from '../test/support/main';

const argv = process.argv.slice(2);
const list = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return (i >= 0 ? argv[i + 1] : fallback).split(',').filter(Boolean);
};
const minutes = list('minutes', '10,60').map(Number);
const kinds = list('kinds', 'eligible,hevc') as Array<'eligible' | 'hevc'>;
const bitrate = Number(list('bitrate', '4000000')[0]);
/** Further seeks after the first, as fractions of the length (each to a segment nobody asked for yet). */
const seekFractions = list('seeks', '0.5,0.25,0.75').map(Number);
/**
 * Niceness (default: the config's): `--cut-nice` sets JIT_CUT_NICE, `--vod-nice` MEDIA_FFMPEG_NICE.
 * `--vod-nice 0` is the scheduling before the cuts came first: every ffmpeg alike (an A/B).
 */
const cutNice: Record<string, string> = {
  ...(argv.includes('--cut-nice') ? { JIT_CUT_NICE: list('cut-nice', '')[0] } : {}),
  ...(argv.includes('--vod-nice') ? { MEDIA_FFMPEG_NICE: list('vod-nice', '')[0] } : {}),
};
const MUX_MEDIAN = 9.0;
const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);
const seconds = (t: number) => `@${Math.round(t)}s`;

function machineCpu(): number {
  const [, user, nice, system, , , irq, softirq, steal] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  return (user + nice + system + irq + softirq + steal) / 100;
}

/** One ffmpeg making the whole 1080p ladder from the 10 s clip (seconds). */
async function floorOfClip(clip: string): Promise<number> {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-bench-floor-'));
  try {
    const t0 = performance.now();
    await runFfmpeg(singlePassLadderArgs({ input: clip, outputRoot: out, rungs: planLadder({ width: 1920, height: 1080 }), hasAudio: true, fps: 24, preset: 'veryfast' }), { durationSeconds: 10 });
    return (performance.now() - t0) / 1000;
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

/**
 * The seek's floor: one HEVC segment encoded to the lowest rung (the cut the CDN makes), by a bare
 * ffmpeg outside the stack at this moment: what the machine gives one such cut with nothing of
 * ours running beside it (seconds).
 */
async function cutFloor(file: string, seconds: number): Promise<number> {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-bench-cut-'));
  try {
    const lowest = planLadder({ width: 1920, height: 1080 })[0];
    const boundaries = gridJitSegments(seconds, JIT_ENCODE_SEGMENT_SECONDS)!;
    const plan = { version: 1 as const, storageKey: '', demuxer: 'mov', kind: 'video' as const, offset: 0.2, boundaries, durationSeconds: seconds, encode: { ...lowest, fps: 24, preset: 'veryfast', crf: null } };
    const index = boundaries.findIndex((b) => b >= seconds - 60);
    const t0 = performance.now();
    await runFfmpeg(jitCutArgs({ plan, index, input: file, outputDir: out }), { durationSeconds: 2 });
    return (performance.now() - t0) / 1000;
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
}

const uris = (text: string) => text.split('\n').filter((l) => l && !l.startsWith('#'));

async function fetchText(url: URL): Promise<string> {
  const r = await fetch(url);
  if (r.status !== 200) throw new Error(`${url} answered ${r.status}`);
  return r.text();
}

/** The segment of a media playlist that holds time `t`. */
function segmentAt(playlist: string, t: number): string {
  let at = 0;
  let pending = 0;
  for (const line of playlist.split('\n')) {
    const inf = /^#EXTINF:([0-9.]+)/.exec(line);
    if (inf) pending = Number(inf[1]);
    else if (line && !line.startsWith('#')) {
      if (at + pending > t) return line;
      at += pending;
    }
  }
  return uris(playlist).at(-1)!;
}

/** Form A with the file streamed (the test helper reads it whole: two-hour sources are 3.7 GB). */
async function streamUpload(s: Stack, file: string): Promise<string> {
  const size = fs.statSync(file).size;
  const init = await s.post('/v1/upload/init', { filename: path.basename(file), size, content_type: 'video/mp4' }).expect(201);
  const url = new URL(init.body.upload_url);
  await new Promise<void>((resolve, reject) => {
    const req = http.request(url, { method: 'PUT', headers: { 'Content-Type': 'video/mp4', 'Content-Length': String(size), ...init.body.upload_headers } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`upload answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    fs.createReadStream(file).pipe(req);
  });
  return init.body.video_id as string;
}

async function measure(s: Stack, file: string, seconds: number) {
  const id = await streamUpload(s, file);
  const cpu0 = machineCpu();
  const t0 = performance.now();
  await s.post('/v1/upload/complete', { video_id: id }).expect(202);
  let v: Record<string, any> = {};
  for (;;) {
    v = (await s.get(`/v1/videos/${id}`)).body;
    if (v.status === 'ready' || v.status === 'failed') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const ready = (performance.now() - t0) / 1000;
  const readyAt = Date.now();
  if (v.status !== 'ready') throw new Error(`video failed: ${v.error_message}`);
  // The CDN reads the row; the API's read may come from the workflow a moment before it.
  while ((await s.db('videos').where({ id: v.uuid }).first('status'))?.status !== 'ready') await new Promise((r) => setTimeout(r, 20));
  const t1 = performance.now();
  const master = new URL(v.hls_url);
  const text = await fetchText(master);
  const variant = new URL(uris(text)[0], master);
  const audioUri = /TYPE=AUDIO,[^\n]*URI="([^"]+)"/.exec(text)?.[1];
  const lists = await Promise.all([variant, ...(audioUri ? [new URL(audioUri, master)] : [])].map(async (u) => ({ u, text: await fetchText(u) })));
  /** The video and audio segments holding `target`, fetched in full at once; ms of each, from `from`. */
  const segmentsAt = (target: number, from: number) =>
    Promise.all(
      lists.map(async ({ u, text: list }) => {
        const seg = new URL(segmentAt(list, target), u);
        const r = await fetch(seg);
        if (r.status !== 200) throw new Error(`${seg} answered ${r.status}`);
        await r.arrayBuffer();
        return performance.now() - from;
      }),
    );
  // The first seek (last minute) is timed from the master request; the others (a viewer seeking
  // again, while the ladder encodes behind `ready`) from their segment requests.
  const cuts0 = { ...jitCuts };
  // The API, the worker and the workflows share this process in the bench: how long its event
  // loop stalled during the first seek (a separate API process would not wait on them).
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const parts = await segmentsAt(seconds - 60, t1);
  loop.disable();
  const seek = (performance.now() - t1) / 1000;
  const again: Array<{ at: number; seconds: number; parts: number[] }> = [];
  for (const f of seekFractions) {
    const t = performance.now();
    const p = await segmentsAt(seconds * f, t);
    again.push({ at: seconds * f, seconds: (performance.now() - t) / 1000, parts: p });
  }
  const cpu = machineCpu() - cpu0;
  const cuts = { made: jitCuts.count - cuts0.count, cancelled: jitCuts.cancelled - cuts0.cancelled };
  const prefix = `${keys.videoPrefix(s.ws.id, v.uuid)}hls/`;
  let cached = 0;
  for (const key of await s.storage.list(prefix)) cached += (await s.storage.head(key))?.size ?? 0;
  // Where the time to ready went: each activity scheduled before `ready`, scheduled → completed.
  const events = await allRunEvents(s, `video-${v.uuid}`);
  const scheduled = new Map<string, { type: string; at: number }>();
  const steps: string[] = [];
  const ms = (t: unknown) => Number((t as { seconds?: { toNumber(): number } | number; nanos?: number }).seconds?.toString() ?? 0) * 1000 + ((t as { nanos?: number }).nanos ?? 0) / 1e6;
  for (const e of events) {
    const type = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (type) scheduled.set(String(e.eventId), { type, at: ms(e.eventTime) });
    const done = e.activityTaskCompletedEventAttributes;
    if (done) {
      const from = scheduled.get(String(done.scheduledEventId));
      if (ms(e.eventTime) > readyAt) break;
      if (from) steps.push(`${from.type} ${((ms(e.eventTime) - from.at) / 1000).toFixed(2)}`);
    }
  }
  await s.del(`/v1/videos/${id}`).expect(204);
  return { ready, seek, parts, loopMaxMs: loop.max / 1e6, again, cuts, cpu, cached, variant: uris(text)[0], steps: steps.join(', ') };
}

async function main(): Promise<void> {
  const s = await startStack({ env: { X264_PRESET: 'veryfast', LOG_LEVEL: 'warn', TRANSCODE_CONCURRENCY: String(os.availableParallelism()), RATE_LIMIT_PER_MINUTE: '100000', ...cutNice } });
  // Two-hour 1080p sources are 3.7 GB: beyond the free plan's 5 GB of storage with a deleted one still counted.
  await s.db('workspaces').where({ id: s.ws.id }).update({ plan: 'business' });
  const clips = {
    eligible: await makeClip({ width: 1920, height: 1080, seconds: 10, gop: 48, videoBitrate: bitrate }),
    hevc: await makeClip({ width: 1920, height: 1080, seconds: 10, gop: 48, codec: 'hevc', videoBitrate: bitrate }),
  };
  const floor10 = await floorOfClip(clips.eligible);
  console.log(`load average at start: ${os.loadavg().map(f2).join(' ')}; floor of the 10 s clip: ${f1(floor10)} s`);
  console.log('| source | length | ready | seek to last minute | worst seek | Mux median | floor (est.) | ready / floor | CPU (ready + seeks) | bytes under hls/ | variant |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const m of minutes) {
    for (const kind of kinds) {
      const file = await loopedClip(clips[kind], m * 6);
      let r: Awaited<ReturnType<typeof measure>>;
      const floorCut = kind === 'hevc' ? await cutFloor(file, m * 60) : null;
      try {
        r = await measure(s, file, m * 60);
      } catch (err) {
        console.log(`| ${kind} | ${m} min | failed: ${(err as Error).message.slice(0, 120)} |`);
        continue;
      }
      const floor = floor10 * m * 6;
      console.log(
        `| ${kind === 'eligible' ? 'H.264/AAC 1080p' : 'HEVC 1080p'} | ${m} min | ${f2(r.ready)} s | ${f2(r.seek)} s | ${f2(Math.max(r.seek, ...r.again.map((a) => a.seconds)))} s | ${f1(MUX_MEDIAN)} s | ${f1(floor)} s | ${(r.ready / floor).toFixed(4)}× | ${f1(r.cpu)} CPU-s | ${(r.cached / 1e6).toFixed(1)} MB | ${r.variant} |`,
      );
      const ms = (p: number[]) => p.map((x) => (x / 1000).toFixed(2)).join('/');
      console.log(`  (seeks, s: ${[`${seconds(m * 60 - 60)} ${f2(r.seek)} (video/audio ${ms(r.parts)}, event loop stalled ≤ ${r.loopMaxMs.toFixed(0)} ms)`, ...r.again.map((a) => `${seconds(a.at)} ${f2(a.seconds)} (${ms(a.parts)})`)].join(', ')}${floorCut === null ? '' : `; one cut alone ${f2(floorCut)} s, worst seek / it ${f2(Math.max(r.seek, ...r.again.map((a) => a.seconds)) / floorCut)}×`}; cuts made ${r.cuts.made}, look-ahead cancelled ${r.cuts.cancelled}; load ${f2(os.loadavg()[0])})`);
      console.log(`  (activities to ready, s: ${r.steps})`);
    }
  }
  await s.close();
}

runMain(main);
