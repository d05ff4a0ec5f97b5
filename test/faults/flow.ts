import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../lib/config';
import { createStorage, keys } from '../../lib/storage';
import type { FaultStack, Reply } from './stack';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A client that does what a 503's Retry-After asks (capped, the test's clock is short) and retries
 * a refused connection (an API process that is down). Anything else is returned as it came.
 */
export async function callRetrying(s: FaultStack, method: string, p: string, body?: unknown, opts: { api?: number; timeoutMs?: number } = {}): Promise<Reply> {
  const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
  for (;;) {
    let r: Reply | undefined;
    try {
      r = await s.call(method, p, body, opts.api ?? 0);
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    if (r && r.status !== 503) return r;
    if (r) assert.match(String(r.headers.get('retry-after')), /^\d+$/, `503 without Retry-After on ${method} ${p}`);
    if (Date.now() > deadline) return r!;
    await sleep(r ? Math.min(1000, Number(r.headers.get('retry-after')) * 1000) : 500);
  }
}

/** init → PUT → complete, as a careful client does it (retrying 503s). Returns the public id. */
export async function upload(s: FaultStack, file: string, opts: { api?: number; complete?: boolean } = {}): Promise<string> {
  const size = fs.statSync(file).size;
  const init = await callRetrying(s, 'POST', '/v1/upload/init', { filename: path.basename(file), size, content_type: 'video/mp4' }, opts);
  assert.equal(init.status, 201, JSON.stringify(init.body));
  // Local-driver upload URLs name the first API; the token is what counts, so any API takes the PUT.
  const url = String(init.body.upload_url).replace(s.apis[0].url, s.apis[opts.api ?? 0].url);
  const put = await fetch(url, { method: 'PUT', body: fs.readFileSync(file), headers: init.body.upload_headers });
  assert.equal(put.status, 200, await put.text());
  if (opts.complete !== false) {
    const done = await callRetrying(s, 'POST', '/v1/upload/complete', { video_id: init.body.video_id }, opts);
    assert.ok(done.status === 202 || done.status === 200, JSON.stringify(done.body));
  }
  return init.body.video_id;
}

/** Polls GET /videos/{id} (any answer but 200 is retried) until `done`. */
export async function waitVideo(s: FaultStack, id: string, done: (v: any) => boolean, timeoutMs = 120_000, api = 0): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    const r = await s.call('GET', `/v1/videos/${id}`, undefined, api).catch((err: Error) => ({ status: 0, body: err.message }) as Reply);
    last = r.body;
    if (r.status === 200 && done(r.body)) return r.body;
    await sleep(400);
  }
  throw new Error(`video ${id} did not get there in ${timeoutMs} ms; last read: ${JSON.stringify(last)}`);
}

/**
 * Until one of `ids` has a rendition encoding: the moment a fault is injected "mid-encode". All
 * of them are polled, often, since a small clip's rung takes a second or two on a fast machine.
 */
export async function waitMidEncode(s: FaultStack, ids: string[], timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const reads = await Promise.all(ids.map((id) => s.call('GET', `/v1/videos/${id}`).catch(() => undefined)));
    const videos = reads.filter((r) => r?.status === 200).map((r) => r!.body);
    if (videos.some((v) => v.renditions.some((r: { status: string }) => r.status === 'processing'))) return;
    if (videos.length === ids.length && videos.every(allReady)) throw new Error('every video was encoded before a rendition was seen encoding: use a longer clip');
    await sleep(100);
  }
  throw new Error(`no rendition of ${ids.join(', ')} started encoding in ${timeoutMs} ms`);
}

export const allReady = (v: any) => v.status === 'ready' && v.renditions.length > 0 && v.renditions.every((r: { status: string }) => r.status === 'ready');

export interface Intact {
  renditions: number;
  segments: number;
}

/**
 * The end state through the public API and the stores it reads: ready with every rendition; in
 * storage, each rendition holds exactly the segments its playlist names (a retried upload left no
 * strays); one rendition row per rung; one video.uploaded and one video.ready event.
 */
export async function assertIntact(s: FaultStack, id: string): Promise<Intact> {
  const r = await s.call('GET', `/v1/videos/${id}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const v = r.body;
  assert.ok(allReady(v), `video ${id} ready with every rendition: ${JSON.stringify(v)}`);
  const storage = createStorage(loadConfig(s.env));
  let segments = 0;
  for (const rend of v.renditions as Array<{ name: string }>) {
    const prefix = keys.rendition(v.workspace_id, v.uuid, rend.name);
    const obj = await storage.get(`${prefix}index.m3u8`);
    assert.ok(obj, `${rend.name} playlist stored`);
    const chunks: Buffer[] = [];
    for await (const c of obj.body) chunks.push(Buffer.from(c));
    const named = Buffer.concat(chunks)
      .toString('utf8')
      .split('\n')
      .filter((l) => l && !l.startsWith('#'));
    const files = (await storage.list(prefix)).map((k) => k.slice(prefix.length)).filter((k) => k !== 'index.m3u8');
    // Besides segments, a rung keeps the per-chunk playlists its index.m3u8 was stitched from.
    const stored = files.filter((k) => !/^chunk_\d{5}\.m3u8$/.test(k));
    assert.deepEqual(stored.sort(), [...named].sort(), `${id}/${rend.name}: the stored segments are those of the playlist`);
    segments += named.length;
  }
  const rows = await s.db('renditions').where({ video_id: v.uuid }).select('name');
  assert.deepEqual(rows.map((x) => x.name).sort(), v.renditions.map((x: { name: string }) => x.name).sort(), 'one rendition row per rung');
  const events = await s.db('events').where({ video_id: v.uuid }).select('type');
  const count = (t: string) => events.filter((e) => e.type === t).length;
  assert.equal(count('video.uploaded'), 1, `one video.uploaded for ${id}`);
  assert.equal(count('video.ready'), 1, `one video.ready for ${id}`);
  return { renditions: v.renditions.length, segments };
}

/** Duplicate events of the kinds sent once per video (should be 0). */
export async function duplicateEvents(s: FaultStack): Promise<number> {
  const rows = await s.db('events').where({ workspace_id: s.ws.id }).select('video_id', 'type').count('* as n').groupBy('video_id', 'type');
  return rows.reduce((sum, r) => sum + Math.max(0, Number(r.n) - 1), 0);
}

/** The line of the fault table (docs/faults.md), printed by each fault test. */
export function report(fault: string, row: { inFlight: number; lost: number; duplicateEvents: number; fiveXX: number; note?: string }): void {
  console.log(`      | ${fault} | ${row.inFlight} | ${row.lost} | ${row.duplicateEvents} | ${row.fiveXX} |${row.note ? ` ${row.note}` : ''}`);
}
