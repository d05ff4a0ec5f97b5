import assert from 'node:assert/strict';
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { makeClip } from '../support/media';
import { putFile } from '../support/flow';
import { startStack, type Stack } from '../support/stack';

describe('Idempotency-Key (SPEC §16)', function () {
  this.timeout(180_000);
  let s: Stack;

  // Orchestration only: a completed upload stays `processing`, so /upload/confirm keeps waiting:
  // the whole CONFIRM_WAIT_MS, which only has to outlast one request sent meanwhile (was 15 s).
  before(async () => {
    s = await startStack({ workers: ['workflow'], env: { CONFIRM_WAIT_MS: '6000' } });
  });

  const init = (filename: string) => ({ filename, size: 1000, content_type: 'video/mp4' });
  const videosNamed = async (filename: string, workspaceId = s.ws.id) =>
    Number((await s.db('videos').where({ workspace_id: workspaceId, filename }).count({ n: '*' }))[0].n);

  it('the same key and body answer the first response again, marked Idempotent-Replayed', async () => {
    const key = randomUUID();
    const first = await s.post('/v1/upload/init', init('a.mp4')).set('Idempotency-Key', key);
    assert.equal(first.status, 201);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    // Another prefix is the same endpoint; key order is not a different body.
    const again = await s.post('/upload/init', { content_type: 'video/mp4', size: 1000, filename: 'a.mp4' }).set('Idempotency-Key', key);
    assert.equal(again.status, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.body, first.body);
    assert.notEqual(again.headers['x-request-id'], first.headers['x-request-id']);
    assert.equal(await videosNamed('a.mp4'), 1);
  });

  it('the same key with another body → 422 idempotency_key_reused, and nothing is created', async () => {
    const key = randomUUID();
    assert.equal((await s.post('/v1/upload/init', init('b.mp4')).set('Idempotency-Key', key)).status, 201);
    const other = await s.post('/v1/upload/init', init('c.mp4')).set('Idempotency-Key', key);
    assert.equal(other.status, 422);
    assert.equal(other.body.error.code, 'idempotency_key_reused');
    const otherPath = await s.post('/v1/folders', { name: 'x' }).set('Idempotency-Key', key);
    assert.equal(otherPath.status, 422);
    assert.equal(await videosNamed('c.mp4'), 0);
  });

  it('10 identical upload/init at once create exactly one video', async () => {
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 10 }, () => s.post('/v1/upload/init', init('race.mp4')).set('Idempotency-Key', key).then((r) => r)));
    const statuses = answers.map((r) => r.status);
    assert.ok(statuses.every((st) => st === 201 || st === 409), statuses.join(','));
    const created = answers.filter((r) => r.status === 201);
    assert.ok(created.length >= 1);
    assert.equal(new Set(created.map((r) => r.body.video_id)).size, 1);
    for (const r of answers.filter((a) => a.status === 409)) assert.equal(r.body.error.code, 'idempotency_key_in_use');
    assert.equal(await videosNamed('race.mp4'), 1);
  });

  it('while the first request runs, the same key → 409 idempotency_key_in_use; then its answer is replayed', async () => {
    const clip = await makeClip({ width: 160, height: 90, seconds: 1 });
    const size = fs.statSync(clip).size;
    const up = await s.post('/v1/upload/init', { filename: 'slow.mp4', size, content_type: 'video/mp4' });
    assert.equal((await putFile(up.body.upload_url, clip, 'video/mp4', up.body.upload_headers)).status, 200);
    const key = randomUUID();
    // Confirm waits (up to CONFIRM_WAIT_MS) for a rendition no worker will make.
    const slow = s.post(`/v1/upload/confirm/${up.body.video_id}`).set('Idempotency-Key', key).then((r) => r);
    for (;;) {
      const row = await s.db('idempotency_keys').where({ workspace_id: s.ws.id, key }).first();
      if (row?.state === 'running') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const during = await s.post(`/v1/upload/confirm/${up.body.video_id}`).set('Idempotency-Key', key);
    assert.equal(during.status, 409);
    assert.deepEqual(during.body.error.code, 'idempotency_key_in_use');
    assert.equal(during.body.success, false, 'Form B errors stay in the envelope');
    const first = await slow;
    assert.equal(first.status, 200);
    const after = await s.post(`/v1/upload/confirm/${up.body.video_id}`).set('Idempotency-Key', key);
    assert.equal(after.headers['idempotent-replayed'], 'true');
    assert.deepEqual(after.body, first.body);
  });

  it('keys are the workspace\'s, errors release them, and they expire after 24 h', async () => {
    const key = randomUUID();
    const other = await s.newWorkspace();
    assert.equal((await s.post('/v1/upload/init', init('ws.mp4')).set('Idempotency-Key', key)).status, 201);
    const theirs = await s.post('/v1/upload/init', init('ws.mp4'), other.fullKey).set('Idempotency-Key', key);
    assert.equal(theirs.status, 201);
    assert.equal(theirs.headers['idempotent-replayed'], undefined);
    assert.equal(await videosNamed('ws.mp4', other.id), 1);

    const failing = randomUUID();
    assert.equal((await s.post('/v1/upload/init', { filename: 'x.mp4' }).set('Idempotency-Key', failing)).status, 400);
    // The 400 changed nothing and released the key: the corrected request runs under it.
    assert.equal((await s.post('/v1/upload/init', init('fixed.mp4')).set('Idempotency-Key', failing)).status, 201);
    assert.equal(await videosNamed('fixed.mp4'), 1);

    await s.db('idempotency_keys').where({ workspace_id: s.ws.id, key }).update({ created_at: s.db.raw("now() - interval '25 hours'") });
    const later = await s.post('/v1/upload/init', init('ws.mp4')).set('Idempotency-Key', key);
    assert.equal(later.status, 201);
    assert.equal(later.headers['idempotent-replayed'], undefined);
    assert.equal(await videosNamed('ws.mp4'), 2);

    const long = await s.post('/v1/folders', { name: 'y' }).set('Idempotency-Key', 'k'.repeat(256));
    assert.equal(long.status, 400);
    assert.equal(long.body.error.code, 'invalid_idempotency_key');
  });
});
