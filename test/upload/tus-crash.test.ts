import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import request from 'supertest';
import { isStatus } from '../support/flow';
import { spawnApi } from '../support/child';
import { onTeardown } from '../support/hooks';
import { makeClip } from '../support/media';
import { startStack } from '../support/stack';
import { tusHead, tusUpload } from './tus-helpers';

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

// The API that receives the bytes dies mid-upload (SIGKILL) and comes back on the same address:
// the client resumes from the offset the store kept, and the last byte still starts processing.
for (const driver of ['local', 's3'] as const) {
  describe(`tus: the API killed mid-upload (${driver} storage)`, function () {
    it('resumes from the stored offset after a restart and reaches ready', async function () {
      this.timeout(240_000);
      const s = await startStack({ storage: driver });
      const port = await freePort();
      const env = { ...s.env, PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` };
      let api = await spawnApi(env);
      onTeardown(() => api.kill());
      const clip = await makeClip({ width: 640, height: 360, seconds: 4 });
      const size = fs.statSync(clip).size;
      const init = await request(env.PUBLIC_BASE_URL)
        .post('/v1/upload/init')
        .set('Authorization', `Bearer ${s.ws.fullKey}`)
        .send({ filename: 'crash.mp4', size, content_type: 'video/mp4', upload_protocol: 'tus' });
      assert.equal(init.status, 201, JSON.stringify(init.body));
      const url: string = init.body.upload_url;

      const first = tusUpload(clip, { uploadUrl: url, abortAt: 0.4, chunkSize: 16 * 1024 });
      await first.aborted;
      await api.kill('SIGKILL');
      api = await spawnApi(env);

      const head = await tusHead(url);
      assert.equal(head.status, 200);
      const offset = Number(head.headers.get('upload-offset'));
      assert.ok(offset > 0 && offset < size, `offset ${offset} of ${size}`);
      const second = tusUpload(clip, { uploadUrl: url, chunkSize: 16 * 1024 });
      await second.done;
      assert.equal(second.patchOffsets[0], offset, 'resumed, not restarted');

      const deadline = Date.now() + 120_000;
      let v: Record<string, unknown> = {};
      while (Date.now() < deadline) {
        v = (await s.get(`/v1/videos/${init.body.video_id}`)).body;
        if (isStatus('ready')(v)) break;
        await new Promise((r) => setTimeout(r, 300));
      }
      assert.equal(v.status, 'ready', `${JSON.stringify(v)}\n${api.output()}`);
      await api.kill('SIGTERM');
    });
  });
}
