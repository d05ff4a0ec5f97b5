import assert from 'node:assert/strict';
import fs from 'node:fs';
import { ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import type { S3Storage } from '../../lib/storage';
import { makeClip } from '../support/media';
import { isStatus, waitForVideo } from '../support/flow';
import { startStack, type Stack } from '../support/stack';
import { eventually, ftypHeader, sendBody, sendFile, sendPadded, serve, videoObjects } from './helpers';

async function importUrl(s: Stack, url: string, extra: Record<string, unknown> = {}) {
  const r = await s.post('/v1/upload/from-url', { workspace_id: s.ws.id, url, ...extra });
  assert.equal(r.status, 202, JSON.stringify(r.body));
  return r;
}

describe('URL import', function () {
  let clip: string;
  before(async function () {
    this.timeout(120_000);
    clip = await makeClip({ width: 320, height: 240, seconds: 2 });
  });

  describe('with loopback allowed (test setting)', () => {
    let s: Stack;
    let origin: string;
    let flakyHits = 0;
    let slowClosed: Promise<void>;
    let markSlowClosed: () => void;
    let slowOpened: Promise<void>;
    let markSlowOpened: () => void;
    before(async function () {
      this.timeout(120_000);
      slowClosed = new Promise((r) => (markSlowClosed = r));
      slowOpened = new Promise((r) => (markSlowOpened = r));
      s = await startStack({ env: { MAX_UPLOAD_BYTES: String(3 * 1024 * 1024) } });
      const server = await serve({
        '/media/clip.mp4': sendFile(clip),
        '/media/My%20Holiday%20Clip.mp4': sendFile(clip, 'application/octet-stream'),
        '/go': (_req, res) => res.writeHead(302, { location: '/media/clip.mp4' }).end(),
        '/to-private': (_req, res) => res.writeHead(302, { location: 'http://10.0.0.1/x' }).end(),
        '/page.html': sendBody('<!doctype html><html><body>Not a video</body></html>', 'text/html'),
        '/data.bin': sendBody('{"error": "nope"}', 'application/octet-stream'),
        '/image': sendBody(Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(100)]), 'video/mp4'),
        '/text.mp4': sendBody('just some words, long enough to be sniffed as plain text by the importer\n'.repeat(3), 'video/mp4'),
        '/empty.mp4': sendBody('', 'video/mp4'),
        '/big-declared.mp4': sendPadded(4 * 1024 * 1024, true),
        '/big-chunked.mp4': sendPadded(4 * 1024 * 1024, false),
        '/flaky.mp4': (req, res) => {
          flakyHits += 1;
          if (flakyHits === 1) return void res.writeHead(503).end('busy');
          sendFile(clip)(req, res);
        },
        '/slow.mp4': (req, res) => {
          markSlowOpened();
          res.writeHead(200, { 'content-type': 'video/mp4' });
          res.write(Buffer.concat([ftypHeader(), Buffer.alloc(64 * 1024)]));
          const timer = setInterval(() => res.write(Buffer.alloc(16 * 1024)), 200);
          res.on('close', () => {
            clearInterval(timer);
            markSlowClosed();
          });
        },
      });
      origin = server.url;
    });

    it('imports a clip (Form B envelope) and it reaches ready', async () => {
      const r = await importUrl(s, `${origin}/media/clip.mp4`, { visibility: 'public', tags: ['imported'] });
      assert.equal(r.body.success, true);
      assert.match(r.body.data.video_id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      assert.equal(r.body.data.status, 'processing');
      assert.equal(typeof r.body.data.message, 'string');
      const id = r.body.data.video_id;
      const v = await waitForVideo(s, id, isStatus('ready'));
      assert.equal(v.title, 'clip');
      assert.equal(v.filename, 'clip.mp4');
      assert.equal(v.visibility, 'public');
      assert.deepEqual(v.tags, ['imported']);
      assert.equal(v.size_bytes, fs.statSync(clip).size);
      assert.equal(v.content_type, 'video/mp4');
      assert.equal((await s.storage.head(v.storage_key))?.size, fs.statSync(clip).size);
    });

    it('follows redirects, and takes the title from the URL path by default (also at /v1 and /api/v1)', async () => {
      const viaRedirect = await importUrl(s, `${origin}/go`);
      const named = await s.post('/api/v1/upload/from-url', { workspace_id: s.ws.id, url: `${origin}/media/My%20Holiday%20Clip.mp4?sig=1` });
      assert.equal(named.status, 202);
      const a = await waitForVideo(s, viaRedirect.body.data.video_id, isStatus('ready'));
      assert.equal(a.title, 'go');
      const b = await waitForVideo(s, named.body.data.video_id, isStatus('ready'));
      assert.equal(b.title, 'My Holiday Clip');
      assert.equal(b.filename, 'My Holiday Clip.mp4');
      assert.equal(b.content_type, null, 'application/octet-stream is not recorded as the video type');
    });

    it('retries a 503 and then succeeds', async () => {
      const r = await importUrl(s, `${origin}/flaky.mp4`);
      await waitForVideo(s, r.body.data.video_id, isStatus('ready'));
      assert.ok(flakyHits >= 2);
    });

    it('ends failed with a clear error_message: 404, HTML, JSON, an image, text, an empty body', async () => {
      const cases: Array<[string, RegExp]> = [
        ['/missing.mp4', /^The URL answered 404 Not Found$/],
        ['/page.html', /did not return a video: it is HTML/],
        ['/data.bin', /did not return a video: it is HTML, XML or JSON/],
        ['/image', /did not return a video: it is a PNG image/],
        ['/text.mp4', /did not return a video: it is text/],
        ['/empty.mp4', /did not return a video: the response body is empty/],
      ];
      const started = await Promise.all(cases.map(([p]) => importUrl(s, origin + p)));
      for (const [i, [p, message]] of cases.entries()) {
        const v = await waitForVideo(s, started[i].body.data.video_id, isStatus('failed'));
        assert.equal(v.error_code, 'import_failed', p);
        assert.match(v.error_message, message, p);
        assert.deepEqual(await videoObjects(s, v.uuid), [], `${p}: nothing stored`);
      }
    });

    it('refuses content past the size limit, declared or streamed, and stores nothing', async () => {
      const declared = await importUrl(s, `${origin}/big-declared.mp4`);
      const chunked = await importUrl(s, `${origin}/big-chunked.mp4`);
      const a = await waitForVideo(s, declared.body.data.video_id, isStatus('failed'));
      assert.equal(a.error_code, 'import_failed');
      assert.match(a.error_message, /more than the 3145728 byte limit/);
      const b = await waitForVideo(s, chunked.body.data.video_id, isStatus('failed'));
      assert.equal(b.error_code, 'import_failed');
      assert.match(b.error_message, /more than 3145728 bytes/);
      assert.deepEqual(await videoObjects(s, b.uuid), []);
    });

    it('a redirect to a private address fails in the worker, naming the address', async () => {
      const r = await importUrl(s, `${origin}/to-private`);
      const v = await waitForVideo(s, r.body.data.video_id, isStatus('failed'));
      assert.equal(v.error_code, 'import_failed');
      assert.match(v.error_message, /not allowed.*10\.0\.0\.1 is not a public address/);
    });

    it('deleting during the download aborts it and removes the video', async () => {
      const r = await importUrl(s, `${origin}/slow.mp4`);
      const id = r.body.data.video_id;
      // The download is under way (on a loaded shard the import activity can start seconds after
      // the request: a delete before it would leave no download to abort).
      await slowOpened;
      await new Promise((res) => setTimeout(res, 500));
      assert.equal((await s.get(`/v1/videos/${id}`)).body.status, 'processing');
      assert.equal((await s.del(`/v1/videos/${id}`)).status, 204);
      await slowClosed;
      await eventually(async () => !(await s.db('videos').where({ id }).first()), 30_000, 'the row to be purged');
      assert.deepEqual(await videoObjects(s, id), []);
    });

    it('403 workspace_mismatch and 400 for bad bodies, in the envelope', async () => {
      const other = await s.newWorkspace();
      const r = await s.post('/v1/upload/from-url', { workspace_id: other.id, url: `${origin}/media/clip.mp4` });
      assert.equal(r.status, 403);
      assert.deepEqual(r.body.success, false);
      assert.equal(r.body.error.code, 'workspace_mismatch');
      for (const body of [{ workspace_id: s.ws.id }, { workspace_id: s.ws.id, url: 42 }, { workspace_id: s.ws.id, url: `${origin}/x`, visibility: 'nope' }]) {
        const bad = await s.post('/v1/upload/from-url', body);
        assert.equal(bad.status, 400, JSON.stringify(body));
        assert.equal(bad.body.success, false);
      }
      assert.equal((await s.post('/v1/upload/from-url', { workspace_id: s.ws.id, url: `${origin}/x` }, s.ws.readKey)).status, 403);
    });
  });

  describe('with S3 storage', () => {
    let s: Stack;
    let origin: string;
    before(async function () {
      this.timeout(120_000);
      s = await startStack({ storage: 's3', env: { MAX_UPLOAD_BYTES: String(20 * 1024 * 1024) } });
      origin = (await serve({ '/clip.mp4': sendFile(clip), '/big.mp4': sendPadded(30 * 1024 * 1024, false) })).url;
    });

    it('streams the import to the bucket and it reaches ready', async () => {
      const r = await importUrl(s, `${origin}/clip.mp4`);
      const v = await waitForVideo(s, r.body.data.video_id, isStatus('ready'));
      assert.equal((await s.storage.head(v.storage_key))?.size, fs.statSync(clip).size);
    });

    it('aborts the multipart upload past the limit: no object is left', async () => {
      const r = await importUrl(s, `${origin}/big.mp4`);
      const v = await waitForVideo(s, r.body.data.video_id, isStatus('failed'));
      assert.match(v.error_message, /more than 20971520 bytes/);
      assert.deepEqual(await videoObjects(s, v.uuid), []);
      const uploads = await (s.storage as S3Storage).client.send(new ListMultipartUploadsCommand({ Bucket: s.config.storage.s3.bucket }));
      assert.deepEqual(uploads.Uploads ?? [], [], 'the parts already sent were discarded');
    });
  });

  describe('with loopback refused (production setting)', () => {
    let s: Stack;
    let origin: string;
    before(async function () {
      this.timeout(120_000);
      s = await startStack({ env: { ALLOW_LOOPBACK_URLS: 'false' }, workers: [] });
      origin = (await serve({ '/clip.mp4': sendFile(clip) })).url;
    });

    it('400 url_not_allowed for loopback, private, link-local/metadata and IPv6 loopback targets; nothing is created', async () => {
      const port = new URL(origin).port;
      const refused = [
        `${origin}/clip.mp4`,
        `http://localhost:${port}/clip.mp4`,
        'http://10.0.0.1/',
        'http://192.168.1.10/video.mp4',
        'http://169.254.169.254/latest/meta-data',
        'http://[::1]/',
        `http://[::ffff:127.0.0.1]:${port}/clip.mp4`,
        'http://0.0.0.0/',
        'ftp://example.com/video.mp4',
        'file:///etc/passwd',
        'http://user:secret@example.com/video.mp4',
        'not a url',
      ];
      for (const url of refused) {
        const r = await s.post('/v1/upload/from-url', { workspace_id: s.ws.id, url });
        assert.equal(r.status, 400, `${url}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.success, false);
        assert.equal(r.body.error.code, 'url_not_allowed', url);
      }
      const list = await s.get('/v1/videos');
      assert.deepEqual(list.body.data, []);
      assert.equal(Number((await s.db('videos').where({ workspace_id: s.ws.id }).count({ n: '*' }))[0].n), 0);
    });
  });
});
