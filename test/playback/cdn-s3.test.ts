import assert from 'node:assert/strict';
import request from 'supertest';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { binary, readyVideo } from './helpers';

/** The S3 driver answers ranges itself; the CDN must pass them through unchanged. */
describe('Playback: the CDN over the S3 driver', function () {
  let s: Stack;
  let video: Awaited<ReturnType<typeof readyVideo>>;
  const get = (p: string) => request(s.url).get(p).buffer(true).parse(binary);

  before(async function () {
    this.timeout(240_000);
    s = await startStack({ storage: 's3' });
    video = await readyVideo(s, await makeClip({ width: 320, height: 180, seconds: 4 }), 'private');
  });

  it('streams files by token, with Range, 416 and HEAD', async () => {
    const { body } = await s.get(`/v1/playback/${video.id}`);
    const base = `/cdn/v/${body.token}`;
    assert.equal((await get(`/cdn/v/${video.id}/master.m3u8`)).status, 403);
    const master = await get(`${base}/master.m3u8`);
    assert.equal(master.status, 200);
    assert.equal(master.headers['content-type'], 'application/vnd.apple.mpegurl');
    assert.match(master.body.toString(), /^#EXTM3U/);

    const seg = `${base}/${video.rung}/seg_00000.ts`;
    const full = await get(seg);
    assert.equal(full.status, 200);
    const size = full.body.length;
    assert.equal(Number(full.headers['content-length']), size);
    for (const [header, start, end] of [
      ['bytes=10-1009', 10, 1009],
      ['bytes=-100', size - 100, size - 1],
    ] as Array<[string, number, number]>) {
      const r = await get(seg).set('Range', header);
      assert.equal(r.status, 206, header);
      assert.equal(r.headers['content-range'], `bytes ${start}-${end}/${size}`);
      assert.ok(r.body.equals(full.body.subarray(start, end + 1)), header);
    }
    const past = await get(seg).set('Range', `bytes=${size + 5}-`);
    assert.equal(past.status, 416);
    const head = await request(s.url).head(seg);
    assert.equal(head.status, 200);
    assert.equal(Number(head.headers['content-length']), size);
    const thumb = await get(`${base}/thumbnail.jpg`);
    assert.equal(thumb.headers['content-type'], 'image/jpeg');
    assert.deepEqual([...thumb.body.subarray(0, 2)], [0xff, 0xd8]);
  });
});
