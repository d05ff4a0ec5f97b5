import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { planJitSegments } from '../../lib/media/jit';
import { MAX_SAMPLES, mp4KeyframeIndex } from '../../lib/media/mp4index';

const run = promisify(execFile);

/** A reader over a buffer that counts what it was asked for. */
function counted(buf: Buffer) {
  const c = { bytes: 0, reads: 0 };
  const read = async (o: number, l: number) => {
    c.bytes += l;
    c.reads++;
    return buf.subarray(o, o + l);
  };
  return { read, c };
}
const index = (b: Buffer) => mp4KeyframeIndex(counted(b).read, b.length);

/** Offset of a box's size field: the first `type` after `from`. */
const boxStart = (buf: Buffer, type: string, from = 0) => buf.indexOf(Buffer.from(type, 'latin1'), from) - 4;

/**
 * The file with the first track's edit list replaced by `entries` ([duration in movie units,
 * media time in media units]; -1 = an empty edit), every enclosing box resized. The moov is at the
 * end (no faststart), so the sample data does not move.
 */
function withEdits(buf: Buffer, entries: Array<[number, number]>): Buffer {
  const moov = boxStart(buf, 'moov');
  assert.ok(moov > boxStart(buf, 'mdat'), 'moov after mdat');
  const trak = boxStart(buf, 'trak', moov);
  const edts = boxStart(buf, 'edts', trak);
  const elst = boxStart(buf, 'elst', edts);
  const oldSize = buf.readUInt32BE(elst);
  const box = Buffer.alloc(16 + 12 * entries.length);
  box.writeUInt32BE(box.length, 0);
  box.write('elst', 4, 'latin1');
  box.writeUInt32BE(0, 8); // version 0, flags 0
  box.writeUInt32BE(entries.length, 12);
  entries.forEach(([duration, time], i) => {
    box.writeUInt32BE(duration, 16 + 12 * i);
    box.writeInt32BE(time, 20 + 12 * i);
    box.writeUInt32BE(0x00010000, 24 + 12 * i); // rate 1.0
  });
  const out = Buffer.concat([buf.subarray(0, elst), box, buf.subarray(elst + oldSize)]);
  const delta = box.length - oldSize;
  for (const at of [moov, trak, edts]) out.writeUInt32BE(out.readUInt32BE(at) + delta, at);
  return out;
}

/** The first track's single media edit: [duration, media time]. */
function mediaEdit(buf: Buffer): [number, number] {
  const elst = boxStart(buf, 'elst', boxStart(buf, 'trak', boxStart(buf, 'moov')));
  assert.equal(buf.readUInt32BE(elst + 12), 1);
  return [buf.readUInt32BE(elst + 16), buf.readInt32BE(elst + 20)];
}

/** The movie and the video track's timescales. */
function timescales(buf: Buffer): { movie: number; media: number } {
  const mvhd = boxStart(buf, 'mvhd');
  const mdhd = boxStart(buf, 'mdhd', boxStart(buf, 'trak', boxStart(buf, 'moov')));
  return { movie: buf.readUInt32BE(mvhd + 20), media: buf.readUInt32BE(mdhd + 20) };
}

/**
 * SPEC §23 hostile input: a source whose index lies (edit lists, negative timestamps, a moov
 * claiming 10 h for 10 s of data, 100,000 tiny samples) is refused or handled without unbounded
 * work. (The 10-hour moov and a count the table does not hold: test/unit/media-jit.test.ts.)
 */
describe('MP4 keyframe index: hostile tables', function () {
  this.timeout(120_000);
  let dir: string;
  let clip: Buffer;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-mp4index-'));
    const file = path.join(dir, 'b.mp4');
    // B-frames (x264 veryfast): one media edit with a positive media time (the B-frame lead); moov at the end.
    await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=160x90:rate=30:duration=20', '-c:v', 'libx264', '-preset', 'veryfast', '-g', '60', '-keyint_min', '60', '-sc_threshold', '0', file]);
    clip = fs.readFileSync(file);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('edit lists: a second media edit, an empty edit after the media, a negative media time are refused', async () => {
    const [duration, time] = mediaEdit(clip);
    assert.ok(time > 0, 'x264 with B-frames: the media edit skips the lead');
    assert.ok((await index(withEdits(clip, [[duration, time]]))).ok, 'the rewrite itself is sound');
    assert.deepEqual(await index(withEdits(clip, [[duration / 2, time], [duration / 2, time]])), { ok: false, reason: 'an edit list with 2 media edits' });
    assert.deepEqual(await index(withEdits(clip, [[duration, time], [1000, -1]])), { ok: false, reason: 'an empty edit after the media edit' });
    assert.deepEqual(await index(withEdits(clip, [[duration, -5]])), { ok: false, reason: 'a negative edit media time' });
  });

  it('a leading empty edit delays every keyframe; the delayed start makes no plan', async () => {
    const [duration, time] = mediaEdit(clip);
    const { movie } = timescales(clip);
    const plain = await index(clip);
    const delayed = await index(withEdits(clip, [[2 * movie, -1], [duration, time]]));
    assert.ok(plain.ok && delayed.ok);
    assert.deepEqual(
      delayed.index.keyframes.map((k) => Math.round((k.time - 2) * 1e6) / 1e6),
      plain.index.keyframes.map((k) => Math.round(k.time * 1e6) / 1e6),
    );
    assert.equal(planJitSegments(delayed.index.keyframes.map((k) => k.time), delayed.index.durationSeconds, 6, 12), null, 'first keyframe at 2 s');
  });

  it('negative timestamps (a media edit starting past the first frames) are indexed, and no plan comes of them', async () => {
    const [duration] = mediaEdit(clip);
    const { media } = timescales(clip);
    const r = await index(withEdits(clip, [[duration, 5 * media]]));
    assert.ok(r.ok);
    assert.ok(r.index.keyframes[0].time < -4, `first keyframe at ${r.index.keyframes[0].time} s`);
    assert.equal(planJitSegments(r.index.keyframes.map((k) => k.time), r.index.durationSeconds, 6, 12), null);
  });

  it('100,000 tiny samples: indexed from the moov alone, in bounded time', async () => {
    const file = path.join(dir, 'tiny.mp4');
    // 100 s at 1000 fps of 16x16: 100,000 samples of a few bytes, a keyframe every 2 s.
    await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=s=16x16:r=1000:d=100', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '2000', '-keyint_min', '2000', '-sc_threshold', '0', file]);
    const buf = fs.readFileSync(file);
    const { read, c } = counted(buf);
    const t0 = performance.now();
    const r = await mp4KeyframeIndex(read, buf.length);
    const ms = performance.now() - t0;
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.index.keyframes.length, 50);
    assert.ok(Math.abs(r.index.durationSeconds - 100) < 0.01);
    const moovSize = buf.readUInt32BE(boxStart(buf, 'moov'));
    assert.ok(c.bytes <= moovSize + 64 * 1024, `read ${c.bytes} bytes for a ${moovSize}-byte moov (file ${buf.length})`);
    assert.ok(ms < 2000, `${ms.toFixed(0)} ms`);
    assert.equal(planJitSegments(r.index.keyframes.map((k) => k.time), r.index.durationSeconds, 6, 12)!.length, 17);
    // Beyond the bound, refused from the count alone (no per-sample work).
    const huge = Buffer.from(buf);
    huge.writeUInt32BE(MAX_SAMPLES + 1, boxStart(huge, 'stsz') + 16);
    const t1 = performance.now();
    assert.deepEqual(await index(huge), { ok: false, reason: `${MAX_SAMPLES + 1} video samples (over ${MAX_SAMPLES})` });
    assert.ok(performance.now() - t1 < 500);
  });
});
