import assert from 'node:assert/strict';
import { allRenditionsReady, isStatus, uploadFormA, waitForVideo } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';

async function master(s: Stack, v: Record<string, any>): Promise<string> {
  const res = await fetch(v.hls_url);
  assert.equal(res.status, 200);
  return res.text();
}

/** Issue 11: an eligible H.264/AAC source is playable from a remux before any encode; others fall back. */
describe('passthrough rendition (real ffmpeg + Temporal)', function () {
  this.timeout(180_000);
  let s: Stack;
  before(async () => {
    s = await startStack();
  });

  it('an eligible source is ready with the passthrough alone, which leaves the master once the ladder is in', async () => {
    const clip = await makeClip({ width: 640, height: 360, seconds: 4 });
    const { id } = await uploadFormA(s, clip);
    const ready = await waitForVideo(s, id, isStatus('ready'));
    const first = await master(s, ready);
    if (!allRenditionsReady(ready)) {
      assert.match(first, /source\/index\.m3u8/);
      assert.match(first, /CODECS="avc1\.[0-9A-F]{6},mp4a\.40\.2"/);
    }
    const segs = await fetch(new URL('source/index.m3u8', ready.hls_url));
    assert.equal(segs.status, 200, 'the passthrough playlist is served by the CDN');
    const done = await waitForVideo(s, id, allRenditionsReady);
    const last = await master(s, done);
    assert.doesNotMatch(last, /source\//);
    assert.match(last, /240p\/index\.m3u8/);
    assert.match(last, /360p\/index\.m3u8/);
  });

  for (const [what, clip] of [
    ['HEVC', () => makeClip({ width: 640, height: 360, seconds: 3, codec: 'hevc' })],
    ['keyframes 13 s apart (over 2 segments)', () => makeClip({ width: 426, height: 240, seconds: 14, gop: 312 })],
  ] as const) {
    it(`${what}: no passthrough; its rungs, encoded per segment on request, make it playable (SPEC §23)`, async () => {
      const { id } = await uploadFormA(s, await clip());
      const ready = await waitForVideo(s, id, isStatus('ready'));
      const first = await master(s, ready);
      // H.264 variants at the rungs' sizes under their own names (issue 47), never the source.
      assert.match(first, /RESOLUTION=\d+x\d+,CODECS="avc1\.[0-9A-F]{6}/i);
      assert.doesNotMatch(first, /source\//);
      const variant = /^(\d+p)\/index\.m3u8$/m.exec(first)![1];
      assert.equal((await fetch(new URL(`${variant}/seg_00000.ts`, ready.hls_url))).status, 200, 'its first segment is there, encoded on request or by the ladder');
      const done = await waitForVideo(s, id, allRenditionsReady);
      assert.doesNotMatch(await master(s, done), /source\//);
    });
  }
});
