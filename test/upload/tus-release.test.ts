import assert from 'node:assert/strict';
import { parseVideoId } from '../../lib/ids';
import { keys } from '../../lib/storage';
import { until } from '../support/flow';
import { startStack, type Stack, type Workspace } from '../support/stack';

/**
 * Issue 22 item 10: a tus upload that is given up (termination, a failed creation-with-upload)
 * stops holding its declared size at once, and POST /upload/tus honours Idempotency-Key.
 */
describe('tus: given-up uploads free their reservation; Idempotency-Key replays', function () {
  this.timeout(60_000);
  let s: Stack;
  let ws: Workspace;
  const meta = `filename ${Buffer.from('a.mp4').toString('base64')},content_type ${Buffer.from('video/mp4').toString('base64')}`;
  const used = async () => Number((await s.db('workspaces').where({ id: ws.id }).first('storage_used_bytes')).storage_used_bytes);
  const post = (headers: Record<string, string>, body?: Uint8Array) =>
    fetch(`${s.url}/v1/upload/tus`, {
      method: 'POST',
      headers: { 'Tus-Resumable': '1.0.0', 'X-API-Key': ws.fullKey, 'Upload-Metadata': meta, ...(body ? { 'Content-Type': 'application/offset+octet-stream' } : {}), ...headers },
      body: body as BodyInit | undefined,
    });
  const deletedEvent = (uuid: string) =>
    until(async () => !!(await s.db('events').where({ video_id: uuid, type: 'video.deleted' }).first()), 30_000, 'video.deleted event');

  before(async () => {
    s = await startStack();
    ws = await s.newWorkspace();
  });

  it('DELETE (termination) deletes the pending video at once: the quota is free, the video 404s, video.deleted follows', async () => {
    const before = await used();
    const created = await post({ 'Upload-Length': '1000000' });
    assert.equal(created.status, 201, await created.text());
    const id = created.headers.get('video-id')!;
    assert.equal(await used(), before + 1_000_000, 'the declared size is reserved');
    const put = await fetch(created.headers.get('location')!, { method: 'PATCH', headers: { 'Tus-Resumable': '1.0.0', 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' }, body: new Uint8Array(1000) });
    assert.equal(put.status, 204);

    const del = await fetch(created.headers.get('location')!, { method: 'DELETE', headers: { 'Tus-Resumable': '1.0.0' } });
    assert.equal(del.status, 204);
    assert.equal(await used(), before, 'the reservation is freed by the termination itself, not 75 minutes later');
    assert.equal((await s.get(`/v1/videos/${id}`, ws.fullKey)).status, 404);
    await deletedEvent(parseVideoId(id)!);
    assert.deepEqual(await s.storage.list(keys.uploadsPrefix(ws.id, parseVideoId(id)!)), [], 'nothing staged is left');
    // The upload URL is closed for good.
    const again = await fetch(created.headers.get('location')!, { method: 'HEAD', headers: { 'Tus-Resumable': '1.0.0' } });
    assert.equal(again.status, 404);
  });

  it('a failed creation-with-upload (body past Upload-Length) leaves no video and no reservation', async () => {
    const before = await used();
    const count = async () => Number((await s.db('videos').where({ workspace_id: ws.id }).whereNull('deleted_at').count('* as n').first())!.n);
    const videos = await count();
    const r = await post({ 'Upload-Length': '10' }, Buffer.alloc(20, 2));
    assert.ok(r.status >= 400 && r.status < 500, `refused with a 4xx (got ${r.status})`);
    const id = r.headers.get('video-id');
    assert.equal(await used(), before);
    assert.equal(await count(), videos, 'no live video left behind');
    if (id) await deletedEvent(parseVideoId(id)!);
  });

  it('Idempotency-Key: the same key twice → the same upload URL and video, one video only', async () => {
    const count = async () => Number((await s.db('videos').where({ workspace_id: ws.id }).whereNull('deleted_at').count('* as n').first())!.n);
    const videos = await count();
    const before = await used();
    const key = `tus-${Date.now()}`;
    const first = await post({ 'Upload-Length': '5000', 'Idempotency-Key': key });
    assert.equal(first.status, 201, await first.text());
    const second = await post({ 'Upload-Length': '5000', 'Idempotency-Key': key });
    assert.equal(second.status, 201, await second.text());
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.equal(second.headers.get('location'), first.headers.get('location'));
    assert.equal(second.headers.get('video-id'), first.headers.get('video-id'));
    assert.equal(second.headers.get('tus-resumable'), '1.0.0');
    assert.equal(await count(), videos + 1, 'one video');
    assert.equal(await used(), before + 5000, 'one reservation');
    // Another request under the same key is refused, and creates nothing.
    const other = await post({ 'Upload-Length': '6000', 'Idempotency-Key': key });
    assert.equal(other.status, 422);
    assert.equal(await count(), videos + 1);
  });
});
