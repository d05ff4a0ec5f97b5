import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createVidhostClient } from '@vidhost/client';
import { generateClientTypes } from '../../api/openapi/client';
import { makeClip } from '../support/media';
import { putFile, waitForVideo } from '../support/flow';
import { startStack, type Stack } from '../support/stack';

describe('typed client (@vidhost/client)', function () {
  this.timeout(180_000);
  let s: Stack;

  before(async () => {
    s = await startStack();
  });

  it('packages/client/src/schema.ts is what the current document generates (npm run client:generate)', async () => {
    const committed = fs.readFileSync(path.join(__dirname, '..', '..', 'packages', 'client', 'src', 'schema.ts'), 'utf8');
    assert.ok(committed === (await generateClientTypes()), 'packages/client/src/schema.ts is stale: run `npm run client:generate` and commit it');
  });

  it('uploads, completes, reads and lists against a real stack, with typed errors', async () => {
    const client = createVidhostClient({ baseUrl: s.url, apiKey: s.ws.fullKey });
    const clip = await makeClip({ width: 320, height: 180, seconds: 2 });
    const size = fs.statSync(clip).size;

    const init = await client.POST('/upload/init', { body: { filename: 'client.mp4', size, content_type: 'video/mp4', title: 'From the client' } });
    assert.equal(init.response.status, 201, JSON.stringify(init.error));
    const up = init.data!;
    assert.match(up.video_id, /^vid_[0-9a-f]{32}$/);
    assert.equal((await putFile(up.upload_url, clip, 'video/mp4', up.upload_headers)).status, 200);

    const done = await client.POST('/upload/complete', { body: { video_id: up.video_id } });
    assert.equal(done.response.status, 202, JSON.stringify(done.error));

    const read = await client.GET('/videos/{id}', { params: { path: { id: up.video_id } } });
    assert.equal(read.data?.title, 'From the client');
    const list = await client.GET('/videos', { params: { query: { limit: 5 } } });
    assert.ok(list.data?.data.some((v) => v.id === up.video_id));

    const missing = await client.GET('/videos/{id}', { params: { path: { id: 'vid_00000000000000000000000000000000' } } });
    assert.equal(missing.response.status, 404);
    assert.equal(missing.error?.error.code, 'not_found');

    const bad = createVidhostClient({ baseUrl: s.url, apiKey: 'vhk_wrong' });
    const denied = await bad.GET('/folders');
    assert.equal(denied.error?.error.code, 'unauthorized');

    await waitForVideo(s, up.video_id, (v) => v.status === 'ready');
  });
});
