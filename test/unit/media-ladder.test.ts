import assert from 'node:assert/strict';
import { LADDER, planLadder, type Rung } from '../../lib/media/ladder';

const dims = (rungs: Rung[]): string[] => rungs.map((r) => `${r.name}:${r.width}x${r.height}`);

describe('media/ladder', () => {
  it('defines the bitrate ladder with capped-VBR settings', () => {
    assert.deepEqual(
      LADDER.map((r) => [r.name, r.videoBitrate]),
      [
        ['240p', 400_000],
        ['360p', 800_000],
        ['480p', 1_400_000],
        ['720p', 2_800_000],
        ['1080p', 5_000_000],
        ['1440p', 8_000_000],
        ['2160p', 14_000_000],
      ],
    );
    for (const r of LADDER) {
      assert.equal(r.maxrate, Math.round(r.videoBitrate * 1.07));
      assert.equal(r.bufsize, Math.round(r.videoBitrate * 1.5));
      assert.equal(r.audioBitrate, 128_000);
    }
    assert.deepEqual(LADDER[3], {
      name: '720p', width: 1280, height: 720, videoBitrate: 2_800_000, maxrate: 2_996_000, bufsize: 4_200_000, audioBitrate: 128_000,
    });
  });

  it('1920x1080 -> 240p..1080p', () => {
    assert.deepEqual(dims(planLadder({ width: 1920, height: 1080 })), [
      '240p:426x240', '360p:640x360', '480p:854x480', '720p:1280x720', '1080p:1920x1080',
    ]);
  });

  it('1280x720 -> 240p..720p', () => {
    assert.deepEqual(dims(planLadder({ width: 1280, height: 720 })), ['240p:426x240', '360p:640x360', '480p:854x480', '720p:1280x720']);
  });

  it('portrait 720x1280 scales by the short side', () => {
    assert.deepEqual(dims(planLadder({ width: 720, height: 1280 })), ['240p:240x426', '360p:360x640', '480p:480x854', '720p:720x1280']);
  });

  it('3840x2160 -> all seven rungs', () => {
    const rungs = planLadder({ width: 3840, height: 2160 });
    assert.deepEqual(dims(rungs), [
      '240p:426x240', '360p:640x360', '480p:854x480', '720p:1280x720', '1080p:1920x1080', '1440p:2560x1440', '2160p:3840x2160',
    ]);
    assert.deepEqual(rungs, LADDER);
  });

  it('a source below 240p gets exactly one rung at its own size', () => {
    const rungs = planLadder({ width: 320, height: 180 });
    assert.deepEqual(dims(rungs), ['180p:320x180']);
    assert.equal(rungs[0].videoBitrate, 400_000);
    assert.deepEqual(dims(planLadder({ width: 256, height: 144 })), ['144p:256x144']);
    assert.deepEqual(dims(planLadder({ width: 181, height: 321 })), ['180p:180x320']);
  });

  it('426x240 -> exactly the 240p rung', () => {
    assert.deepEqual(dims(planLadder({ width: 426, height: 240 })), ['240p:426x240']);
  });

  it('odd dimensions give even rungs and never exceed the source', () => {
    const rungs = planLadder({ width: 853, height: 480 });
    assert.deepEqual(dims(rungs), ['240p:426x240', '360p:640x360', '480p:852x480']);
    for (const r of rungs) {
      assert.equal(r.width % 2, 0);
      assert.equal(r.height % 2, 0);
    }
  });

  it('rotation 90/270 swaps width and height; 180 does not', () => {
    const portrait = ['240p:240x426', '360p:360x640', '480p:480x854', '720p:720x1280', '1080p:1080x1920'];
    assert.deepEqual(dims(planLadder({ width: 1920, height: 1080, rotation: 90 })), portrait);
    assert.deepEqual(dims(planLadder({ width: 1920, height: 1080, rotation: 270 })), portrait);
    assert.deepEqual(dims(planLadder({ width: 1920, height: 1080, rotation: -90 })), portrait);
    assert.deepEqual(dims(planLadder({ width: 1920, height: 1080, rotation: 180 })), dims(planLadder({ width: 1920, height: 1080 })));
  });

  it('keeps non-16:9 aspect ratios', () => {
    assert.deepEqual(dims(planLadder({ width: 1440, height: 1080 })), [
      '240p:320x240', '360p:480x360', '480p:640x480', '720p:960x720', '1080p:1440x1080',
    ]);
  });

  it('rejects nonsense dimensions', () => {
    assert.throws(() => planLadder({ width: 0, height: 1080 }), RangeError);
    assert.throws(() => planLadder({ width: Number.NaN, height: 1080 }), RangeError);
  });

  it('imports no Node built-ins (workflow determinism)', async () => {
    const { readFile } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const src = await readFile(join(__dirname, '../../lib/media/ladder.ts'), 'utf8');
    assert.doesNotMatch(src, /\bimport\b|\brequire\(/);
  });
});
