import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import request from 'supertest';
import { startStack, type Stack } from '../support/stack';
import { asCmyk, craftedPng, solidImage } from './images';

/** SPEC §24 profiles: made from a body or a URL, read, listed, deleted; hostile input refused with nothing left behind. */
describe('watermark profiles (SPEC §24)', function () {
  this.timeout(120_000);
  let s: Stack;
  let png: Buffer;
  let server: http.Server;
  let base: string;
  const served = new Map<string, Buffer>();

  const postImage = (body: Buffer, type: string, query = '', key = s.ws.fullKey) =>
    request(s.url).post(`/v1/watermarks${query}`).set('Authorization', `Bearer ${key}`).set('Content-Type', type).send(body);
  const nothingLeft = async () => {
    assert.equal((await s.db('watermarks').where({ workspace_id: s.ws.id }).whereNull('deleted_at')).length, live.length, 'no row half-made');
    assert.equal((await s.storage.list(`watermarks/${s.ws.id}/`)).length, stored, 'no image half-stored');
  };
  let live: string[] = [];
  let stored = 0;

  before(async () => {
    s = await startStack({ workers: [] });
    png = await solidImage('magenta', 64, 32);
    server = http.createServer((req, res) => {
      const body = served.get(req.url ?? '');
      if (!body) return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'image/png' }).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('makes a profile from a PNG body with its placement, and reads and lists it', async () => {
    const res = await postImage(png, 'image/png', '?position=top-left&padding=0.1&scale=0.2&opacity=0.5&name=Logo').expect(201);
    assert.match(res.body.id, /^wm_[0-9a-f]{32}$/);
    assert.deepEqual({ ...res.body, id: undefined, created_at: undefined }, {
      id: undefined, created_at: undefined, name: 'Logo', content_type: 'image/png', width: 64, height: 32, size_bytes: png.length,
      position: 'top-left', padding: 0.1, scale: 0.2, opacity: 0.5,
    });
    live.push(res.body.id);
    stored++;
    assert.deepEqual((await s.get(`/v1/watermarks/${res.body.id}`).expect(200)).body, res.body);
    assert.deepEqual((await s.get('/v1/watermarks').expect(200)).body.data.map((w: { id: string }) => w.id), [res.body.id]);
    const [key] = await s.storage.list(`watermarks/${s.ws.id}/`);
    const obj = await s.storage.get(key);
    const chunks: Buffer[] = [];
    for await (const c of obj!.body) chunks.push(c as Buffer);
    assert.deepEqual(Buffer.concat(chunks), png);
    // The image as it was sent, for a client (the dashboard) to show.
    const image = await s.get(`/v1/watermarks/${res.body.id}/image`).expect(200);
    assert.equal(image.headers['content-type'], 'image/png');
    assert.equal(image.headers['x-content-type-options'], 'nosniff');
    assert.deepEqual(image.body, png);
  });

  it('makes a profile from a URL (JSON body), with the defaults', async () => {
    const jpg = await solidImage('yellow', 40, 40, 'jpg');
    served.set('/logo', jpg);
    const res = await s.post('/v1/watermarks', { url: `${base}/logo` }).expect(201);
    assert.equal(res.body.content_type, 'image/jpeg');
    assert.deepEqual([res.body.position, res.body.padding, res.body.scale, res.body.opacity], ['bottom-right', 0.05, 0.15, 1]);
    live.push(res.body.id);
    stored++;
  });

  it('refuses hostile images with stable codes and leaves nothing behind', async () => {
    const jpg = await solidImage('yellow', 40, 40, 'jpg');
    const cases: Array<[Buffer, string, number, string]> = [
      [Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'image/png', 415, 'unsupported_image_type'],
      [Buffer.concat([png, Buffer.alloc(1024 * 1024)]), 'image/png', 413, 'image_too_large'],
      [craftedPng(5000, 8), 'image/png', 400, 'image_dimensions_too_large'],
      [craftedPng(16, 16, zlib.deflateSync(Buffer.alloc(20_000_000))), 'image/png', 400, 'image_decompression_bomb'],
      [await solidImage('red', 16, 16, 'png', 3), 'image/png', 400, 'image_animated'],
      [asCmyk(jpg), 'image/jpeg', 400, 'image_cmyk'],
      [png.subarray(0, png.length - 20), 'image/png', 400, 'invalid_image'],
    ];
    for (const [body, type, status, code] of cases) {
      const res = await postImage(body, type);
      assert.equal(res.status, status, `${code}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, code);
    }
    served.set('/svg', Buffer.from('<svg/>'));
    assert.equal((await s.post('/v1/watermarks', { url: `${base}/svg` })).body.error.code, 'unsupported_image_type');
    assert.equal((await s.post('/v1/watermarks', { url: `${base}/missing` })).body.error.code, 'url_fetch_failed');
    assert.equal((await s.post('/v1/watermarks', { url: 'file:///etc/passwd' })).body.error.code, 'url_not_allowed');
    await nothingLeft();
  });

  it('refuses absurd placement numbers (invalid_parameters, naming the field)', async () => {
    for (const q of ['padding=0.9', 'scale=1.5', 'opacity=-1', 'scale=NaN', 'padding=1e9', 'position=middle', 'opacity=Infinity']) {
      const res = await postImage(png, 'image/png', `?${q}`).expect(400);
      assert.equal(res.body.error.code, 'invalid_parameters', q);
      assert.equal(res.body.error.details[0].field, q.split('=')[0], q);
    }
    assert.equal((await s.post('/v1/watermarks', { url: `${base}/logo`, scale: 7 })).body.error.code, 'invalid_parameters');
    await nothingLeft();
  });

  it('scopes ids to the workspace: unknown, another workspace\u2019s and deleted ids are refused', async () => {
    const other = await s.newWorkspace();
    const theirs = (await postImage(png, 'image/png', '', other.fullKey).expect(201)).body.id;
    await s.get(`/v1/watermarks/${theirs}`).expect(404);
    await s.get(`/v1/watermarks/${theirs}/image`).expect(404);
    await s.get('/v1/watermarks/nonsense/image').expect(404);
    await s.get('/v1/watermarks/wm_00000000000000000000000000000000').expect(404);
    await s.get('/v1/watermarks/nonsense').expect(404);
    const init = (extra: Record<string, unknown>) => s.post('/v1/upload/init', { filename: 'a.mp4', size: 1000, content_type: 'video/mp4', ...extra });
    for (const id of [theirs, 'wm_00000000000000000000000000000000', 'x']) {
      const res = await init({ watermark_id: id }).expect(400);
      assert.equal(res.body.error.code, 'invalid_watermark_id');
    }
    // Named, it shows in the read shape; the default applies to a video naming none; null opts out.
    const [mine] = live;
    const named = (await init({ watermark_id: mine }).expect(201)).body.video_id;
    assert.equal((await s.get(`/v1/videos/${named}`).expect(200)).body.watermark_id, mine);
    assert.equal((await s.patch('/v1/watermark-defaults', { default_watermark_id: theirs })).body.error.code, 'invalid_watermark_id');
    assert.deepEqual((await s.patch('/v1/watermark-defaults', { default_watermark_id: mine }).expect(200)).body, { default_watermark_id: mine });
    const byDefault = (await init({}).expect(201)).body.video_id;
    assert.equal((await s.get(`/v1/videos/${byDefault}`).expect(200)).body.watermark_id, mine);
    const none = (await init({ watermark_id: null }).expect(201)).body.video_id;
    assert.equal((await s.get(`/v1/videos/${none}`).expect(200)).body.watermark_id, null);
    // Deleted: no longer listed, read or accepted, the default cleared; videos keep theirs.
    await s.del(`/v1/watermarks/${mine}`).expect(204);
    live = live.filter((id) => id !== mine);
    await s.get(`/v1/watermarks/${mine}`).expect(404);
    await s.get(`/v1/watermarks/${mine}/image`).expect(404);
    assert.deepEqual((await s.get('/v1/watermark-defaults').expect(200)).body, { default_watermark_id: null });
    assert.equal((await init({ watermark_id: mine }).expect(400)).body.error.code, 'invalid_watermark_id');
    assert.equal((await s.get(`/v1/videos/${named}`).expect(200)).body.watermark_id, mine);
    assert.ok((await s.storage.list(`watermarks/${s.ws.id}/`)).length >= 1, 'the image stays for the videos made with it');
  });
});
