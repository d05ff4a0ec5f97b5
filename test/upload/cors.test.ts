import assert from 'node:assert/strict';
import fs from 'node:fs';
import { putFile } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';

// SPEC §13: upload URLs answer browsers. Local: the API answers with the video's cors_origin
// (default *). S3: the bucket's CORS rules (set by ensureBucket) answer for the presigned URL.
for (const driver of ['local', 's3'] as const) {
  describe(`CORS on upload URLs (${driver} storage)`, function () {
    let s: Stack;
    let clip: string;
    before(async function () {
      this.timeout(120_000);
      s = await startStack({ storage: driver, workers: [] });
      clip = await makeClip({ width: 320, height: 180, seconds: 1 });
    });

    const init = async (extra: Record<string, unknown> = {}) => {
      const r = await s.post('/v1/upload/init', { filename: 'a.mp4', size: fs.statSync(clip).size, content_type: 'video/mp4', ...extra });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body as { upload_url: string; upload_headers: Record<string, string> };
    };
    const preflight = (url: string, origin: string) =>
      fetch(url, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'PUT', 'Access-Control-Request-Headers': 'content-type' } });

    it('the preflight and the PUT answer the page’s origin', async () => {
      const v = await init();
      const pre = await preflight(v.upload_url, 'https://app.example.com');
      assert.ok([200, 204].includes(pre.status), String(pre.status));
      if (driver === 'local') assert.equal(pre.status, 204);
      assert.ok(['*', 'https://app.example.com'].includes(pre.headers.get('access-control-allow-origin') ?? ''), pre.headers.get('access-control-allow-origin') ?? 'none');
      assert.match(pre.headers.get('access-control-allow-methods') ?? '', /PUT/);
      assert.match(pre.headers.get('access-control-allow-headers') ?? '', /content-type/i);
      const put = await putFile(v.upload_url, clip, 'video/mp4', { ...v.upload_headers, Origin: 'https://app.example.com' });
      assert.equal(put.status, 200);
      assert.ok(put.headers.get('access-control-allow-origin'));
    });

    if (driver === 'local') {
      it('cors_origin narrows the answer to that origin, also on errors', async () => {
        const v = await init({ cors_origin: 'https://app.example.com' });
        const pre = await preflight(v.upload_url, 'https://app.example.com');
        assert.equal(pre.headers.get('access-control-allow-origin'), 'https://app.example.com');
        const wrongType = await fetch(v.upload_url, { method: 'PUT', headers: { 'Content-Type': 'text/plain', Origin: 'https://app.example.com' }, body: 'x' });
        assert.equal(wrongType.status, 403);
        assert.equal(wrongType.headers.get('access-control-allow-origin'), 'https://app.example.com');
      });

      it('cors_origin must be an origin', async () => {
        for (const bad of ['app.example.com', 'https://app.example.com/path', 'ftp://x.example', 'https://u:p@x.example', 'javascript:alert(1)']) {
          const r = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 10, content_type: 'video/mp4', cors_origin: bad });
          assert.equal(r.status, 400, bad);
          assert.equal(r.body.error.details[0].field, 'cors_origin');
        }
        const ok = await s.post('/upload/presigned', { workspace_id: s.ws.id, filename: 'a.mp4', file_size: 10, content_type: 'video/mp4', cors_origin: 'http://localhost:5173/' });
        assert.equal(ok.status, 201, JSON.stringify(ok.body));
        const row = await s.db('videos').where({ id: ok.body.data.video_id }).first();
        assert.equal(row.cors_origin, 'http://localhost:5173');
      });
    }
  });
}
