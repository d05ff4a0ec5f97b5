import assert from 'node:assert/strict';
import { keepPassthrough } from '../../lib/media/ladder';
import { maxKeyframeGap, measuredBandwidth, parseKeyframes, passthroughEligibility, remuxArgs, type SourceFacts } from '../../lib/media/passthrough';

const every2s = Array.from({ length: 16 }, (_, i) => i * 2);
const good: SourceFacts = {
  durationSeconds: 30,
  width: 1920,
  height: 1080,
  rotation: 0,
  fps: 30,
  video: { codec: 'h264', profile: 'High', pixFmt: 'yuv420p', level: 40, bitrate: 6_000_000 },
  audio: { codec: 'aac', profile: 'LC', channels: 2, sampleRate: 48_000 },
  keyframes: every2s,
};
const withVideo = (v: Partial<SourceFacts['video']>): SourceFacts => ({ ...good, video: { ...good.video, ...v } });
const withAudio = (a: Partial<NonNullable<SourceFacts['audio']>>): SourceFacts => ({ ...good, audio: { ...good.audio!, ...a } });

describe('media/passthrough eligibility', () => {
  it('accepts H.264 High 4.0 with AAC-LC stereo and gives the RFC 6381 codecs', () => {
    assert.deepEqual(passthroughEligibility(good, 6), { eligible: true, codecs: 'avc1.640028,mp4a.40.2' });
  });
  it('writes the profile and constraint bytes of each accepted profile, and no audio codec without audio', () => {
    assert.deepEqual(passthroughEligibility({ ...withVideo({ profile: 'Constrained Baseline', level: 30 }), audio: null }, 6), { eligible: true, codecs: 'avc1.42E01E' });
    assert.deepEqual(passthroughEligibility(withVideo({ profile: 'Main', level: 31 }), 6), { eligible: true, codecs: 'avc1.4D401F,mp4a.40.2' });
    assert.deepEqual(passthroughEligibility(withVideo({ profile: 'Baseline', level: 13 }), 6), { eligible: true, codecs: 'avc1.42000D,mp4a.40.2' });
  });
  const cases: Array<[string, SourceFacts, string]> = [
    ['HEVC', withVideo({ codec: 'hevc' }), 'video codec hevc is not H.264'],
    ['High 10', withVideo({ profile: 'High 10' }), 'H.264 profile High 10 is not Baseline, Main or High'],
    ['4:2:2', withVideo({ pixFmt: 'yuv422p' }), 'pixel format yuv422p is not 4:2:0 8-bit'],
    ['level 5.2', withVideo({ level: 52 }), 'H.264 level 52 is above 5.1'],
    ['rotated', { ...good, rotation: 90 }, 'the picture is rotated 90°'],
    ['120 fps', { ...good, fps: 120 }, 'frame rate 120 is not at most 60'],
    ['unknown duration', { ...good, durationSeconds: null }, 'the duration is unknown'],
    ['no keyframe at the start', { ...good, keyframes: [1, 3] }, 'the first frame is not a keyframe'],
    ['keyframes 13 s apart', { ...good, keyframes: [0, 13, 26] }, 'keyframes are up to 13 s apart'],
    ['a long tail after the last keyframe', { ...good, keyframes: [0, 6, 12] }, 'keyframes are up to 18 s apart'],
    ['12.6 Mb/s at 1080p (cap 2.5 × 5 Mb/s)', withVideo({ bitrate: 12_600_000 }), 'video bitrate 12600000 b/s is above 12500000 b/s for its height'],
    ['unknown bitrate', withVideo({ bitrate: null }), 'the video bitrate is unknown'],
    ['MP3 audio', withAudio({ codec: 'mp3', profile: null }), 'audio mp3 is not AAC-LC'],
    ['HE-AAC', withAudio({ profile: 'HE-AAC' }), 'audio aac HE-AAC is not AAC-LC'],
    ['5.1 audio', withAudio({ channels: 6 }), 'audio has 6 channels'],
    ['22.05 kHz audio', withAudio({ sampleRate: 22_050 }), 'audio sample rate 22050 Hz is not 44.1 or 48 kHz'],
  ];
  for (const [name, facts, reason] of cases) {
    it(`refuses ${name}`, () => assert.deepEqual(passthroughEligibility(facts, 6), { eligible: false, reason }));
  }
  it('allows keyframes exactly two segments apart, and caps the bitrate by the rung that fits the height', () => {
    assert.equal(passthroughEligibility({ ...good, keyframes: [0, 12, 24], durationSeconds: 36 }, 6).eligible, true);
    // 1000p fits the 720p rung (2.8 Mb/s): cap 7 Mb/s.
    assert.deepEqual(passthroughEligibility({ ...withVideo({ bitrate: 7_000_001 }), width: 1778, height: 1000 }, 6), {
      eligible: false,
      reason: 'video bitrate 7000001 b/s is above 7000000 b/s for its height',
    });
  });
  it('measures keyframe gaps including the tail', () => {
    assert.equal(maxKeyframeGap([0, 2, 7], 8), 5);
    assert.equal(maxKeyframeGap([0, 2], 10), 8);
    assert.equal(maxKeyframeGap([], 10), 10);
  });
  it('parses keyframes from the packet scan', () => {
    assert.deepEqual(parseKeyframes('0.000000,K__\n0.041667,___\n2.000000,K_\n2.000000,K_\nN/A,K_\n4.5,K_D\n'), [0, 2, 4.5]);
  });
  it('measures peak and average bandwidth from segment sizes', () => {
    assert.deepEqual(measuredBandwidth([{ seconds: 6, bytes: 750_000 }, { seconds: 2, bytes: 500_000 }]), { peak: 2_000_000, average: 1_250_000 });
  });
  it('keeps the passthrough in the master only while no ready rung is as tall', () => {
    const src = { width: 1920, height: 1080 };
    assert.equal(keepPassthrough(src, [{ width: 426, height: 240 }, { width: 1280, height: 720 }]), true);
    assert.equal(keepPassthrough(src, [{ width: 1920, height: 1080 }]), false);
    assert.equal(keepPassthrough({ width: 720, height: 1280 }, [{ width: 720, height: 1280 }]), false, 'portrait compares short sides');
  });
  it('remuxes without re-encoding', () => {
    assert.deepEqual(remuxArgs({ input: '/in/a.mp4', outputDir: '/out', hasAudio: true, segmentSeconds: 6 }), [
      '-progress', 'pipe:1', '-nostats', '-y', '-hide_banner', '-loglevel', 'error',
      '-i', '/in/a.mp4', '-map', '0:v:0', '-map', '0:a:0', '-c', 'copy',
      '-f', 'hls', '-hls_time', '6', '-hls_playlist_type', 'vod', '-hls_segment_type', 'mpegts', '-hls_flags', 'independent_segments',
      '-hls_segment_filename', '/out/seg_%05d.ts', '/out/index.m3u8',
    ]);
  });
});
