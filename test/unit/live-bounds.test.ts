import assert from 'node:assert/strict';
import { FeedBounds, type FlvPacket } from '../../lib/live/bounds';
import { h264SpsSize } from '../../lib/live/sps';

// SPSs x264 wrote (ffmpeg testsrc, 640x360 and 3840x2160), as they travel in-band in keyframes.
const SPS_360P = Buffer.from('6742c016da0280bfe5c044000003000400000300783c58ba80', 'hex');
const SPS_2160P = Buffer.from('6742c033da00f0010fb0110000030001000003001e0f1832a0', 'hex');

/** An FLV video tag body (legacy AVC, NALU packet) carrying these NAL units with 4-byte lengths. */
function avcFrame(dts: number, key: boolean, nals: Buffer[]): FlvPacket {
  const body = Buffer.concat(nals.flatMap((n) => [Buffer.from([0, 0, (n.length >> 8) & 0xff, n.length & 0xff]), n]));
  return { codec_type: 9, dts, data: Buffer.concat([Buffer.from([(key ? 0x10 : 0x20) | 7, 1, 0, 0, 0]), body]) };
}
const aac = (dts: number): FlvPacket => ({ codec_type: 8, dts, data: Buffer.from([0xaf, 1, 0x21, 0x10]) });
const slice = Buffer.from([0x65, 0x88, 0x80, 0x40]);

describe('live: input bounds on every packet (lib/live/bounds.ts)', () => {
  it('reads the picture size of an in-band SPS; a hostile SPS fails fast', () => {
    assert.deepEqual(h264SpsSize(SPS_360P), { width: 640, height: 360 });
    assert.deepEqual(h264SpsSize(SPS_2160P), { width: 3840, height: 2160 });
    // pic_order_cnt_type 1 with a cycle count past 2^32: node-media-server's parser loops for minutes.
    const hostile = Buffer.from([0x67, 0x42, 0xc0, 0x16, 0x88, 0x4a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xff, 0xff]);
    const t = Date.now();
    assert.equal(h264SpsSize(hostile), null);
    assert.ok(Date.now() - t < 100);
    assert.equal(h264SpsSize(Buffer.alloc(0)), null);
  });

  it('drops a switch to 2160p in a keyframe, and a codec change', () => {
    const b = new FeedBounds();
    assert.equal(b.check(avcFrame(0, true, [SPS_360P, slice])), null);
    assert.equal(b.check(aac(0)), null);
    assert.equal(b.check(avcFrame(66, false, [slice])), null);
    assert.match(b.check(avcFrame(133, true, [SPS_2160P, slice]))!, /3840x2160 is over 1080p/);
    const c = new FeedBounds();
    assert.equal(c.check(aac(0)), null);
    assert.match(c.check({ codec_type: 8, dts: 20, data: Buffer.from([0x2f, 0]) })!, /audio codec FLV id 2 is not accepted/);
    const v = new FeedBounds();
    assert.equal(v.check(avcFrame(0, true, [SPS_360P, slice])), null);
    assert.match(v.check({ codec_type: 9, dts: 40, data: Buffer.from([0x12, 0, 0]) })!, /FLV id 2 is not accepted/);
    const hevc = new FeedBounds();
    assert.equal(hevc.check(avcFrame(0, true, [SPS_360P])), null);
    assert.match(hevc.check({ codec_type: 9, dts: 40, data: Buffer.from([0x90 | 1, ...Buffer.from('hvc1'), 0, 0, 0]) })!, /changed from h264 to hevc/);
  });

  it('counts frames on timestamps (≤ 60 fps) and bytes on the clock (≤ 20 Mb/s over 10 s)', () => {
    const fps = new FeedBounds();
    let why: string | null = null;
    for (let i = 0; i <= 90 * 6 && !why; i++) why = fps.check(avcFrame(Math.round((i * 1000) / 90), i % 90 === 0, i % 90 === 0 ? [SPS_360P, slice] : [slice]));
    assert.match(why!, /90 fps is over 60/);
    const ok = new FeedBounds();
    for (let i = 0; i <= 60 * 12; i++) assert.equal(ok.check(avcFrame(Math.round((i * 1000) / 60), false, [slice])), null);

    let now = 0;
    const rate = new FeedBounds({ now: () => now });
    const chunk: FlvPacket = { codec_type: 9, dts: 0, data: Buffer.concat([Buffer.from([0x27, 1, 0, 0, 0]), Buffer.alloc(99_995)]) };
    // 16 Mb/s for 30 s: within bounds.
    for (let t = 0; t < 30_000; t += 50) {
      now = t;
      assert.equal(rate.check(chunk), null);
    }
    // 80 Mb/s: over the window's budget in about 2.5 s.
    const fast = new FeedBounds({ now: () => now });
    let at = -1;
    for (let t = 0; t < 10_000 && at < 0; t += 10) {
      now = t;
      if (fast.check(chunk)) at = t;
    }
    assert.ok(at > 2000 && at < 3000, `dropped at ${at} ms`);
  });
});
