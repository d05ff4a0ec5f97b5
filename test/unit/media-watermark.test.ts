import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { chunkLadderArgs } from '../../lib/media/chunks';
import { alignedLadderArgs, onRequestFilter } from '../../lib/media/jitEncode';
import { thumbnailArgs } from '../../lib/media/args';
import { markBox, markedFilter, type Mark } from '../../lib/media/watermark';
import { inspectImage, WatermarkImageError } from '../../lib/watermarks/image';
import { LADDER } from '../../lib/media/ladder';
import { craftedPng } from '../watermarks/images';

const mark: Mark = { file: '/tmp/m/mark.png', format: 'png', width: 200, height: 100, position: 'bottom-right', padding: 0.05, scale: 0.15, opacity: 1 };

describe('watermark filter builder (SPEC §24)', () => {
  it('places the box by fractions of the frame, in whole pixels', () => {
    // 0.15 × 1280 = 192 wide, 96 high (2:1); margins 64 and 36.
    assert.deepEqual(markBox(mark, { width: 1280, height: 720 }), { x: 1024, y: 588, width: 192, height: 96 });
    assert.deepEqual(markBox({ ...mark, position: 'top-left' }, { width: 1280, height: 720 }), { x: 64, y: 36, width: 192, height: 96 });
    assert.deepEqual(markBox({ ...mark, position: 'center' }, { width: 1280, height: 720 }), { x: 544, y: 312, width: 192, height: 96 });
    // Portrait: the width is a fraction of the height.
    assert.deepEqual(markBox(mark, { width: 720, height: 1280 }), { x: 492, y: 1120, width: 192, height: 96 });
    // scale 0: the image's own size; larger than the frame: shrunk to fit, at the corner.
    assert.deepEqual(markBox({ ...mark, scale: 0 }, { width: 640, height: 360 }), { x: 408, y: 242, width: 200, height: 100 });
    assert.deepEqual(markBox({ ...mark, scale: 1, padding: 0.5 }, { width: 100, height: 40 }), { x: 0, y: 0, width: 80, height: 40 });
  });

  it('is the chain alone without a mark, and overlays the movie source with one', () => {
    assert.equal(markedFilter({ chain: 'scale=640:360', frame: { width: 640, height: 360 } }), 'scale=640:360');
    assert.equal(markedFilter({ then: 'scale=2:2', frame: { width: 0, height: 0 } }), 'scale=2:2');
    assert.equal(
      markedFilter({ chain: 'scale=640:360', frame: { width: 640, height: 360 }, mark: { ...mark, opacity: 0.5 }, input: '[v0]', output: '[o0]', tag: 'wm0' }),
      '[v0]scale=640:360[wm0base];' +
        'movie=filename=/tmp/m/mark.png:f=png_pipe,scale=96:48:flags=lanczos,format=rgba,colorchannelmixer=aa=0.5[wm0img];' +
        '[wm0base][wm0img]overlay=x=512:y=294:eof_action=repeat[o0]',
    );
    assert.throws(() => markedFilter({ frame: { width: 1, height: 1 }, mark: { ...mark, file: "/tmp/a'b;c.png" } }), RangeError);
  });

  it('reaches every rung of a chunk and of an aligned chunk, each at its own size', () => {
    const rungs = LADDER.slice(0, 2).map((r) => ({ ...r, width: Math.round((r.height * 16) / 9 / 2) * 2 }));
    const chunk = chunkLadderArgs({ input: 'in', outputRoot: 'out', rungs, chunk: { index: 0, start: 0, end: null }, hasAudio: false, segmentSeconds: 6, mark });
    const graph = chunk[chunk.indexOf('-filter_complex') + 1];
    assert.equal(graph.match(/overlay=/g)?.length, 2);
    assert.match(graph, /\[v1\]scale=640:360\[wm1base\]/);
    const plain = chunkLadderArgs({ input: 'in', outputRoot: 'out', rungs, chunk: { index: 0, start: 0, end: null }, hasAudio: false, segmentSeconds: 6 });
    assert.doesNotMatch(plain.join(' '), /movie=|overlay/);
    const enc = { fps: 30, preset: 'veryfast', crf: 23 };
    const aligned = alignedLadderArgs({
      plan: { offset: 0.2, durationSeconds: 4 }, rungs: rungs.map((r) => ({ ...r, ...enc })),
      chunk: { index: 0, first: 0, last: 1, boundaries: [0, 2], end: 4 }, input: 'in', outputRoot: 'out', mark,
    });
    // The on-request encode of a rung and the ladder's make the same picture: one filter.
    assert.ok(aligned[aligned.indexOf('-filter_complex') + 1].includes(onRequestFilter({ width: 640, height: 360 }, mark, { input: '[v1]', output: '[o1]', tag: 'wm1' })));
  });

  it('burns the thumbnail at the source size, before its downscale', () => {
    const args = thumbnailArgs({ input: 'in', output: 'o.jpg', atSeconds: 1, mark, frame: { width: 1920, height: 1080 } });
    const vf = args[args.indexOf('-vf') + 1];
    assert.match(vf, /overlay=x=1536:y=882:eof_action=repeat,scale='min\(1280,iw\)':-2$/);
  });
});

function png(width: number, height: number, opts: { idat?: Buffer; extra?: Array<[string, Buffer]> } = {}): Buffer {
  return craftedPng(width, height, opts.idat, opts.extra);
}
const code = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    if (err instanceof WatermarkImageError) return `${err.status} ${err.code}`;
    throw err;
  }
  return 'accepted';
};

describe('watermark image inspection (SPEC §24)', () => {
  it('accepts a PNG and a JPEG and reads their size', () => {
    assert.deepEqual(inspectImage(png(40, 20)), { format: 'png', contentType: 'image/png', width: 40, height: 20 });
    const sof = Buffer.from([0xff, 0xc0, 0, 17, 8, 0, 30, 0, 50, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
    const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8]), sof, Buffer.from([0xff, 0xd9])]);
    assert.deepEqual(inspectImage(jpeg), { format: 'jpeg', contentType: 'image/jpeg', width: 50, height: 30 });
    const cmyk = Buffer.from(jpeg);
    cmyk[11] = 4;
    assert.equal(code(() => inspectImage(cmyk)), '400 image_cmyk');
  });

  it('refuses hostile images with stable codes', () => {
    assert.equal(code(() => inspectImage(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))), '415 unsupported_image_type');
    assert.equal(code(() => inspectImage(Buffer.from('GIF89a......'))), '415 unsupported_image_type');
    assert.equal(code(() => inspectImage(Buffer.alloc(1024 * 1024 + 1))), '413 image_too_large');
    assert.equal(code(() => inspectImage(png(5000, 10))), '400 image_dimensions_too_large');
    assert.equal(code(() => inspectImage(png(4, 4, { extra: [['acTL', Buffer.alloc(8)]] }))), '400 image_animated');
    // 4×4 declared, 10 MB of zeros inside: a bomb.
    assert.equal(code(() => inspectImage(png(4, 4, { idat: zlib.deflateSync(Buffer.alloc(10_000_000)) }))), '400 image_decompression_bomb');
    assert.equal(code(() => inspectImage(png(4, 4).subarray(0, 40))), '400 invalid_image');
    assert.equal(code(() => inspectImage(png(4, 4, { idat: Buffer.from('not zlib') }))), '400 invalid_image');
  });
});
