import assert from 'node:assert/strict';
import request from 'supertest';
import { startStack, type Stack } from '../support/stack';

describe('API core: keys, scopes, errors', function () {
  let s: Stack;
  before(async function () {
    this.timeout(120_000);
    s = await startStack({ workers: [] });
  });

  it('401 without a key, with an unknown key, and with two different keys', async () => {
    const none = await request(s.url).get('/v1/videos');
    assert.equal(none.status, 401);
    assert.equal(none.body.error.code, 'unauthorized');
    assert.match(none.body.request_id, /^req_[0-9a-f]{32}$/);
    assert.equal(none.headers['x-request-id'], none.body.request_id);
    const bad = await request(s.url).get('/v1/videos').set('X-API-Key', 'vhk_nope');
    assert.equal(bad.status, 401);
    const both = await request(s.url).get('/v1/videos').set('Authorization', `Bearer ${s.ws.fullKey}`).set('X-API-Key', s.ws.readKey);
    assert.equal(both.status, 401);
  });

  it('accepts the key in either header, and the same key in both', async () => {
    for (const [name, value] of [
      ['Authorization', `Bearer ${s.ws.fullKey}`],
      ['X-API-Key', s.ws.fullKey],
    ]) {
      const r = await request(s.url).get('/videos').set(name, value);
      assert.equal(r.status, 200, name);
    }
    const same = await request(s.url).get('/videos').set('Authorization', `Bearer ${s.ws.fullKey}`).set('X-API-Key', s.ws.fullKey);
    assert.equal(same.status, 200);
  });

  it('serves every endpoint under no prefix, /v1 and /api/v1', async () => {
    for (const p of ['/videos', '/v1/videos', '/api/v1/videos']) {
      const r = await s.get(p);
      assert.equal(r.status, 200, p);
      assert.deepEqual(Object.keys(r.body).sort(), ['data', 'has_more', 'next_cursor']);
    }
  });

  it('403 insufficient_scope for a read key on a write; reads are fine', async () => {
    const w = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 10, content_type: 'video/mp4' }, s.ws.readKey);
    assert.equal(w.status, 403);
    assert.equal(w.body.error.code, 'insufficient_scope');
    assert.equal((await s.get('/v1/videos', s.ws.readKey)).status, 200);
  });

  it('404 for malformed ids and for ids that do not exist', async () => {
    for (const id of ['nope', 'vid_123', '../../etc/passwd', 'vid_' + 'g'.repeat(32), '0190b8a2-0000-7000-8000-000000000000']) {
      const r = await s.get(`/v1/videos/${encodeURIComponent(id)}`);
      assert.equal(r.status, 404, id);
      assert.equal(r.body.error.code, 'not_found');
    }
  });

  it('400 invalid_json for malformed JSON and 413 for an oversized body', async () => {
    const bad = await request(s.url).post('/v1/upload/init').set('X-API-Key', s.ws.fullKey).set('Content-Type', 'application/json').send('{"filename": ');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'invalid_json');
    const huge = JSON.stringify({ filename: 'x'.repeat(s.config.bodyLimitBytes + 10) });
    const big = await request(s.url).post('/v1/upload/init').set('X-API-Key', s.ws.fullKey).set('Content-Type', 'application/json').send(huge);
    assert.equal(big.status, 413);
    assert.equal(big.body.error.code, 'payload_too_large');
  });

  it('404 JSON for an unknown route', async () => {
    const r = await s.get('/v1/nothing-here');
    assert.equal(r.status, 404);
    assert.equal(r.body.error.code, 'not_found');
  });

  it('400 invalid_parameters names the bad fields', async () => {
    const r = await s.post('/v1/upload/init', { filename: '', size: -1, content_type: 'text/html' });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, 'invalid_parameters');
    const fields = r.body.error.details.map((d: { field: string }) => d.field).sort();
    assert.deepEqual(fields, ['content_type', 'filename', 'size']);
  });

  it("404 for another workspace's video", async () => {
    const other = await s.newWorkspace();
    const init = await s.post('/v1/upload/init', { filename: 'mine.mp4', size: 1000, content_type: 'video/mp4' });
    assert.equal(init.status, 201, JSON.stringify(init.body));
    const theirs = await s.get(`/v1/videos/${init.body.video_id}`, other.fullKey);
    assert.equal(theirs.status, 404);
    const mine = await s.get(`/v1/videos/${init.body.video_id}`);
    assert.equal(mine.status, 200);
  });
});
