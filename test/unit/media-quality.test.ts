import assert from 'node:assert/strict';
import { cmafCodecString, cmafRungArgs, codecRenditionName, videoEncoderArgs } from '../../lib/media/cmaf';
import { LADDER } from '../../lib/media/ladder';
import { parseQuality, qualityArgs, sampleEvery, ssimToDb } from '../../lib/media/quality';

const GLOBAL = ['-progress', 'pipe:1', '-nostats', '-y', '-hide_banner', '-loglevel', 'error'];

describe('media/quality', () => {
  it('qualityArgs: one decode of the source, scaled per rendition, ssim and psnr on the same sampled frames', () => {
    assert.deepEqual(
      qualityArgs({
        source: '/in/src.mp4',
        sourceInputArgs: ['-f', 'mov'],
        renditions: [
          { input: '/w/240p.ts', inputArgs: ['-f', 'mpegts'], width: 426, height: 240 },
          { input: '/w/360p.ts', width: 640, height: 360 },
        ],
        every: 4,
        statsDir: '/w/q',
      }),
      [
        ...GLOBAL,
        '-f', 'mov', '-i', '/in/src.mp4',
        '-f', 'mpegts', '-i', '/w/240p.ts',
        '-i', '/w/360p.ts',
        '-filter_complex',
        "[0:v:0]select='not(mod(n\\,4))',setpts=N/TB,split=2[s0][s1];" +
          '[s0]scale=426:240:flags=bicubic,format=yuv420p,split[r0a][r0b];' +
          "[1:v:0]select='not(mod(n\\,4))',setpts=N/TB,format=yuv420p,split[d0a][d0b];" +
          '[d0a][r0a]ssim=stats_file=/w/q/ssim_0.log:shortest=1[x0];' +
          '[d0b][r0b]psnr=stats_file=/w/q/psnr_0.log:shortest=1[y0];' +
          '[s1]scale=640:360:flags=bicubic,format=yuv420p,split[r1a][r1b];' +
          "[2:v:0]select='not(mod(n\\,4))',setpts=N/TB,format=yuv420p,split[d1a][d1b];" +
          '[d1a][r1a]ssim=stats_file=/w/q/ssim_1.log:shortest=1[x1];' +
          '[d1b][r1b]psnr=stats_file=/w/q/psnr_1.log:shortest=1[y1]',
        '-map', '[x0]', '-f', 'null', '-', '-map', '[y0]', '-f', 'null', '-',
        '-map', '[x1]', '-f', 'null', '-', '-map', '[y1]', '-f', 'null', '-',
      ],
    );
  });

  it('qualityArgs: every frame without select when every is 1; no rendition is an error', () => {
    const args = qualityArgs({ source: 's', renditions: [{ input: 'r', width: 2, height: 2 }], every: 1, statsDir: 'd' });
    assert.equal(args[args.indexOf('-filter_complex') + 1].split(';')[0], '[0:v:0]setpts=N/TB[s0]');
    assert.throws(() => qualityArgs({ source: 's', renditions: [], every: 1, statsDir: 'd' }), RangeError);
  });

  it('sampleEvery aims at about 120 frames', () => {
    assert.equal(sampleEvery(30, 60), 15);
    assert.equal(sampleEvery(30, 2), 1);
    assert.equal(sampleEvery(null, 60), 1);
  });

  it('parseQuality: mean SSIM as dB, PSNR from the mean MSE', () => {
    const ssim = 'n:1 Y:0.990000 U:0.99 V:0.99 All:0.990000 (20.000000)\nn:2 Y:0.999 U:0.99 V:0.99 All:0.998000 (26.989700)\n';
    const psnr = 'n:1 mse_avg:6.50 mse_y:6.5 psnr_avg:39.99\nn:2 mse_avg:0.00 mse_y:0 psnr_avg:inf\n';
    // mean SSIM 0.994 → 22.22 dB; mean MSE 3.25 → 10·log10(65025 / 3.25) = 43.01 dB
    assert.deepEqual(parseQuality(ssim, psnr), { ssim_db: 22.22, psnr_db: 43.01 });
    assert.equal(parseQuality('', psnr), null);
    assert.ok(Math.abs(ssimToDb(0.99) - 20) < 1e-9);
    assert.equal(ssimToDb(1), 100);
  });
});

describe('media/cmaf', () => {
  const r720 = LADDER[3];
  it('HEVC rung: x265 capped CRF, hvc1 tag, closed GOPs on segment boundaries, fMP4 HLS', () => {
    assert.deepEqual(cmafRungArgs({ input: '/in/s.mp4', outputDir: '/o/720p-hevc', rung: r720, codec: 'hevc', segmentSeconds: 6, fps: 30 }), [
      ...GLOBAL,
      '-i', '/in/s.mp4', '-map', '0:v:0', '-vf', 'scale=1280:720',
      '-c:v', 'libx265', '-preset', 'veryfast', '-tag:v', 'hvc1', '-pix_fmt', 'yuv420p',
      '-crf', '26', '-maxrate', '2800000', '-bufsize', '4200000',
      '-force_key_frames', 'expr:gte(t,n_forced*6)', '-x265-params', 'log-level=error:scenecut=0:open-gop=0:keyint=180:min-keyint=180',
      '-an',
      '-f', 'hls', '-hls_time', '6', '-hls_playlist_type', 'vod', '-hls_segment_type', 'fmp4', '-hls_fmp4_init_filename', 'init.mp4',
      '-hls_flags', 'independent_segments', '-hls_segment_filename', '/o/720p-hevc/seg_%05d.m4s', '/o/720p-hevc/index.m3u8',
    ]);
  });

  it('AV1 rung: SVT-AV1 capped CRF with a GOP of one segment', () => {
    assert.deepEqual(videoEncoderArgs('av1', r720, { fps: 25, segmentSeconds: 4 }), [
      '-c:v', 'libsvtav1', '-preset', '10', '-pix_fmt', 'yuv420p',
      '-crf', '35', '-maxrate', '2800000', '-bufsize', '4200000',
      '-g', '100', '-svtav1-params', 'scd=0',
    ]);
  });

  it('CODECS strings from what ffprobe reads back', () => {
    assert.equal(cmafCodecString('hevc', { profile: 'Main', level: 93 }), 'hvc1.1.6.L93.B0');
    assert.equal(cmafCodecString('hevc', { profile: 'Main 10', level: 120 }), 'hvc1.2.4.L120.B0');
    assert.equal(cmafCodecString('av1', { profile: 'Main', level: 5 }), 'av01.0.05M.08');
    assert.equal(cmafCodecString('h264', { profile: 'High', level: 31 }, r720, 30), 'avc1.64001f');
    assert.equal(codecRenditionName('720p', 'av1'), '720p-av1');
    assert.equal(codecRenditionName('720p', 'h264'), '720p');
  });
});
