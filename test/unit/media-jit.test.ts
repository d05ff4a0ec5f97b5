import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { jitCutArgs, jitCutOutput, jitPlaylist, jitSegmentIndex, jitWholeArgs, planJitSegments, type JitPlan } from '../../lib/media/jit';
import { mp4KeyframeIndex } from '../../lib/media/mp4index';
import { parseJitPlan } from '../../lib/playback/jit';

const run = promisify(execFile);

const readerOf = (buf: Buffer) => async (o: number, l: number) => buf.subarray(o, o + l);

/** A clip with B-frames (x264 veryfast) and keyframes every 2 s, made once. */
async function clip(dir: string, name: string, extra: string[] = []): Promise<string> {
  const file = path.join(dir, name);
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=160x90:rate=30:duration=20', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=20',
    '-c:v', 'libx264', '-preset', 'veryfast', '-g', '60', '-keyint_min', '60', '-sc_threshold', '0', '-c:a', 'aac', '-b:a', '64k', ...extra, file]);
  return file;
}

async function ffprobeKeyframes(file: string): Promise<number[]> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=pts_time,flags', '-of', 'csv=p=0', file]);
  return stdout.split('\n').filter((l) => l.includes('K')).map((l) => Number(l.split(',')[0])).sort((a, b) => a - b);
}

/** The offset of a box's payload by its four-character type (first match). */
const boxAt = (buf: Buffer, type: string) => buf.indexOf(Buffer.from(type, 'latin1')) + 4;

describe('just-in-time packaging (pure parts, real ffmpeg for the cut)', function () {
  this.timeout(60_000);
  let dir: string;
  let file: string;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-jit-unit-'));
    file = await clip(dir, 'b.mp4');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('reads the same keyframes from the MP4 sample tables as a packet scan, and the B-frame lead', async () => {
    const buf = fs.readFileSync(file);
    const r = await mp4KeyframeIndex(readerOf(buf), buf.length);
    assert.ok(r.ok, JSON.stringify(r));
    const times = r.index.keyframes.map((k) => Math.round(k.time * 1e6) / 1e6);
    assert.deepEqual(times, await ffprobeKeyframes(file));
    assert.ok(r.index.firstDts < 0, 'x264 with B-frames: the first decode time is before 0');
    assert.ok(Math.abs(r.index.durationSeconds - 20) < 0.05);
    assert.ok(r.index.keyframes.every((k, i) => i === 0 || k.bytesBefore > r.index.keyframes[i - 1].bytesBefore));
  });

  it('refuses tables that lie, without unbounded work', async () => {
    const buf = fs.readFileSync(file);
    const index = async (b: Buffer) => mp4KeyframeIndex(readerOf(b), b.length);
    // stsz claims 100,000 samples the table does not hold.
    const many = Buffer.from(buf);
    many.writeUInt32BE(100_000, boxAt(many, 'stsz') + 8);
    assert.deepEqual(await index(many), { ok: false, reason: 'stsz is shorter than its sample count' });
    // Every sample as long as two minutes: a moov claiming 10 hours for 20 s of data. Indexed,
    // but no segment plan comes of it (keyframes far beyond the allowed gap).
    const long = Buffer.from(buf);
    const stts = boxAt(long, 'stts');
    const runs = long.readUInt32BE(stts + 4);
    for (let i = 0; i < runs; i++) long.writeUInt32BE(long.readUInt32BE(stts + 12 + 8 * i) * 3600, stts + 12 + 8 * i);
    const lied = await index(long);
    assert.ok(lied.ok);
    assert.ok(lied.index.durationSeconds > 10 * 3600);
    assert.equal(planJitSegments(lied.index.keyframes.map((k) => k.time), 20, 6, 12), null);
    // A chunk offset past the end of the file.
    const past = Buffer.from(buf);
    past.writeUInt32BE(buf.length + 10, boxAt(past, 'stco') + 8);
    assert.deepEqual(await index(past), { ok: false, reason: 'a chunk starts past the end of the file' });
    // A moov that claims to be larger than the file.
    const big = Buffer.from(buf);
    big.writeUInt32BE(buf.length * 2, boxAt(big, 'moov') - 8);
    assert.equal((await index(big)).ok, false);
    // A truncated file (the moov at the end cut off).
    assert.equal((await index(buf.subarray(0, buf.length - 500))).ok, false);
  });

  it('refuses an edit list with two media edits', async () => {
    const buf = fs.readFileSync(file);
    const elst = boxAt(buf, 'elst');
    const count = buf.readUInt32BE(elst + 4);
    assert.equal(count, 1, 'x264 MP4s have one media edit');
    // Turn the box into two entries by claiming 2: the second reads past the box → refused as short.
    const two = Buffer.from(buf);
    two.writeUInt32BE(2, elst + 4);
    assert.equal((await mp4KeyframeIndex(readerOf(two), two.length)).ok, false);
  });

  it('plans segments at keyframes: at least the target long, a short tail joined, lies refused', () => {
    const k = Array.from({ length: 31 }, (_, i) => i * 2); // keyframes every 2 s, 61 s
    assert.deepEqual(planJitSegments(k, 61, 6, 12), [0, 6, 12, 18, 24, 30, 36, 42, 48, 54]);
    assert.deepEqual(planJitSegments(k, 60.5, 4, 12)!.slice(-2), [52, 56]);
    assert.equal(planJitSegments([-1, 2, 4], 6, 6, 12), null, 'negative first timestamp');
    assert.equal(planJitSegments([0, 2, 2, 4], 6, 6, 12), null, 'repeated keyframe');
    assert.equal(planJitSegments([0, 20], 30, 6, 12), null, 'gap over the limit');
    assert.equal(planJitSegments([0], 30, 6, 12), null, 'the tail after the last keyframe is over the limit');
    const plan = { boundaries: [0, 6, 12], durationSeconds: 16.5 };
    const text = jitPlaylist(plan);
    assert.match(text, /#EXT-X-PLAYLIST-TYPE:VOD/);
    assert.match(text, /#EXT-X-TARGETDURATION:6\n/);
    assert.match(text, /#EXTINF:4\.500000,\nseg_00002\.ts\n#EXT-X-ENDLIST/);
    assert.equal(jitSegmentIndex(plan, 'seg_00002.ts'), 2);
    assert.equal(jitSegmentIndex(plan, 'seg_00003.ts'), null);
    assert.equal(jitSegmentIndex(plan, '../x'), null);
  });

  it('a plan file that is not ours cuts nothing', () => {
    const good = { version: 1, storageKey: 'k', demuxer: 'mov', kind: 'video', offset: 0, boundaries: [0, 4], durationSeconds: 8 };
    assert.ok(parseJitPlan(JSON.stringify(good)));
    for (const bad of [{ ...good, boundaries: [0, 9] }, { ...good, boundaries: [4, 0] }, { ...good, kind: 'x' }, { ...good, boundaries: [] }, 'nope']) {
      assert.equal(parseJitPlan(JSON.stringify(bad)), null, JSON.stringify(bad));
    }
  });

  it('a segment cut alone is byte for byte the same segment as the whole pass makes', async () => {
    const buf = fs.readFileSync(file);
    const r = await mp4KeyframeIndex(readerOf(buf), buf.length);
    assert.ok(r.ok);
    const boundaries = planJitSegments(r.index.keyframes.map((k) => k.time), 20, 4, 8)!;
    const plan: JitPlan = { version: 1, storageKey: 'k', demuxer: null, kind: 'video', offset: -r.index.firstDts, boundaries, durationSeconds: 20 };
    const whole = path.join(dir, 'whole');
    fs.mkdirSync(whole);
    await run('ffmpeg', jitWholeArgs({ plan, input: file, outputDir: whole }));
    for (const i of [0, 2, boundaries.length - 1]) {
      const one = path.join(dir, `one${i}`);
      fs.mkdirSync(one);
      await run('ffmpeg', jitCutArgs({ plan, index: i, input: file, outputDir: one }));
      assert.ok(fs.readFileSync(path.join(one, jitCutOutput(plan))).equals(fs.readFileSync(path.join(whole, `seg_0000${i}.ts`))), `segment ${i}`);
    }
    // Timestamps continue across segments: each starts where the previous one's frames end.
    const starts = await Promise.all([0, 1].map(async (i) => {
      const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'packet=pts_time', '-of', 'csv=p=0', path.join(whole, `seg_0000${i}.ts`)]);
      const pts = stdout.split('\n').map((l) => Number.parseFloat(l)).filter(Number.isFinite).sort((a, b) => a - b);
      return { first: pts[0], last: pts[pts.length - 1] };
    }));
    assert.ok(Math.abs(starts[1].first - starts[0].last - 1 / 30) < 0.002, JSON.stringify(starts));
  });
});
