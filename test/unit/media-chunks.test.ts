import assert from 'node:assert/strict';
import { chunkLadderArgs, planChunks, stitchPlaylists } from '../../lib/media/chunks';
import { LADDER } from '../../lib/media/ladder';

const kf = (every: number, duration: number) => Array.from({ length: Math.ceil(duration / every) }, (_, i) => i * every);

describe('media/chunks', () => {
  describe('planChunks', () => {
    it('keeps a source at or under the threshold whole', () => {
      assert.deepEqual(planChunks({ keyframes: kf(2, 120), durationSeconds: 120, chunkSeconds: 30, thresholdSeconds: 120 }), [{ index: 0, start: 0, end: null }]);
      assert.deepEqual(planChunks({ keyframes: kf(2, 300), durationSeconds: null, chunkSeconds: 30, thresholdSeconds: 120 }), [{ index: 0, start: 0, end: null }]);
    });
    it('cuts at the first keyframe at least a chunk after the last cut', () => {
      assert.deepEqual(planChunks({ keyframes: kf(4, 100), durationSeconds: 100, chunkSeconds: 30, thresholdSeconds: 60 }), [
        { index: 0, start: 0, end: 32 },
        { index: 1, start: 32, end: 64 },
        { index: 2, start: 64, end: null },
      ]);
    });
    it('folds a tail shorter than half a chunk into the last chunk', () => {
      assert.deepEqual(planChunks({ keyframes: kf(1, 70), durationSeconds: 70, chunkSeconds: 30, thresholdSeconds: 60 }), [
        { index: 0, start: 0, end: 30 },
        { index: 1, start: 30, end: null },
      ]);
    });
    it('follows irregular keyframes', () => {
      assert.deepEqual(planChunks({ keyframes: [0, 9.5, 10.25, 19.9, 31, 33], durationSeconds: 40, chunkSeconds: 10, thresholdSeconds: 5 }), [
        { index: 0, start: 0, end: 10.25 },
        { index: 1, start: 10.25, end: 31 },
        { index: 2, start: 31, end: null },
      ]);
    });
    it('never makes more than 999 chunks', () => {
      const chunks = planChunks({ keyframes: kf(1, 7200), durationSeconds: 7200, chunkSeconds: 1, thresholdSeconds: 60 });
      assert.ok(chunks.length <= 999, String(chunks.length));
    });
  });

  it('chunkLadderArgs: one decode, split per rung, source timestamps, numbered segments', () => {
    const [r240, r360] = LADDER;
    assert.deepEqual(chunkLadderArgs({ input: '/in/a.mp4', outputRoot: '/out', rungs: [r240, r360], chunk: { index: 2, start: 64, end: 96 }, hasAudio: true, segmentSeconds: 6, fps: 24, preset: 'veryfast' }), [
      '-progress', 'pipe:1', '-nostats', '-y', '-hide_banner', '-loglevel', 'error',
      '-ss', '63.999', '-t', '32', '-copyts', '-i', '/in/a.mp4',
      '-filter_complex', '[0:v:0]split=2[v0][v1];[v0]scale=426:240[o0];[v1]scale=640:360[o1]',
      ...[r240, r360].flatMap((r, i) => [
        '-map', `[o${i}]`, '-map', '0:a:0',
        '-c:v', 'libx264', '-preset', 'veryfast', '-profile:v', 'high', '-level:v', i === 0 ? '2.1' : '3.0', '-pix_fmt', 'yuv420p',
        // Capped CRF (lower on small rungs) under the rung's bitrate; the same CRF and caps in every chunk.
        '-crf', i === 0 ? '18' : '20', '-maxrate', String(r.videoBitrate), '-bufsize', String(r.bufsize),
        '-force_key_frames', 'expr:gte(t,n_forced*6)', '-sc_threshold', '0', '-g', '144', '-keyint_min', '144',
        '-c:a', 'aac', '-b:a', '128000', '-ar', '48000', '-ac', '2',
        '-output_ts_offset', '0.021333',
        '-f', 'hls', '-hls_time', '6', '-hls_playlist_type', 'vod', '-hls_segment_type', 'mpegts', '-hls_flags', 'independent_segments',
        '-start_number', '2000', '-hls_segment_filename', `/out/${r.name}/seg_%05d.ts`, `/out/${r.name}/chunk_00002.m3u8`,
      ]),
    ]);
  });

  it('chunkLadderArgs: every chunk of a rung gets the same rate control (no quality step at joins)', () => {
    const rc = { mode: 'crf' as const, crf: 26 };
    const rate = (index: number, start: number, end: number | null) => {
      const args = chunkLadderArgs({ input: 'in', outputRoot: 'o', rungs: [LADDER[3]], chunk: { index, start, end }, hasAudio: true, segmentSeconds: 6, rateControl: rc });
      const at = args.indexOf('-crf');
      return args.slice(at, at + 6);
    };
    assert.deepEqual(rate(0, 0, 30), ['-crf', '26', '-maxrate', '2800000', '-bufsize', '4200000']);
    assert.deepEqual(rate(1, 30, 60), rate(0, 0, 30));
    assert.deepEqual(rate(2, 60, null), rate(0, 0, 30));
  });

  it('chunkLadderArgs: the fixed-bitrate ladder on request', () => {
    const args = chunkLadderArgs({ input: 'in', outputRoot: 'o', rungs: [LADDER[0]], chunk: { index: 0, start: 0, end: null }, hasAudio: false, segmentSeconds: 6, rateControl: { mode: 'abr' } });
    const at = args.indexOf('-b:v');
    assert.deepEqual(args.slice(at, at + 6), ['-b:v', '400000', '-maxrate', '428000', '-bufsize', '600000']);
    assert.ok(!args.includes('-crf'));
  });

  it('chunkLadderArgs: the first (or only) chunk neither seeks nor shifts', () => {
    const args = chunkLadderArgs({ input: 'in', outputRoot: 'o', rungs: [LADDER[0]], chunk: { index: 0, start: 0, end: null }, hasAudio: false, segmentSeconds: 6 });
    assert.deepEqual(args.slice(7, 13), ['-copyts', '-i', 'in', '-filter_complex', '[0:v:0]scale=426:240[o0]', '-map']);
    assert.ok(!args.includes('-ss') && !args.includes('-t') && !args.includes('-output_ts_offset'));
  });

  it('stitchPlaylists joins chunks in order with the largest target duration', () => {
    const a = '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:6\n#EXTINF:6.000000,\nseg_00000.ts\n#EXTINF:2.000000,\nseg_00001.ts\n#EXT-X-ENDLIST\n';
    const b = '#EXTM3U\n#EXT-X-TARGETDURATION:7\n#EXTINF:6.541667,\nseg_01000.ts\n#EXT-X-ENDLIST\n';
    assert.equal(
      stitchPlaylists([a, b]),
      '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:7\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-INDEPENDENT-SEGMENTS\n' +
        '#EXTINF:6.000000,\nseg_00000.ts\n#EXTINF:2.000000,\nseg_00001.ts\n#EXTINF:6.541667,\nseg_01000.ts\n#EXT-X-ENDLIST\n',
    );
  });
});
