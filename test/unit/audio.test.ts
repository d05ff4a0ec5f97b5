import assert from 'node:assert/strict';
import { audioOnlyMaster, audioRenditionArgs, alignedTrackArgs, loudnormFilter, parseLoudness, planAudioTracks, streamLanguage } from '../../lib/media/audio';
import { cmafAudioArgs } from '../../lib/media/cmaf';
import { dashManifest } from '../../lib/media/dash';
import { withAudio } from '../../lib/outputs/audio';
import { hasSafeInputs, safeInputArgs } from '../../lib/media/input';

const MASTER = [
  '#EXTM3U', '#EXT-X-VERSION:3', '#EXT-X-INDEPENDENT-SEGMENTS',
  '#EXT-X-STREAM-INF:BANDWIDTH=556000,AVERAGE-BANDWIDTH=528000,RESOLUTION=426x240,CODECS="avc1.64000d"', '240p/index.m3u8',
].join('\n');

describe('audio (pure): track plans, arguments, loudness, the AUDIO group', () => {
  it('names stream languages as BCP-47, und when absent', () => {
    assert.deepEqual(['eng', 'fre', 'fra', 'de', 'pt-br', '', null, 'und', 'x!'].map(streamLanguage), ['en', 'fr', 'fr', 'de', 'pt-br', 'und', 'und', 'und', 'und']);
  });

  it('plans a stereo rendition per stream, the first default, and keeps 5.1 beside its downmix', () => {
    const plan = planAudioTracks([
      { index: 0, codec: 'aac', channels: 6, language: 'eng', title: null },
      { index: 1, codec: 'aac', channels: 2, language: null, title: 'Commentary "dir"' },
    ], (l) => (l === 'en' ? 'English' : l));
    assert.deepEqual(plan.map((t) => [t.rendition, t.stream, t.language, t.name, t.channels, t.isDefault]), [
      ['a0', 0, 'en', 'English', 2, true],
      ['a0-51', 0, 'en', 'English (5.1)', 6, false],
      ['a1', 1, 'und', "Commentary 'dir'", 2, false],
    ]);
  });

  it('builds exact, allow-listed ffmpeg arguments', () => {
    const inputArgs = safeInputArgs({ format: 'matroska' });
    const args = audioRenditionArgs({ input: 'in.mkv', inputArgs, outputDir: '/o/a0-51', stream: 0, channels: 6, bitrate: 384000, segmentSeconds: 6 });
    assert.ok(hasSafeInputs(args));
    assert.deepEqual(args.slice(args.indexOf('-map'), args.lastIndexOf('-f')), ['-map', '0:a:0', '-vn', '-sn', '-dn', '-af', 'aformat=channel_layouts=5.1', '-c:a', 'aac', '-b:a', '384000', '-ar', '48000', '-ac', '6']);
    assert.ok(args.includes('-copyts'), 'on the source timeline, as the video chunks');
    const aligned = alignedTrackArgs({ input: 'x.mp3', inputArgs: safeInputArgs({ format: 'mp3' }), outputDir: '/o', durationSeconds: 3.0004, bitrate: 128000, segmentSeconds: 6 });
    assert.deepEqual(aligned.slice(aligned.indexOf('-af'), aligned.indexOf('-af') + 4), ['-af', 'apad', '-t', '3']);
  });

  it('reads loudnorm\'s JSON report; silence (-inf) is no measure', () => {
    const report = '[Parsed_loudnorm_0 @ 0x1] \n{\n\t"input_i" : "-42.25",\n\t"input_tp" : "-38.48",\n\t"input_lra" : "0.00",\n\t"input_thresh" : "-52.25",\n\t"output_i" : "-15.95",\n\t"target_offset" : "-0.05"\n}\n';
    const m = parseLoudness(report);
    assert.deepEqual(m, { inputI: -42.25, inputTp: -38.48, inputLra: 0, inputThresh: -52.25, targetOffset: -0.05 });
    assert.match(loudnormFilter(m!), /^loudnorm=I=-16:TP=-1.5:LRA=11:measured_I=-42.25:measured_TP=-38.48:measured_LRA=0.00:measured_thresh=-52.25:offset=-0.05:linear=true$/);
    assert.equal(parseLoudness(report.replace('"-42.25"', '"-inf"')), null);
    assert.equal(parseLoudness('no report'), null);
  });

  it('adds the AUDIO group and AAC to every variant, idempotently, and removes it again', () => {
    const tracks = [
      { language: 'en', name: 'English', isDefault: true, channels: 2, uri: 'audio/a0/index.m3u8' },
      { language: 'fr', name: 'Fr"ançais', isDefault: false, channels: 6, uri: 'audio/a1/index.m3u8' },
    ];
    const once = withAudio(MASTER, tracks);
    assert.equal(withAudio(once, tracks), once);
    assert.match(once, /#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="2",URI="audio\/a0\/index.m3u8"\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="Fr'ançais"/);
    assert.match(once, /CODECS="avc1.64000d,mp4a.40.2",AUDIO="aud"\n240p\/index.m3u8/);
    assert.equal(withAudio(once, []), MASTER);
    assert.equal(withAudio(MASTER, []), MASTER, 'a muxed-layout master is left alone');
  });

  it('CMAF variants take the CMAF audio group once tracks have a CMAF copy; TS variants keep the TS group', () => {
    const master = `${MASTER}\n#EXT-X-STREAM-INF:BANDWIDTH=300000,AVERAGE-BANDWIDTH=250000,RESOLUTION=426x240,CODECS="av01.0.04M.08"\n240p-av1/index.m3u8`;
    const ts = [{ language: 'en', name: 'English', isDefault: true, channels: 2, uri: 'audio/a0/index.m3u8' }];
    assert.match(withAudio(master, ts), /CODECS="av01.0.04M.08,mp4a.40.2",AUDIO="aud"\n240p-av1/, 'no CMAF copy yet: the TS group, as before');
    const tracks = [
      { ...ts[0], isDefault: false, cmafUri: 'audio/a0-cmaf/index.m3u8' },
      { language: 'fr', name: 'Français', isDefault: true, channels: 2, uri: 'audio/x-fr/index.m3u8' },
    ];
    const once = withAudio(master, tracks);
    assert.equal(withAudio(once, tracks), once);
    assert.match(once, /#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud-cmaf",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="2",URI="audio\/a0-cmaf\/index.m3u8"/, 'the CMAF group keeps a default');
    assert.equal(once.match(/GROUP-ID="aud-cmaf"/g)?.length, 1, 'only tracks with a CMAF copy');
    assert.match(once, /CODECS="avc1.64000d,mp4a.40.2",AUDIO="aud"\n240p\/index.m3u8/);
    assert.match(once, /CODECS="av01.0.04M.08,mp4a.40.2",AUDIO="aud-cmaf"\n240p-av1\/index.m3u8/);
    assert.equal(withAudio(once, []), master);
  });

  it('packages an AAC rendition as CMAF by stream copy, and the DASH manifest lists it as an audio set', () => {
    const args = cmafAudioArgs({ input: '/w/audio.ts', inputArgs: safeInputArgs({ format: 'mpegts' }), outputDir: '/o/a0-cmaf', segmentSeconds: 6 });
    assert.ok(hasSafeInputs(args));
    assert.deepEqual(args.slice(args.indexOf('-map'), args.indexOf('-f', args.indexOf('-map'))), ['-map', '0:a:0', '-vn', '-sn', '-dn', '-c:a', 'copy', '-bsf:a', 'aac_adtstoasc']);
    assert.ok(args.includes('fmp4') && args.at(-1) === '/o/a0-cmaf/index.m3u8');
    const video = { id: '240p-av1', codecs: 'av01.0.04M.08', bandwidth: 300000, width: 426, height: 240, segments: [6, 2] };
    const mpd = dashManifest(8, [video], [{ id: 'audio/a0-cmaf', language: 'en', channels: 2, isDefault: true, bandwidth: 140000.5, segments: [6, 2] }]);
    assert.match(mpd, /<AdaptationSet id="1" contentType="audio" mimeType="audio\/mp4" lang="en" [^>]*>\n\s*<Role [^>]*value="main"\/>\n\s*<Representation id="audio_a0-cmaf" codecs="mp4a.40.2" bandwidth="140001"[^>]*>\n\s*<AudioChannelConfiguration [^>]*value="2"\/>\n\s*<SegmentTemplate timescale="1000" initialization="audio\/a0-cmaf\/init.mp4" media="audio\/a0-cmaf\/seg_\$Number%05d\$.m4s"/);
    assert.doesNotMatch(dashManifest(8, [video]), /contentType="audio"/, 'a silent video: no audio set');
    assert.doesNotMatch(dashManifest(8, [video], [{ id: 'audio/a0-cmaf', language: 'und', channels: 2, isDefault: true, bandwidth: 1, segments: [8] }]), /lang=/);
    assert.throws(() => dashManifest(8, [video], [{ id: 'audio/a"0', language: 'en', channels: 2, isDefault: true, bandwidth: 1, segments: [8] }]), RangeError);
  });

  it('an audio-only master lists its AAC rungs, lowest first', () => {
    assert.equal(audioOnlyMaster([{ name: 'audio-128k', bitrate: 128000 }, { name: 'audio-64k', bitrate: 64000 }]), [
      '#EXTM3U', '#EXT-X-VERSION:3', '#EXT-X-INDEPENDENT-SEGMENTS',
      '#EXT-X-STREAM-INF:BANDWIDTH=70400,AVERAGE-BANDWIDTH=64000,CODECS="mp4a.40.2"', 'audio-64k/index.m3u8',
      '#EXT-X-STREAM-INF:BANDWIDTH=140800,AVERAGE-BANDWIDTH=128000,CODECS="mp4a.40.2"', 'audio-128k/index.m3u8', '',
    ].join('\n'));
  });
});
