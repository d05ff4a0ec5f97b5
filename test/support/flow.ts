import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import assert from 'node:assert/strict';
import type { Stack } from './stack';

export interface Uploaded {
  id: string;
  uploadUrl: string;
}

/** SHA-256 of a stored object (null when it is not there), to compare with `fileSha` of what was sent. */
export async function storedSha(stack: Pick<Stack, 'storage'>, key: string): Promise<string | null> {
  const obj = await stack.storage.get(key);
  if (!obj) return null;
  const h = createHash('sha256');
  for await (const c of obj.body) h.update(c as Buffer);
  return h.digest('hex');
}
export const fileSha = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** PUT a file to a presigned URL as a browser would. */
export async function putFile(url: string, file: string, contentType = 'video/mp4', headers: Record<string, string> = {}): Promise<Response> {
  const body = fs.readFileSync(file);
  return fetch(url, { method: 'PUT', body, headers: { 'Content-Type': contentType, ...headers } });
}

/** Form A: init → PUT → (optionally) complete. */
export async function uploadFormA(stack: Stack, file: string, opts: { complete?: boolean; prefix?: string; extra?: Record<string, unknown> } = {}): Promise<Uploaded> {
  const size = fs.statSync(file).size;
  const init = await stack.post(`${opts.prefix ?? '/v1'}/upload/init`, { filename: path.basename(file), size, content_type: 'video/mp4', ...opts.extra });
  assert.equal(init.status, 201, JSON.stringify(init.body));
  const put = await putFile(init.body.upload_url, file, 'video/mp4', init.body.upload_headers);
  assert.equal(put.status, 200, await put.text());
  if (opts.complete !== false) {
    const done = await stack.post(`${opts.prefix ?? '/v1'}/upload/complete`, { video_id: init.body.video_id });
    assert.equal(done.status, 202, JSON.stringify(done.body));
  }
  return { id: init.body.video_id, uploadUrl: init.body.upload_url };
}

/** Polls the video until `done(video)` or the timeout; returns the last read. */
export async function waitForVideo(stack: Stack, id: string, done: (v: Record<string, any>) => boolean, timeoutMs = 90_000): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, any> = {};
  while (Date.now() < deadline) {
    const r = await stack.get(`/v1/videos/${id}`);
    last = r.body;
    if (r.status === 200 && done(last)) return last;
    await new Promise((res) => setTimeout(res, 300));
  }
  throw new Error(`video ${id} did not get there in ${timeoutMs} ms; last read: ${JSON.stringify(last)}`);
}

export const isStatus = (status: string) => (v: Record<string, any>) => v.status === status;
export const allRenditionsReady = (v: Record<string, any>) =>
  v.status === 'ready' && v.renditions.length > 0 && v.renditions.every((r: { status: string }) => r.status === 'ready');

/**
 * Every event of every run of a workflow, oldest run first: a video continues-as-new into an
 * idle run once processing ends, so the processing run is not the latest one.
 */
export async function allRunEvents(stack: Pick<Stack, 'temporal'>, workflowId: string) {
  const runs: NonNullable<Awaited<ReturnType<ReturnType<Stack['temporal']['workflow']['getHandle']>['fetchHistory']>>['events']>[] = [];
  let runId: string | undefined;
  do {
    const history = await stack.temporal.workflow.getHandle(workflowId, runId).fetchHistory();
    runs.unshift(history.events ?? []);
    runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  } while (runId);
  return runs.flat();
}

/**
 * Until the video's workflow has finished deleting (purgeVideo completed). Not `result()`: since
 * the uploads room, a deleted upload's workflow then sleeps until its upload URL has died (for
 * the default TTL, an hour) to sweep the staging prefix once more.
 */
export async function waitForDeletion(stack: Pick<Stack, 'temporal'>, uuid: string, timeoutMs = 120_000): Promise<void> {
  const handle = stack.temporal.workflow.getHandle(`video-${uuid}`);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await handle.describe()).status.name !== 'RUNNING') return;
    const events = (await handle.fetchHistory()).events ?? [];
    const purge = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'purgeVideo');
    if (purge && events.some((e) => Number(e.activityTaskCompletedEventAttributes?.scheduledEventId) === Number(purge.eventId))) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`video-${uuid} did not finish deleting in ${timeoutMs} ms`);
}

/** Polls `check` every `everyMs` until it holds; fails naming `what` after `timeoutMs`. */
export async function until(check: () => Promise<boolean>, timeoutMs: number, what: string, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Until the video's workflow exists: it is started just after init answers (the start outbox, lib/videos/starts.ts). */
export function workflowRunning(stack: Pick<Stack, 'temporal'>, uuid: string, timeoutMs = 10_000): Promise<void> {
  const handle = stack.temporal.workflow.getHandle(`video-${uuid}`);
  return until(
    () => handle.describe().then((d) => d.status.name === 'RUNNING', () => false),
    timeoutMs,
    `video-${uuid} running`,
  );
}
