/**
 * SPEC §23, playable in seconds at any length, at full quality (issue 47): for long 1080p sources
 * made by stream-copying a 10 s clip in a loop, prints
 *
 *   - ready: `POST /upload/complete` → the video reads `ready` (polled every 50 ms), and the
 *     variants the master lists then (the first is the one players start with; the tallest);
 *   - players (`--players hls.js,shaka,shaka-10m`): right after ready, hls.js or Shaka Player in Chromium
 *     loads the master and seeks to the last minute at once: the time from the seek to the first
 *     frame presented there, and the height of the rendition that frame came from (goal: ≥ 720p
 *     within 2 s). Each player gets its own upload of the source (the first one's cuts would
 *     otherwise be stored for the second);
 *   - seek: by HTTP on the last player's video, the first variant's (720p for a refused source) and
 *     the audio segment at other points (`--seeks`, fractions of the length), each timed from its
 *     segment requests, while the ladder encodes behind `ready`;
 *   - cost (`--cost 720p,1080p`, on the first length only): what the CDN's on-request encode costs
 *     on this source, by bare ffmpeg: a seek's segment by its place in the GOP, a viewer playing
 *     on (the cutter's runs, against one ffmpeg per segment), and the viewers of distinct
 *     positions one core sustains: by CPU, and run at once pinned to one core (taskset);
 *
 * next to Mux's published 9.0 s median. The ladder behind `ready` is cancelled (the video is
 * deleted) once measured.
 *
 *   npm run bench:playable -- [--minutes 10,60] [--kinds h264-16m,hevc,hevc-gop10] [--players hls.js,shaka,shaka-10m]
 *     [--seeks 0.5,0.25,0.75] [--cost 720p,1080p] [--cut-nice 2] [--vod-nice 10]
 *
 * Kinds: `eligible` (H.264 4 Mb/s, 2 s GOPs: the passthrough takes it), `h264-16m` (H.264 16 Mb/s,
 * 2 s GOPs: refused for its bitrate), `h264-16m-gop10` (the same with 10 s GOPs), `hevc` (4 Mb/s,
 * 2 s GOPs), `hevc-gop10` (10 s GOPs). A source over the 5 GiB upload limit (16 Mb/s for an hour)
 * is skipped, said so.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { chromium, type Browser } from 'playwright-core';
import { planLadder } from '../lib/media/ladder';
import { jitCuts } from '../lib/playback/jit';
import { keys } from '../lib/storage';
import { allRunEvents } from '../test/support/flow';
import { CHROMIUM, CHROMIUM_ARGS } from '../test/support/chromium';
import { loopedClip, makeClip, type ClipOptions } from '../test/support/media';
import { startStack, type Stack } from '../test/support/stack';
import { runMain } from '../test/support/main';
import { onRequestCost, type CostReport } from './playable-cost';
import { seekToLastMinute, type PlayerName, type SeekResult } from './playable-player';

const argv = process.argv.slice(2);
const list = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return (i >= 0 ? argv[i + 1] : fallback).split(',').filter(Boolean);
};
const KINDS: Record<string, { label: string; clip: Omit<ClipOptions, 'width' | 'height' | 'seconds'> }> = {
  eligible: { label: 'H.264 4 Mb/s, 2 s GOP (passthrough)', clip: { gop: 48, videoBitrate: 4_000_000 } },
  'h264-16m': { label: 'H.264 16 Mb/s, 2 s GOP', clip: { gop: 48, videoBitrate: 16_000_000 } },
  'h264-16m-gop10': { label: 'H.264 16 Mb/s, 10 s GOP', clip: { gop: 240, videoBitrate: 16_000_000 } },
  hevc: { label: 'HEVC 4 Mb/s, 2 s GOP', clip: { gop: 48, codec: 'hevc', videoBitrate: 4_000_000 } },
  'hevc-gop10': { label: 'HEVC 4 Mb/s, 10 s GOP', clip: { gop: 240, codec: 'hevc', videoBitrate: 4_000_000 } },
};
const minutes = list('minutes', '10,60').map(Number);
const kinds = list('kinds', 'h264-16m,hevc,hevc-gop10').filter((k) => KINDS[k] || console.log(`unknown kind ${k}`));
const players = list('players', 'hls.js,shaka,shaka-10m') as PlayerName[];
/** Further seeks by HTTP, as fractions of the length (each to a segment nobody asked for yet). */
const seekFractions = list('seeks', '0.5,0.25,0.75').map(Number);
const costRungs = list('cost', '720p,1080p');
/**
 * Niceness (default: the config's): `--cut-nice` sets JIT_CUT_NICE (copies and audio cuts; the
 * on-request encodes run at the API's own), `--vod-nice` MEDIA_FFMPEG_NICE (the ladder behind ready).
 */
const cutNice: Record<string, string> = {
  ...(argv.includes('--cut-nice') ? { JIT_CUT_NICE: list('cut-nice', '')[0] } : {}),
  ...(argv.includes('--vod-nice') ? { MEDIA_FFMPEG_NICE: list('vod-nice', '')[0] } : {}),
};
const MUX_MEDIAN = 9.0;
const UPLOAD_LIMIT = 5_368_709_120;
const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);
const at = (t: number) => `@${Math.round(t)}s`;

function machineCpu(): number {
  const [, user, nice, system, , , irq, softirq, steal] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  return (user + nice + system + irq + softirq + steal) / 100;
}

const uris = (text: string) => text.split('\n').filter((l) => l && !l.startsWith('#'));

async function fetchText(url: URL): Promise<string> {
  const r = await fetch(url);
  if (r.status !== 200) throw new Error(`${url} answered ${r.status}`);
  return r.text();
}

/** The segment of a media playlist that holds time `t`. */
function segmentAt(playlist: string, t: number): string {
  let start = 0;
  let pending = 0;
  for (const line of playlist.split('\n')) {
    const inf = /^#EXTINF:([0-9.]+)/.exec(line);
    if (inf) pending = Number(inf[1]);
    else if (line && !line.startsWith('#')) {
      if (start + pending > t) return line;
      start += pending;
    }
  }
  return uris(playlist).at(-1)!;
}

/** Form A with the file streamed (the test helper reads it whole: long sources are gigabytes). */
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

/** Uploaded, completed, polled until `ready`: seconds from complete, the read, and the master's variants then. */
async function untilReady(s: Stack, file: string) {
  const id = await streamUpload(s, file);
  const t0 = performance.now();
  await s.post('/v1/upload/complete', { video_id: id }).expect(202);
  let v: Record<string, any> = {};
  for (;;) {
    v = (await s.get(`/v1/videos/${id}`)).body;
    if (v.status === 'ready' || v.status === 'failed') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const ready = (performance.now() - t0) / 1000;
  if (v.status !== 'ready') throw new Error(`video failed: ${v.error_message}`);
  // The CDN reads the row; the API's read may come from the workflow a moment before it.
  while ((await s.db('videos').where({ id: v.uuid }).first('status'))?.status !== 'ready') await new Promise((r) => setTimeout(r, 20));
  const master = await fetchText(new URL(v.hls_url));
  const variants = [...master.matchAll(/RESOLUTION=(\d+)x(\d+)[^\n]*\n([^\n]+)/g)].map((m) => ({ uri: m[3], short: Math.min(Number(m[1]), Number(m[2])) }));
  return { id, v, ready, readyAt: Date.now(), master, variants };
}

/** Where the time to ready went: each activity scheduled before `ready`, scheduled → completed. */
async function stepsToReady(s: Stack, uuid: string, readyAt: number): Promise<string> {
  const events = await allRunEvents(s, `video-${uuid}`);
  const scheduled = new Map<string, { type: string; at: number }>();
  const steps: string[] = [];
  const ms = (t: unknown) => Number((t as { seconds?: { toNumber(): number } | number }).seconds?.toString() ?? 0) * 1000 + ((t as { nanos?: number }).nanos ?? 0) / 1e6;
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
  return steps.join(', ');
}

async function gone(s: Stack, id: string): Promise<void> {
  await s.del(`/v1/videos/${id}`).expect(204);
}

type Upload = Awaited<ReturnType<typeof untilReady>>;

/** By HTTP: the first variant's and the audio's segments holding each point, fetched in full at once. */
async function httpSeeks(up: Upload, seconds: number) {
  const master = new URL(up.v.hls_url);
  const variant = new URL(up.variants[0].uri, master);
  const audioUri = /TYPE=AUDIO,[^\n]*URI="([^"]+)"/.exec(up.master)?.[1];
  const lists = await Promise.all([variant, ...(audioUri ? [new URL(audioUri, master)] : [])].map(async (u) => ({ u, text: await fetchText(u) })));
  const out: Array<{ at: number; seconds: number; parts: number[] }> = [];
  for (const f of seekFractions) {
    const t = performance.now();
    const parts = await Promise.all(
      lists.map(async ({ u, text }) => {
        const seg = new URL(segmentAt(text, seconds * f), u);
        const r = await fetch(seg);
        if (r.status !== 200) throw new Error(`${seg} answered ${r.status}`);
        await r.arrayBuffer();
        return performance.now() - t;
      }),
    );
    out.push({ at: seconds * f, seconds: (performance.now() - t) / 1000, parts });
  }
  return out;
}

async function measure(s: Stack, browser: Browser, file: string, seconds: number) {
  const cpu0 = machineCpu();
  const cuts0 = { ...jitCuts };
  const readies: Upload[] = [];
  const seeks: SeekResult[] = [];
  let loopMaxMs = 0;
  for (const player of players.length ? players : (['none'] as const)) {
    const up = await untilReady(s, file);
    readies.push(up);
    if (player === 'none') break;
    // The API, the worker and the workflows share this process in the bench: how long its event loop stalled.
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    try {
      seeks.push(await seekToLastMinute(browser, s.url, up.v.hls_url, player));
    } catch (err) {
      console.log(`  (${player}: ${(err as Error).message.slice(0, 200)})`);
    }
    loop.disable();
    loopMaxMs = Math.max(loopMaxMs, loop.max / 1e6);
    if (player !== players[players.length - 1]) await gone(s, up.id);
  }
  const last = readies[readies.length - 1];
  const again = await httpSeeks(last, seconds);
  const cpu = machineCpu() - cpu0;
  const cuts = { made: jitCuts.count - cuts0.count, cancelled: jitCuts.cancelled - cuts0.cancelled };
  const prefix = `${keys.videoPrefix(s.ws.id, last.v.uuid)}hls/`;
  let cached = 0;
  for (const key of await s.storage.list(prefix)) cached += (await s.storage.head(key))?.size ?? 0;
  const steps = await stepsToReady(s, last.v.uuid, last.readyAt);
  await gone(s, last.id);
  return { readies, seeks, loopMaxMs, again, cuts, cpu, cached, steps };
}

async function main(): Promise<void> {
  const s = await startStack({ env: { X264_PRESET: 'veryfast', LOG_LEVEL: 'warn', TRANSCODE_CONCURRENCY: String(os.availableParallelism()), RATE_LIMIT_PER_MINUTE: '100000', ...cutNice } });
  // Long 1080p sources are gigabytes: beyond the free plan's storage with deleted ones still counted.
  await s.db('workspaces').where({ id: s.ws.id }).update({ plan: 'business' });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const clips: Record<string, string> = {};
  for (const k of kinds) clips[k] = await makeClip({ width: 1920, height: 1080, seconds: 10, ...KINDS[k].clip });
  console.log(`load average at start: ${os.loadavg().map(f2).join(' ')}; ${os.availableParallelism()} cores`);
  console.log('| source | length | ready | variants at ready (first, tallest) | player: first frame after the seek to the last minute, height shown | worst HTTP seek | CPU | bytes under hls/ |');
  console.log('|---|---:|---:|---|---|---:|---:|---:|');
  const costs: Array<{ kind: string; report: CostReport }> = [];
  for (const m of minutes) {
    for (const kind of kinds) {
      const file = await loopedClip(clips[kind], m * 6);
      const size = fs.statSync(file).size;
      if (size > UPLOAD_LIMIT) {
        console.log(`| ${KINDS[kind].label} | ${m} min | skipped: ${f1(size / 1e9)} GB is over the 5 GiB upload limit |`);
        continue;
      }
      let r: Awaited<ReturnType<typeof measure>>;
      try {
        r = await measure(s, browser, file, m * 60);
      } catch (err) {
        console.log(`| ${KINDS[kind].label} | ${m} min | failed: ${(err as Error).message.slice(0, 160)} |`);
        continue;
      }
      const up = r.readies[0];
      const tallest = Math.max(...up.variants.map((v) => v.short));
      const shown = r.seeks.map((x) => `${x.player} ${f2(x.ttffMs / 1000)} s, ${x.height}p${x.heightLater !== x.height ? ` (${x.heightLater}p 3 s on)` : ''}`).join('; ');
      console.log(
        `| ${KINDS[kind].label} | ${m} min | ${r.readies.map((x) => `${f2(x.ready)} s`).join(', ')} | ${up.variants.length}: ${up.variants[0]?.short}p first, ${tallest}p tallest | ${shown || '—'} | ${f2(Math.max(...r.again.map((a) => a.seconds)))} s | ${f1(r.cpu)} CPU-s | ${(r.cached / 1e6).toFixed(1)} MB |`,
      );
      const ms = (p: number[]) => p.map((x) => (x / 1000).toFixed(2)).join('/');
      console.log(`  (HTTP seeks, s (video/audio): ${r.again.map((a) => `${at(a.at)} ${f2(a.seconds)} (${ms(a.parts)})`).join(', ')}; cuts made ${r.cuts.made}, look-ahead cancelled ${r.cuts.cancelled}; event loop stalled ≤ ${r.loopMaxMs.toFixed(0)} ms; load ${f2(os.loadavg()[0])}; Mux median ${f1(MUX_MEDIAN)} s)`);
      console.log(`  (activities to ready, s: ${r.steps})`);
      if (m === minutes[0] && kind !== 'eligible') {
        for (const name of costRungs) {
          const rung = planLadder({ width: 1920, height: 1080 }).find((x) => x.name === name);
          if (rung) costs.push({ kind, report: await onRequestCost(file, m * 60, rung, 24) });
        }
      }
    }
  }
  if (costs.length) {
    console.log('\n| source | rung | seek: CPU-s (wall s) by the segment\u2019s place in its GOP | playing on: CPU-s a segment (runs / one ffmpeg each) | viewers a core sustains: by CPU; pinned to one core (slowest pace) |');
    console.log('|---|---|---|---|---|');
    for (const { kind, report: c } of costs) {
      console.log(
        `| ${KINDS[kind].label} | ${c.rung} | ${c.seeks.map((x) => `+${f1(x.offset)} s: ${f2(x.cpu)} (${f2(x.wall)})`).join(', ')} | ${f2(c.perSegmentRuns)} / ${f2(c.perSegmentAlone)} (${f1(c.segmentSeconds)} s segments) | ${f1(c.byCpu)}; ${c.pinned.map((p) => `${p.viewers}: ${f2(p.slowestPace)}×`).join(', ')} |`,
      );
    }
  }
  await browser.close();
  await s.close();
}

runMain(main);
