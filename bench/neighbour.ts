/**
 * SPEC §25, fair share under load (docs/fairness.md): one stack, two workspaces on the same plan.
 * Workspace B is measured alone (idle), then again while workspace A keeps every transcode slot
 * busy with long 1080p ladders and alignments; A's throughput (ladder chunks finished a minute) is
 * measured alone and then while B works. Prints each figure beside its idle one and the goal:
 *
 *   - B complete→ready, a 10 s clip and a 5-minute passthrough-eligible source (goal ≤ 5 s);
 *   - B's 10 s clip fully laddered, from its upload's completion (goal ≤ 4 min);
 *   - B's alignment: POST → the activity started (goal ≤ 60 s), and → the track ready;
 *   - A's throughput with B beside it, against A alone (goal: within 10 %).
 *
 *   npm run bench:neighbour -- [--a-videos 3] [--a-minutes 10] [--height 1080] [--window 300] [--chunk 30] [--b-source-minutes 5]
 *
 * Small (proves it runs, ~2 minutes): --a-videos 2 --a-minutes 2 --height 360 --window 30 --chunk 6 --b-source-minutes 1
 */
import fs from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import request from 'supertest';
import { alignCaptionsWorkflowId } from '../workflows/jobs/defs';
import { allRenditionsReady, putFile } from '../test/support/flow';
import { runMain } from '../test/support/main';
import { loopedClip, makeClip } from '../test/support/media';
import { spokenClip } from '../test/support/speech';
import { startStack, type Stack, type Workspace } from '../test/support/stack';
import { arg } from './args';

const aVideos = arg('a-videos', 3);
const aMinutes = arg('a-minutes', 10);
const height = arg('height', 1080);
const windowSeconds = arg('window', 300);
const chunkSeconds = arg('chunk', 30);
const bSourceMinutes = arg('b-source-minutes', 5);
const TEXT = 'Welcome to the studio. Today we talk about forced alignment, a way to time captions from a script.';
const s1 = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(String(t?.seconds ?? 0)) * 1000 + (t?.nanos ?? 0) / 1e6;

async function upload(s: Stack, ws: Workspace, file: string): Promise<{ id: string; uuid: string; completed: number }> {
  const init = await s.post('/v1/upload/init', { filename: 'a.mp4', size: fs.statSync(file).size, content_type: 'video/mp4' }, ws.fullKey).expect(201);
  const put = await putFile(init.body.upload_url, file, 'video/mp4', init.body.upload_headers);
  if (put.status !== 200) throw new Error(`upload answered ${put.status}`);
  await s.post('/v1/upload/complete', { video_id: init.body.video_id }, ws.fullKey).expect(202);
  const completed = performance.now();
  const uuid = (await s.get(`/v1/videos/${init.body.video_id}`, ws.fullKey)).body.uuid as string;
  return { id: init.body.video_id, uuid, completed };
}

/** Milliseconds from the completion until `done` holds of the video (polled every 50 ms). */
async function until(s: Stack, ws: Workspace, v: { id: string; completed: number }, done: (x: Record<string, any>) => boolean): Promise<number> {
  for (;;) {
    const x = (await s.get(`/v1/videos/${v.id}`, ws.fullKey)).body;
    if (x.status === 'failed') throw new Error(`video ${v.id} failed: ${x.error_message}`);
    if (done(x)) return performance.now() - v.completed;
    await sleep(50);
  }
}

/** POST → the alignment activity started, and → the track ready (ms). */
async function alignment(s: Stack, ws: Workspace, v: { id: string; uuid: string }): Promise<{ started: number; done: number }> {
  const t0 = Date.now();
  const p0 = performance.now();
  await request(s.url).post(`/v1/videos/${v.id}/captions/en/align`).set('Authorization', `Bearer ${ws.fullKey}`).set('Content-Type', 'text/plain').send(TEXT).expect(202);
  for (;;) {
    const t = ((await s.get(`/v1/videos/${v.id}/captions`, ws.fullKey)).body.data as Array<{ language: string; status: string }>).find((c) => c.language === 'en');
    if (t?.status === 'failed') throw new Error('the alignment failed');
    if (t?.status === 'ready') break;
    await sleep(100);
  }
  const done = performance.now() - p0;
  const events = (await s.temporal.workflow.getHandle(alignCaptionsWorkflowId(v.uuid, 'en')).fetchHistory()).events ?? [];
  const started = events.find((e) => e.activityTaskStartedEventAttributes);
  return { started: ms(started?.eventTime) - t0, done };
}

/** Ladder chunks of these videos finished within [from, to] (epoch ms). */
async function chunksDone(s: Stack, uuids: string[], from: number, to: number): Promise<number> {
  let n = 0;
  for (const uuid of uuids) {
    let runId: string | undefined;
    do {
      const h = await s.temporal.workflow.getHandle(`video-${uuid}`, runId).fetchHistory();
      const chunks = new Set((h.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'encodeChunk').map((e) => String(e.eventId)));
      n += (h.events ?? []).filter((e) => chunks.has(String(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? '')) && ms(e.eventTime) >= from && ms(e.eventTime) <= to).length;
      runId = h.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    } while (runId);
  }
  return n;
}

/** What B does, in order; each figure in ms. */
async function workspaceB(s: Stack, b: Workspace, media: { clip: string; source: string; speech: string }) {
  const clip = await upload(s, b, media.clip);
  const clipReady = await until(s, b, clip, (x) => x.status === 'ready');
  const source = await upload(s, b, media.source);
  const sourceReady = await until(s, b, source, (x) => x.status === 'ready');
  // The source's own ladder is not part of the measure: it goes.
  await s.del(`/v1/videos/${source.id}`, b.fullKey).expect(204);
  const speech = await upload(s, b, media.speech);
  await until(s, b, speech, (x) => x.status === 'ready');
  const [ladder, aligned] = await Promise.all([until(s, b, clip, allRenditionsReady), alignment(s, b, speech)]);
  for (const v of [clip, speech]) await s.del(`/v1/videos/${v.id}`, b.fullKey).expect(204);
  return { clipReady, sourceReady, ladder, alignStarted: aligned.started, alignDone: aligned.done };
}

async function main(): Promise<void> {
  const cores = os.availableParallelism();
  const s = await startStack({
    env: { X264_PRESET: 'veryfast', LOG_LEVEL: 'warn', TRANSCODE_CONCURRENCY: String(cores), TRANSCODE_CHUNK_SECONDS: String(chunkSeconds), TRANSCODE_CHUNK_THRESHOLD_SECONDS: String(chunkSeconds * 2) },
  });
  const [a, b] = [await s.newWorkspace('free'), await s.newWorkspace('free')];
  const width = Math.round((height * 16) / 9 / 2) * 2;
  const ten = await makeClip({ width, height, seconds: 10, videoBitrate: 4_000_000 });
  const speech = (await spokenClip(TEXT)).file;
  const media = { clip: ten, source: await loopedClip(ten, bSourceMinutes * 6), speech };
  const long = await loopedClip(ten, aMinutes * 6);
  console.log(`${cores} cores, load ${os.loadavg()[0].toFixed(1)}; A: ${aVideos} × ${aMinutes} min ${width}x${height}, chunks of ${chunkSeconds} s; window ${windowSeconds} s`);

  const idle = await workspaceB(s, b, media);

  // A: an alignment-ready video, then the long ladders, then alignments (jobs bound: 4 a video).
  const aSpeech = await upload(s, a, speech);
  await until(s, a, aSpeech, (x) => x.status === 'ready');
  const aLong: string[] = [];
  for (let i = 0; i < aVideos; i++) aLong.push((await upload(s, a, long)).uuid);
  await sleep(15_000); // past ready, every slot on A's ladders
  const w0 = Date.now();
  await sleep(windowSeconds * 1000);
  const aloneSpan = Date.now() - w0;
  const alone = await chunksDone(s, aLong, w0, w0 + aloneSpan);
  for (const lang of ['en', 'en-GB', 'en-US']) {
    await request(s.url).post(`/v1/videos/${aSpeech.id}/captions/${lang}/align`).set('Authorization', `Bearer ${a.fullKey}`).set('Content-Type', 'text/plain').send(TEXT).expect(202);
  }
  const w1 = Date.now();
  const loaded = await workspaceB(s, b, media);
  const bSpan = Date.now() - w1;
  if (Date.now() - w1 < windowSeconds * 1000) await sleep(windowSeconds * 1000 - (Date.now() - w1));
  const withSpan = Date.now() - w1;
  const withB = await chunksDone(s, aLong, w1, w1 + withSpan);
  const perMinute = (n: number, span: number) => (n * 60_000) / span;

  const rows: Array<[string, string, string, string]> = [
    ['B complete→ready, 10 s clip', s1(idle.clipReady), s1(loaded.clipReady), '≤ 5 s'],
    [`B complete→ready, ${bSourceMinutes}-minute source`, s1(idle.sourceReady), s1(loaded.sourceReady), '≤ 5 s'],
    ['B 10 s clip fully laddered', s1(idle.ladder), s1(loaded.ladder), '≤ 240 s'],
    ['B alignment started (POST → activity)', s1(idle.alignStarted), s1(loaded.alignStarted), '≤ 60 s'],
    ['B alignment ready', s1(idle.alignDone), s1(loaded.alignDone), ''],
    [`A throughput, chunks/min (B busy ${s1(bSpan)} of ${s1(withSpan)})`, perMinute(alone, aloneSpan).toFixed(1), perMinute(withB, withSpan).toFixed(1), `≥ ${(perMinute(alone, aloneSpan) * 0.9).toFixed(1)}`],
  ];
  console.log('\n| measure | idle / A alone | under A\'s load / A with B | goal |\n|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
  console.log(`\nload at the end ${os.loadavg()[0].toFixed(1)}`);
  for (const v of await s.db('videos').where({ workspace_id: a.id }).whereNull('deleted_at').pluck('id')) {
    await s.del(`/v1/videos/${v}`, a.fullKey).catch(() => undefined);
  }
  await s.close();
}

runMain(main);
