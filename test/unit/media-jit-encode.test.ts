import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { masterPlaylist } from '../../lib/media/args';
import { jitSegmentIndex, type JitEncode, type JitPlan } from '../../lib/media/jit';
import { alignedChunks, alignedLadderArgs, onRequestEncodeArgs, planEncodeSegments } from '../../lib/media/jitEncode';
import { onRequestRungs, onRequestStart, planLadder } from '../../lib/media/ladder';
import { parseJitPlan } from '../../lib/playback/jit';
import { GroupProgress } from '../../workflows/video/pipeline/progress';

const run = promisify(execFile);

const encode = (width: number, height: number): JitEncode => ({ width, height, videoBitrate: 400_000, maxrate: 428_000, bufsize: 600_000, fps: 24, preset: 'veryfast', crf: 18 });

/** Every packet of a TS file's video: [pts, isKeyframe], in presentation order. */
async function packets(file: string): Promise<Array<[number, boolean]>> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=pts_time,flags', '-of', 'csv=p=0', file]);
  return stdout
    .split('\n')
    .filter((l) => l.trim())
    .map((l): [number, boolean] => [Number(l.split(',')[0]), l.split(',')[1].includes('K')])
    .sort((a, b) => a[0] - b[0]);
}

describe('on-request rungs (issue 47): pure parts, real ffmpeg for the encodes', function () {
  this.timeout(120_000);

  it('plans segments on the source keyframes where it has them, on the grid where it does not', () => {
    // Keyframes every 2 s: every boundary is one, none decodes from an earlier keyframe.
    const dense = planEncodeSegments([0, 2, 4, 6, 8, 10], 12);
    assert.deepEqual(dense, { boundaries: [0, 2, 4, 6, 8, 10], midGop: [] });
    // Every second: every other keyframe.
    assert.deepEqual(planEncodeSegments([0, 1, 2, 3, 4, 5, 6, 7], 8)!.boundaries, [0, 2, 4, 6]);
    // 2.5 s apart: 2.5 s segments (up to 1.5× the target to start at a keyframe).
    assert.deepEqual(planEncodeSegments([0, 2.5, 5, 7.5], 10), { boundaries: [0, 2.5, 5, 7.5], midGop: [] });
    // 10 s GOPs: 2 s segments, those inside a GOP marked (each decodes from the GOP's keyframe).
    const sparse = planEncodeSegments([0, 10, 20], 30)!;
    assert.deepEqual(sparse.boundaries, [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28]);
    assert.deepEqual(sparse.midGop, [1, 2, 3, 4, 6, 7, 8, 9, 11, 12, 13, 14]);
    // 3.5 s GOPs: a segment ends at a keyframe half a target early rather than skip it.
    assert.deepEqual(planEncodeSegments([0, 3.5, 7, 10.5], 12), { boundaries: [0, 2, 3.5, 5.5, 7, 9], midGop: [1, 3, 5] });
    // No keyframe known: the grid; no segment shorter than a third of the target at the end.
    assert.deepEqual(planEncodeSegments([], 6.5), { boundaries: [0, 2, 4], midGop: [1, 2] });
    assert.deepEqual(planEncodeSegments([], 2.9)!.boundaries, [0]);
    assert.equal(planEncodeSegments([0], 0), null);
  });

  it('chunks the ladder over whole segments, starting at keyframes where it can', () => {
    const plan = { boundaries: Array.from({ length: 50 }, (_, i) => i * 2), durationSeconds: 100, midGop: [] };
    const chunks = alignedChunks(plan, 30, 20);
    assert.deepEqual(chunks.map((c) => [c.first, c.last, c.end]), [[0, 14, 30], [15, 29, 60], [30, 49, 100]]);
    assert.deepEqual(chunks[1].boundaries, Array.from({ length: 15 }, (_, i) => 30 + i * 2));
    // Segment 15 starts mid-GOP: the chunk starts at the next keyframe instead.
    assert.deepEqual(alignedChunks({ ...plan, midGop: [15] }, 30, 20).map((c) => c.first), [0, 16, 31]);
    // Short: one chunk.
    assert.deepEqual(alignedChunks(plan, 30, 200).map((c) => [c.first, c.last]), [[0, 49]]);
  });

  it('builds the on-request encode in one function: the exact arguments', () => {
    const plan: JitPlan & { encode: JitEncode } = { version: 1, storageKey: 'k', demuxer: 'mov', kind: 'video', offset: 0, start: 1.4, boundaries: [0, 2, 4, 6], durationSeconds: 7, encode: encode(1280, 720) };
    assert.deepEqual(onRequestEncodeArgs({ plan, first: 1, last: 2, input: '/in.mp4', inputArgs: ['-f', 'mov'], outputDir: '/out' }), [
      '-progress', 'pipe:1', '-nostats', '-y', '-hide_banner', '-loglevel', 'error',
      '-ss', '2.000000', '-t', '4.000000',
      '-f', 'mov',
      '-i', '/in.mp4',
      '-map', '0:v:0', '-an', '-sn', '-dn',
      '-vf', 'scale=1280:720',
      '-c:v', 'libx264', '-preset', 'veryfast', '-profile:v', 'high', '-level:v', '3.1', '-pix_fmt', 'yuv420p',
      '-crf', '18', '-maxrate', '400000', '-bufsize', '600000',
      '-g', '10000', '-sc_threshold', '0',
      '-force_key_frames', '3.400000,5.400000',
      '-copyts', '-avoid_negative_ts', 'disabled', '-output_ts_offset', '0.000000',
      '-f', 'segment', '-segment_format', 'mpegts', '-segment_format_options', 'avoid_negative_ts=disabled', '-segment_times', '5.399500', '-segment_start_number', '1',
      '/out/seg_%05d.ts',
    ]);
    // One segment: no split.
    const one = onRequestEncodeArgs({ plan, first: 3, last: 3, input: '/in.mp4', outputDir: '/out' });
    assert.deepEqual(one.slice(one.indexOf('-ss'), one.indexOf('-ss') + 4), ['-ss', '6.000000', '-t', '1.000000']);
    assert.deepEqual(one.slice(-5), ['-segment_time', '100000', '-segment_start_number', '3', '/out/seg_%05d.ts']);
  });

  it('a segment encoded on request and the same segment of the ladder have the same frames and timestamps', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-onreq-'));
    try {
      const src = path.join(dir, 'src.mp4');
      // HEVC, keyframes every 2 s, with B-frames: what the passthrough refuses.
      await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=24:duration=10', '-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', 'keyint=48:min-keyint=48:log-level=error', '-tag:v', 'hvc1', src]);
      const planned = planEncodeSegments([0, 2, 4, 6, 8], 10)!;
      const plan: JitPlan & { encode: JitEncode } = { version: 1, storageKey: 'k', demuxer: null, kind: 'video', offset: 0, start: 0, ...planned, durationSeconds: 10, encode: encode(160, 90) };
      const chunks = alignedChunks(plan, 4, 1);
      assert.deepEqual(chunks.map((c) => [c.first, c.last]), [[0, 1], [2, 3], [4, 4]]);
      const ladder = path.join(dir, 'ladder');
      fs.mkdirSync(path.join(ladder, 'r'), { recursive: true });
      for (const chunk of chunks) await run('ffmpeg', alignedLadderArgs({ plan, rungs: [{ ...plan.encode, name: 'r' }], chunk, input: src, outputRoot: ladder }));
      const cut = path.join(dir, 'cut');
      fs.mkdirSync(cut);
      // Segments 0 and 1 alone (a start, a seek), and 2–4 as one run (a look-ahead).
      await run('ffmpeg', onRequestEncodeArgs({ plan, first: 0, last: 0, input: src, outputDir: cut }));
      await run('ffmpeg', onRequestEncodeArgs({ plan, first: 1, last: 1, input: src, outputDir: cut }));
      await run('ffmpeg', onRequestEncodeArgs({ plan, first: 2, last: 4, input: src, outputDir: cut }));
      for (let i = 0; i <= 4; i++) {
        const name = `seg_0000${i}.ts`;
        const [a, b] = await Promise.all([packets(path.join(ladder, 'r', name)), packets(path.join(cut, name))]);
        assert.deepEqual(a.map((p) => p[0]), b.map((p) => p[0]), `segment ${i}: the same timestamps`);
        assert.equal(a.length, 48, `segment ${i}: 2 s of 24 fps`);
        assert.deepEqual([a[0][1], b[0][1]], [true, true], `segment ${i} starts with a keyframe`);
        assert.equal(a.filter((p) => p[1]).length + b.filter((p) => p[1]).length, 2, `segment ${i}: no other keyframe`);
      }
      // The ladder's segments continue one another: each starts one frame after the previous one's last.
      const s0 = await packets(path.join(ladder, 'r', 'seg_00000.ts'));
      const s1 = await packets(path.join(ladder, 'r', 'seg_00001.ts'));
      assert.ok(Math.abs(s1[0][0] - s0[s0.length - 1][0] - 1 / 24) < 0.002);
      // On the source's timeline (plus the MPEG-TS muxer's 1.4 s), as the audio renditions are.
      assert.ok(Math.abs(s1[0][0] - (2 + 1.4)) < 0.002, `segment 1 starts at ${s1[0][0]}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names only the segments its playlist lists: a six-digit name cuts nothing', () => {
    const plan = { boundaries: [0, 2, 4] };
    assert.equal(jitSegmentIndex(plan, 'seg_00002.ts'), 2);
    assert.equal(jitSegmentIndex(plan, 'seg_000002.ts'), null);
  });

  it('checks the new plan fields', () => {
    const good = { version: 1, storageKey: 'k', demuxer: 'mov', kind: 'video', offset: 0, start: 1.4, midGop: [1], boundaries: [0, 2, 4], durationSeconds: 6, encode: encode(320, 180) };
    assert.ok(parseJitPlan(JSON.stringify(good)));
    for (const bad of [{ ...good, start: 'x' }, { ...good, midGop: [3] }, { ...good, midGop: [0.5] }, { ...good, midGop: 'all' }]) assert.equal(parseJitPlan(JSON.stringify(bad)), null, JSON.stringify(bad));
  });

  it('offers every rung up to 1080p on request, and lists the 720p one first', () => {
    const rungs = planLadder({ width: 3840, height: 2160 });
    const offered = onRequestRungs(rungs);
    assert.deepEqual(offered.map((r) => r.name), ['240p', '360p', '480p', '720p', '1080p']);
    assert.equal(onRequestStart(offered)?.name, '720p');
    assert.equal(onRequestStart(onRequestRungs(planLadder({ width: 854, height: 480 })))?.name, '480p', 'never above the source');
    const text = masterPlaylist(offered, (r) => `${r.name}/index.m3u8`, { first: '720p', hasAudio: false });
    assert.deepEqual(text.split('\n').filter((l) => l.endsWith('.m3u8')), ['720p/index.m3u8', '240p/index.m3u8', '360p/index.m3u8', '480p/index.m3u8', '1080p/index.m3u8']);
  });

  it('weighs a ladder group\u2019s chunks by their length', () => {
    const g = new GroupProgress([30, 30, 60]);
    assert.equal(g.value(), 0);
    g.set(2, 50);
    assert.equal(g.value(), 25);
    g.set(2, 40);
    assert.equal(g.value(), 25, 'never goes back');
    g.done(0);
    g.done(1);
    g.done(2);
    assert.equal(g.value(), 99, 'published, not only encoded, is 100');
  });
});
