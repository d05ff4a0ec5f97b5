import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { imageRenders } from '../../lib/outputs/images';
import { keys } from '../../lib/storage';
import { uploadFormA } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { cdnGet, probeBytes } from './helpers';

interface AtReady {
  payload: Record<string, any>;
  thumbnail: { status: number; type: string; body: Buffer };
  animated: { status: number; type: string; body: Buffer };
  /** The ladder's rendition rows right after the images came back. */
  ladder: Array<{ name: string; status: string }>;
}

/**
 * Issue 22 item 2: a `video.ready` receiver that asks for images at once gets them, while the
 * ladder is still encoding (the video plays from its passthrough). The ladder is made slow on
 * purpose (x264 `placebo`) so that "still encoding" holds on any machine.
 */
describe('Outputs: images at the moment a video turns ready (issue 22)', function () {
  this.timeout(240_000);
  let s: Stack;
  let server: http.Server;
  let atReady: Promise<AtReady>;
  let videoId: string;

  before(async function () {
    this.timeout(120_000);
    s = await startStack({ env: { X264_PRESET: 'placebo' } });
    let resolve!: (v: AtReady) => void;
    let reject!: (e: unknown) => void;
    atReady = new Promise((res, rej) => ((resolve = res), (reject = rej)));
    // The receiver: on video.ready it asks for a thumbnail and an animated GIF right away.
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        res.writeHead(204).end();
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (event.type !== 'video.ready') return;
        const id = event.data.video.id;
        const get = async (q: string) => {
          const r = await cdnGet(s, `/v/${id}/${q}`);
          return { status: r.status, type: String(r.headers['content-type']), body: r.body as Buffer };
        };
        Promise.all([get('thumbnail.jpg?time=1&width=160'), get('animated.gif?start=0&end=2&fps=5&width=160')])
          .then(async ([thumbnail, animated]) => {
            const ladder = await s.db('renditions').where({ video_id: event.data.video.uuid }).select('name', 'status');
            resolve({ payload: event.data.video, thumbnail, animated, ladder });
          })
          .catch(reject);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    assert.equal((await s.post('/v1/webhooks', { url, events: ['video.ready'] })).status, 201);
    const clip = await makeClip({ width: 640, height: 360, seconds: 8 });
    videoId = (await uploadFormA(s, clip, { extra: { visibility: 'public', mp4_support: 'capped_1080p' } })).id;
  });
  after(async () => {
    // Stops the slow ladder.
    if (videoId) await s.del(`/v1/videos/${videoId}`);
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
  });

  it('a video.ready receiver gets a thumbnail and an animated GIF at once, rendered from the passthrough', async () => {
    const got = await atReady;
    assert.ok(
      got.ladder.some((r) => r.status !== 'ready'),
      `the ladder was still encoding when the images were asked for: ${JSON.stringify(got.ladder)}`,
    );
    assert.equal(got.thumbnail.status, 200, got.thumbnail.body.toString().slice(0, 300));
    assert.equal(got.thumbnail.type, 'image/jpeg');
    const still = await probeBytes(got.thumbnail.body, 'jpg');
    assert.equal(still.streams[0].width, 160);
    assert.equal(got.animated.status, 200, got.animated.body.toString().slice(0, 300));
    assert.equal(got.animated.type, 'image/gif');
    const gif = await probeBytes(got.animated.body, 'gif', true);
    assert.equal(gif.streams[0].width, 160);
    assert.equal(Number(gif.streams[0].nb_read_frames), 10);
  });

  it('the ready read shows the passthrough it plays from, and the MP4 it will make as preparing', async () => {
    const { payload } = await atReady;
    const source = payload.renditions.find((r: { name: string }) => r.name === 'source');
    // The passthrough is not measured against the source (SPEC §21 quality is for encoded rungs).
    assert.deepEqual(source, { name: 'source', width: 640, height: 360, bitrate: source?.bitrate, status: 'ready', progress: 100, quality: null });
    assert.ok(source.bitrate > 0);
    assert.deepEqual(payload.static_renditions, [{ name: 'capped_1080p.mp4', status: 'preparing', size_bytes: null, url: null }]);
    const read = (await s.get(`/v1/videos/${videoId}`).expect(200)).body;
    if (read.renditions.some((r: { name: string; status: string }) => r.name !== 'source' && r.status !== 'ready')) {
      assert.ok(read.renditions.some((r: { name: string }) => r.name === 'source'), 'listed while it is what plays');
      assert.equal(read.static_renditions[0].status, 'preparing');
    }
  });

  it('zero-frame animations are 400', async () => {
    for (const q of ['animated.gif?start=0.5&end=0.51&fps=1', 'animated.webp?start=0&end=0.5&fps=1']) {
      const r = await cdnGet(s, `/v/${videoId}/${q}`);
      assert.equal(r.status, 400, q);
      assert.equal(JSON.parse(r.body.toString()).error.code, 'invalid_parameters', q);
    }
  });

  it('a failed render answers 503 render_failed with Retry-After, and is not retried on every request', async () => {
    const read = (await s.get(`/v1/videos/${videoId}`).expect(200)).body;
    const from = read.renditions.find((r: { name: string; status: string }) => r.status === 'ready' && r.name !== 'source')?.name ?? 'source';
    // Break what the renderer reads: every segment of every rendition it could pick, and the
    // original (a just-in-time rendition's missing segment is otherwise cut again from it: SPEC §23).
    for (const name of ['source', from]) {
      for (const key of await s.storage.list(keys.rendition(s.ws.id, read.uuid, name))) if (key.endsWith('.ts')) await s.storage.deletePrefix(key);
    }
    await s.storage.deletePrefix(read.storage_key);
    const before = imageRenders.failures;
    const q = `/v/${videoId}/thumbnail.png?time=3&width=120`;
    const first = await cdnGet(s, q);
    assert.equal(first.status, 503, first.body.toString());
    assert.equal(JSON.parse(first.body.toString()).error.code, 'render_failed');
    assert.ok(Number(first.headers['retry-after']) >= 1);
    assert.equal(imageRenders.failures, before + 1);
    for (let i = 0; i < 3; i++) {
      const again = await cdnGet(s, q);
      assert.equal(again.status, 503);
      assert.equal(JSON.parse(again.body.toString()).error.code, 'render_failed');
    }
    assert.equal(imageRenders.failures, before + 1, 'answered from the negative cache, no new attempt');
  });
});
