import assert from 'node:assert/strict';
import { animatedArgs, animatedFrames, audioOnlyArgs, clipArgs, fitFilter, planStoryboard, remuxMp4Args, stillArgs, storyboardArgs, storyboardVtt } from '../../lib/media/outputs';
import { canonicalLanguage, parseCaptions, srtToVtt } from '../../lib/outputs/captions';
import { subtitlePlaylist, withSubtitles } from '../../lib/outputs/master';
import { imageName, pickRendition } from '../../lib/outputs/images';
import { parseMediaPlaylist, segmentsFor } from '../../lib/outputs/segments';

const G = ['-progress', 'pipe:1', '-nostats', '-y', '-hide_banner', '-loglevel', 'error'];

describe('Outputs: pure builders', () => {
  it('fitFilter per fit_mode', () => {
    assert.equal(fitFilter(320, 240, 'crop'), 'scale=320:240:force_original_aspect_ratio=increase,crop=320:240');
    assert.equal(fitFilter(320, 240, 'pad'), 'scale=320:240:force_original_aspect_ratio=decrease,pad=320:240:(ow-iw)/2:(oh-ih)/2:color=black');
    assert.equal(fitFilter(320, 240, 'preserve'), 'scale=320:240:force_original_aspect_ratio=decrease');
    assert.equal(fitFilter(320, undefined, 'crop'), 'scale=320:-1');
    assert.equal(fitFilter(undefined, 90, 'pad'), 'scale=-1:90');
    assert.equal(fitFilter(undefined, undefined, 'preserve'), 'scale=iw:ih');
  });

  it('stillArgs', () => {
    assert.deepEqual(stillArgs({ input: 'in.ts', output: 'o.webp', offset: 1.2345, width: 100, fit: 'preserve', format: 'webp' }), [
      ...G, '-i', 'in.ts', '-ss', '1.235', '-map', '0:v:0', '-frames:v', '1', '-vf', 'scale=100:-1,setsar=1', '-c:v', 'libwebp', '-quality', '80', '-f', 'image2', '-update', '1', 'o.webp',
    ]);
  });

  it('animatedArgs for GIF and WebP, with an exact frame count', () => {
    assert.equal(animatedFrames(2.5, 10), 25);
    assert.deepEqual(animatedArgs({ input: 'in.ts', output: 'o.gif', offset: 0.5, duration: 2, width: 200, fps: 12, format: 'gif' }), [
      ...G, '-i', 'in.ts', '-ss', '0.5', '-t', '2', '-an',
      '-filter_complex', '[0:v:0]fps=12,scale=200:-2:flags=lanczos,setsar=1,split[a][b];[a]palettegen=stats_mode=diff[p];[b][p]paletteuse=dither=bayer',
      '-c:v', 'gif', '-f', 'gif', '-frames:v', '24', '-loop', '0', 'o.gif',
    ]);
    assert.deepEqual(animatedArgs({ input: 'in.ts', output: 'o.webp', offset: 0, duration: 1, width: 64, fps: 5, format: 'webp' }), [
      ...G, '-i', 'in.ts', '-ss', '0', '-t', '1', '-an', '-vf', 'fps=5,scale=64:-2:flags=lanczos,setsar=1', '-c:v', 'libwebp_anim', '-quality', '70', '-f', 'webp', '-frames:v', '5', '-loop', '0', 'o.webp',
    ]);
  });

  it('puts the allow-list input options right before -i (SPEC §12)', () => {
    const inputArgs = ['-protocol_whitelist', 'file', '-format_whitelist', 'mpegts', '-f', 'mpegts'];
    const io = { input: 'j.ts', inputArgs, output: 'o' };
    const before = (args: string[]) => args.slice(args.indexOf('-i') - inputArgs.length, args.indexOf('-i'));
    assert.deepEqual(before(remuxMp4Args({ ...io, hasAudio: true })), inputArgs);
    assert.deepEqual(before(audioOnlyArgs(io)), inputArgs);
    assert.deepEqual(before(stillArgs({ ...io, offset: 1, fit: 'crop', format: 'jpg' })), inputArgs);
    assert.deepEqual(before(animatedArgs({ ...io, offset: 1, duration: 1, width: 10, fps: 1, format: 'gif' })), inputArgs);
    assert.deepEqual(before(storyboardArgs({ ...io, plan: planStoryboard(10, 16, 9) })), inputArgs);
    assert.deepEqual(before(clipArgs({ ...io, start: 0, end: 1, hasAudio: false })), inputArgs);
  });

  it('remux and audio-only copy without re-encoding', () => {
    assert.deepEqual(remuxMp4Args({ input: 'j.ts', output: 'o.mp4', hasAudio: true }), [
      ...G, '-i', 'j.ts', '-map', '0:v:0', '-map', '0:a:0', '-bsf:a', 'aac_adtstoasc', '-c', 'copy', '-movflags', '+faststart', '-f', 'mp4', 'o.mp4',
    ]);
    assert.deepEqual(remuxMp4Args({ input: 'j.ts', output: 'o.mp4', hasAudio: false }), [...G, '-i', 'j.ts', '-map', '0:v:0', '-c', 'copy', '-movflags', '+faststart', '-f', 'mp4', 'o.mp4']);
    assert.deepEqual(audioOnlyArgs({ input: 'j.ts', output: 'a.m4a' }), [
      ...G, '-i', 'j.ts', '-map', '0:a:0', '-c:a', 'copy', '-bsf:a', 'aac_adtstoasc', '-movflags', '+faststart', '-f', 'ipod', 'a.m4a',
    ]);
  });

  it('clipArgs re-encodes the exact range', () => {
    assert.deepEqual(clipArgs({ input: 'src.mp4', output: 'c.mp4', start: 1.5, end: 3.25, hasAudio: true }), [
      ...G, '-ss', '1.5', '-i', 'src.mp4', '-t', '1.75', '-map', '0:v:0', '-map', '0:a:0?', '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '18', '-pix_fmt', 'yuv420p',
      '-c:a', 'aac', '-b:a', '192k', '-movflags', '+faststart', '-f', 'mp4', 'c.mp4',
    ]);
  });

  it('planStoryboard: ≥ 1 tile per 10 s, ≤ 200 tiles, tiles keep the aspect ratio', () => {
    assert.deepEqual(planStoryboard(30, 1920, 1080), { interval: 1, tiles: 30, columns: 10, rows: 3, tileWidth: 160, tileHeight: 90 });
    const hour = planStoryboard(3600, 640, 360);
    assert.equal(hour.tiles, 200);
    assert.equal(hour.interval, 18, 'past 2000 s the 200-tile cap wins');
    const tenMin = planStoryboard(600, 640, 360);
    assert.ok(tenMin.interval <= 10 && tenMin.tiles <= 200);
    assert.deepEqual(planStoryboard(0.5, 100, 100), { interval: 1, tiles: 1, columns: 1, rows: 1, tileWidth: 160, tileHeight: 160 });
    const plan = planStoryboard(25, 320, 180);
    assert.deepEqual(storyboardArgs({ input: 'j.ts', output: 's.jpg', plan }), [
      ...G, '-i', 'j.ts', '-map', '0:v:0', '-vf', 'fps=1/1:round=down,scale=160:90,setsar=1,tile=10x3', '-frames:v', '1', '-q:v', '4', '-f', 'image2', '-update', '1', 's.jpg',
    ]);
    const vtt = storyboardVtt(plan, 25, 'storyboard.jpg');
    assert.match(vtt, /^WEBVTT\n\n00:00:00\.000 --> 00:00:01\.000\nstoryboard\.jpg#xywh=0,0,160,90\n/);
    assert.match(vtt, /00:00:24\.000 --> 00:00:25\.000\nstoryboard\.jpg#xywh=640,180,160,90\n/);
    assert.equal(parseCaptions(vtt, 'vtt').ok, true, 'the storyboard is valid WebVTT');
  });

  it('captions: language tags, SRT conversion keeps line numbers', () => {
    assert.equal(canonicalLanguage('pt-br'), 'pt-BR');
    assert.equal(canonicalLanguage('zh-hant-tw'), 'zh-Hant-TW');
    assert.equal(canonicalLanguage('en_US'), null);
    assert.equal(canonicalLanguage('1'), null);
    assert.equal(srtToVtt('1\r\n0:00:01,000 --> 0:00:02,500\r\nHi\r\n'), 'WEBVTT\n\n1\n00:00:01.000 --> 00:00:02.500\nHi\n');
    const bad = parseCaptions('1\n00:00:01,000 --> 00:00:02,000\nok\n\n2\n00:00:03,000 --> 00:00:0x,000\nx\n', 'srt');
    assert.equal(bad.ok, false);
    assert.equal(!bad.ok && bad.problem.line, 6);
  });

  it('withSubtitles adds, replaces and removes the SUBTITLES group; renditions untouched', () => {
    const master = '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-INDEPENDENT-SEGMENTS\n#EXT-X-STREAM-INF:BANDWIDTH=1,RESOLUTION=2x2,CODECS="x"\n240p/index.m3u8\n';
    const one = withSubtitles(master, [{ language: 'en', label: 'English "CC"', isDefault: true, uri: 'subs/en/index.m3u8' }]);
    assert.equal(
      one,
      '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-INDEPENDENT-SEGMENTS\n' +
        `#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English 'CC'",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,URI="subs/en/index.m3u8"\n` +
        '#EXT-X-STREAM-INF:BANDWIDTH=1,RESOLUTION=2x2,CODECS="x",SUBTITLES="subs"\n240p/index.m3u8\n',
    );
    assert.equal(withSubtitles(one, [{ language: 'en', label: 'English "CC"', isDefault: true, uri: 'subs/en/index.m3u8' }]), one, 'idempotent');
    assert.equal(withSubtitles(one, []), master);
    assert.equal(subtitlePlaylist(4.0041, 'captions.vtt'), '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:5\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXTINF:4.004,\ncaptions.vtt\n#EXT-X-ENDLIST\n');
  });

  it('media playlists, segment choice, rendition choice and cache names', () => {
    const segs = parseMediaPlaylist('#EXTM3U\n#EXTINF:6.0,\nseg_00000.ts\n#EXTINF:6.0,\nseg_00001.ts\n#EXTINF:2.5,\nseg_00002.ts\n#EXT-X-ENDLIST\n');
    assert.deepEqual(segs.map((x) => [x.uri, x.start]), [['seg_00000.ts', 0], ['seg_00001.ts', 6], ['seg_00002.ts', 12]]);
    assert.deepEqual(segmentsFor(segs, 5, 7).map((x) => x.uri), ['seg_00000.ts', 'seg_00001.ts']);
    assert.deepEqual(segmentsFor(segs, 13, 13).map((x) => x.uri), ['seg_00002.ts']);
    assert.throws(() => parseMediaPlaylist('#EXTINF:6,\nhttp://evil/seg.ts\n'));
    const r = (name: string, width: number, height: number, status = 'ready') => ({ name, width, height, status });
    const ladder = [r('240p', 426, 240), r('480p', 854, 480), r('1080p', 1920, 1080), r('2160p', 3840, 2160)];
    assert.equal(pickRendition(ladder, 400), '240p');
    assert.equal(pickRendition(ladder, 800), '480p');
    assert.equal(pickRendition(ladder, 1920), '1080p');
    assert.equal(pickRendition([...ladder.slice(0, 2), r('1080p', 1920, 1080, 'processing')], 1920), '480p');
    assert.equal(imageName({ kind: 'thumbnail', ext: 'png', time: 1.5, width: 100, fit: 'pad' }), 'thumbnail_t1500_w100_h0_pad.png');
    assert.equal(imageName({ kind: 'animated', ext: 'gif', start: 0, end: 2, width: 320, fps: 10 }), 'animated_s0_e2000_w320_f10.gif');
  });
});
