import assert from 'node:assert/strict';
import {
  codecsFor,
  h264Level,
  masterPlaylist,
  singlePassLadderArgs,
  thumbnailArgs,
  thumbnailTime,
  transcodeArgs,
  videoRateArgs,
} from '../../lib/media/args';
import { LADDER, planLadder } from '../../lib/media/ladder';

const rung720 = LADDER[3];
const GLOBAL = ['-progress', 'pipe:1', '-nostats', '-y', '-hide_banner', '-loglevel', 'error'];
const HLS = ['-f', 'hls', '-hls_time', '6', '-hls_playlist_type', 'vod', '-hls_segment_type', 'mpegts', '-hls_flags', 'independent_segments'];

describe('media/args', () => {
  describe('transcodeArgs', () => {
    it('builds the exact command for a 720p rung with audio and known fps', () => {
      assert.deepEqual(transcodeArgs({ input: '/in/src.mp4', outputDir: '/out/720p', rung: rung720, hasAudio: true, fps: 30 }), [
        ...GLOBAL,
        '-i', '/in/src.mp4',
        '-map', '0:v:0',
        '-map', '0:a:0?',
        '-vf', 'scale=1280:720',
        '-c:v', 'libx264',
        '-preset', 'veryfast',
        '-profile:v', 'high',
        '-level:v', '3.1',
        '-pix_fmt', 'yuv420p',
        // Capped CRF by default: the rung's bitrate (2.8 Mb/s) is the ceiling, VBV buffer kept.
        '-crf', '23',
        '-maxrate', '2800000',
        '-bufsize', '4200000',
        '-force_key_frames', 'expr:gte(t,n_forced*6)',
        '-sc_threshold', '0',
        '-g', '180',
        '-keyint_min', '180',
        '-c:a', 'aac', '-b:a', '128000', '-ar', '48000', '-ac', '2',
        ...HLS,
        '-hls_segment_filename', '/out/720p/seg_%05d.ts',
        '/out/720p/index.m3u8',
      ]);
    });

    it('drops audio, GOP size and uses overrides when asked', () => {
      const rung = planLadder({ width: 720, height: 1280 })[1];
      assert.deepEqual(
        transcodeArgs({ input: 'in.mov', outputDir: 'work/360p/', rung, hasAudio: false, segmentSeconds: 4, preset: 'ultrafast' }),
        [
          ...GLOBAL,
          '-i', 'in.mov',
          '-map', '0:v:0',
          '-vf', 'scale=360:640',
          '-c:v', 'libx264',
          '-preset', 'ultrafast',
          '-profile:v', 'high',
          '-level:v', '3.0',
          '-pix_fmt', 'yuv420p',
          // A small rung: CRF 3 lower (crfOffset), so grain it averages away still gets its bits.
          '-crf', '20',
          '-maxrate', '800000',
          '-bufsize', '1200000',
          '-force_key_frames', 'expr:gte(t,n_forced*4)',
          '-sc_threshold', '0',
          '-an',
          '-f', 'hls', '-hls_time', '4', '-hls_playlist_type', 'vod', '-hls_segment_type', 'mpegts', '-hls_flags', 'independent_segments',
          '-hls_segment_filename', 'work/360p/seg_%05d.ts',
          'work/360p/index.m3u8',
        ],
      );
    });

    it('the fixed-bitrate ladder (abr) and a chosen CRF on request', () => {
      const abr = transcodeArgs({ input: 'i', outputDir: 'o', rung: rung720, hasAudio: false, rateControl: { mode: 'abr' } });
      assert.deepEqual(abr.slice(abr.indexOf('-pix_fmt') + 2, abr.indexOf('-force_key_frames')), ['-b:v', '2800000', '-maxrate', '2996000', '-bufsize', '4200000']);
      const crf = transcodeArgs({ input: 'i', outputDir: 'o', rung: rung720, hasAudio: false, rateControl: { mode: 'crf', crf: 28 } });
      assert.deepEqual(crf.slice(crf.indexOf('-pix_fmt') + 2, crf.indexOf('-force_key_frames')), ['-crf', '28', '-maxrate', '2800000', '-bufsize', '4200000']);
    });

    it('videoRateArgs suffixes per-stream options', () => {
      assert.deepEqual(videoRateArgs(rung720, { mode: 'crf', crf: 23 }, ':v:1'), ['-crf:v:1', '23', '-maxrate:v:1', '2800000', '-bufsize:v:1', '4200000']);
      assert.deepEqual(videoRateArgs(rung720, { mode: 'abr' }, ':v:0'), ['-b:v:0', '2800000', '-maxrate:v:0', '2996000', '-bufsize:v:0', '4200000']);
    });

    it('derives the GOP from fractional frame rates', () => {
      const args = transcodeArgs({ input: 'i', outputDir: 'o', rung: rung720, hasAudio: true, fps: 29.97 });
      assert.equal(args[args.indexOf('-g') + 1], '180');
      assert.equal(args[args.indexOf('-keyint_min') + 1], '180');
    });
  });

  describe('thumbnailArgs / thumbnailTime', () => {
    it('builds the exact command', () => {
      assert.deepEqual(thumbnailArgs({ input: '/in/src.mp4', output: '/out/thumb.jpg', atSeconds: 2.5 }), [
        ...GLOBAL,
        '-ss', '2.5',
        '-i', '/in/src.mp4',
        '-map', '0:v:0',
        '-frames:v', '1',
        '-vf', "scale='min(1280,iw)':-2",
        '-q:v', '3',
        '-update', '1',
        '/out/thumb.jpg',
      ]);
    });

    it('honours maxWidth and avoids float noise', () => {
      const args = thumbnailArgs({ input: 'i', output: 'o.jpg', atSeconds: 0.1 + 0.2, maxWidth: 640 });
      assert.equal(args[args.indexOf('-ss') + 1], '0.3');
      assert.equal(args[args.indexOf('-vf') + 1], "scale='min(640,iw)':-2");
    });

    it('picks 10% of the duration, capped at 10 s', () => {
      assert.equal(thumbnailTime(2), 0.2);
      assert.equal(thumbnailTime(45), 4.5);
      assert.equal(thumbnailTime(100), 10);
      assert.equal(thumbnailTime(3600), 10);
      assert.equal(thumbnailTime(0), 0);
      assert.equal(thumbnailTime(null), 0);
      assert.equal(thumbnailTime(Number.NaN), 0);
    });
  });

  describe('singlePassLadderArgs', () => {
    it('builds one process with split/scale, per-stream rates and var_stream_map', () => {
      const rungs = LADDER.slice(0, 2);
      assert.deepEqual(singlePassLadderArgs({ input: 'src.mp4', outputRoot: '/out', rungs, hasAudio: true, fps: 25 }), [
        ...GLOBAL,
        '-i', 'src.mp4',
        '-filter_complex', '[0:v]split=2[v0][v1];[v0]scale=426:240[o0];[v1]scale=640:360[o1]',
        '-map', '[o0]', '-map', '0:a:0?',
        '-map', '[o1]', '-map', '0:a:0?',
        '-c:v', 'libx264',
        '-preset', 'veryfast',
        '-profile:v', 'high',
        '-pix_fmt', 'yuv420p',
        '-level:v:0', '2.1', '-b:v:0', '400000', '-maxrate:v:0', '428000', '-bufsize:v:0', '600000', '-b:a:0', '128000',
        '-level:v:1', '3.0', '-b:v:1', '800000', '-maxrate:v:1', '856000', '-bufsize:v:1', '1200000', '-b:a:1', '128000',
        '-force_key_frames', 'expr:gte(t,n_forced*6)',
        '-sc_threshold', '0',
        '-g', '150', '-keyint_min', '150',
        '-c:a', 'aac', '-ar', '48000', '-ac', '2',
        ...HLS,
        '-master_pl_name', 'master.m3u8',
        '-hls_segment_filename', '/out/%v/seg_%05d.ts',
        '-var_stream_map', 'v:0,a:0,name:240p v:1,a:1,name:360p',
        '/out/%v/index.m3u8',
      ]);
    });

    it('omits audio from the stream map without audio and rejects bad rung lists', () => {
      const args = singlePassLadderArgs({ input: 'i', outputRoot: 'o', rungs: LADDER.slice(0, 2), hasAudio: false });
      assert.equal(args[args.indexOf('-var_stream_map') + 1], 'v:0,name:240p v:1,name:360p');
      assert.ok(args.includes('-an'));
      assert.ok(!args.includes('0:a:0?'));
      assert.throws(() => singlePassLadderArgs({ input: 'i', outputRoot: 'o', rungs: [], hasAudio: false }), RangeError);
      assert.throws(() => singlePassLadderArgs({ input: 'i', outputRoot: 'o', rungs: [LADDER[0], LADDER[0]], hasAudio: false }), RangeError);
    });
  });

  describe('levels and CODECS', () => {
    it('picks the smallest H.264 level that fits', () => {
      assert.deepEqual(LADDER.map((r) => h264Level(r)), [21, 30, 31, 31, 40, 50, 51]);
      assert.equal(h264Level(LADDER[4], 60), 42);
      assert.equal(codecsFor(LADDER[3]), 'avc1.64001f,mp4a.40.2');
      assert.equal(codecsFor(LADDER[4], { hasAudio: false }), 'avc1.640028');
    });
  });

  describe('masterPlaylist', () => {
    it('lists variants lowest bandwidth first with peak and average bandwidth', () => {
      const [r240, r360, , r720] = LADDER;
      const text = masterPlaylist([r720, r240, { ...r360, codecs: 'avc1.4d401e,mp4a.40.2' }], (r) => `${r.name}/index.m3u8`);
      assert.equal(
        text,
        [
          '#EXTM3U',
          '#EXT-X-VERSION:3',
          '#EXT-X-INDEPENDENT-SEGMENTS',
          '#EXT-X-STREAM-INF:BANDWIDTH=556000,AVERAGE-BANDWIDTH=528000,RESOLUTION=426x240,CODECS="avc1.640015,mp4a.40.2"',
          '240p/index.m3u8',
          '#EXT-X-STREAM-INF:BANDWIDTH=984000,AVERAGE-BANDWIDTH=928000,RESOLUTION=640x360,CODECS="avc1.4d401e,mp4a.40.2"',
          '360p/index.m3u8',
          '#EXT-X-STREAM-INF:BANDWIDTH=3124000,AVERAGE-BANDWIDTH=2928000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2"',
          '720p/index.m3u8',
          '',
        ].join('\n'),
      );
    });

    it('leaves audio out without audio and adds FRAME-RATE when known', () => {
      const text = masterPlaylist([LADDER[0]], (r) => r.name, { hasAudio: false, fps: 29.97 });
      assert.match(text, /BANDWIDTH=428000,AVERAGE-BANDWIDTH=400000,RESOLUTION=426x240,CODECS="avc1.640015",FRAME-RATE=29.970\n240p\n$/);
    });
  });
});
