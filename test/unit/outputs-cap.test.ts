import assert from 'node:assert/strict';
import { capLadder } from '../../lib/media/cap';
import { planLadder } from '../../lib/media/ladder';

describe('capLadder (max_resolution)', () => {
  const full = planLadder({ width: 3840, height: 2160 });
  const names = (cap?: Parameters<typeof capLadder>[1]) => capLadder(full, cap).map((r) => r.name);

  it('keeps the whole ladder without a cap', () => {
    assert.deepEqual(names(undefined), ['240p', '360p', '480p', '720p', '1080p', '1440p', '2160p']);
  });

  it('stops at the cap, inclusive', () => {
    assert.deepEqual(names('480p'), ['240p', '360p', '480p']);
    assert.deepEqual(names('1080p'), ['240p', '360p', '480p', '720p', '1080p']);
    assert.deepEqual(names('2160p'), full.map((r) => r.name));
  });

  it('judges portrait rungs by their short side', () => {
    const portrait = planLadder({ width: 1080, height: 1920 });
    assert.deepEqual(capLadder(portrait, '720p').map((r) => `${r.width}x${r.height}`), ['240x426', '360x640', '480x854', '720x1280']);
  });

  it('never leaves a video without a rendition', () => {
    const tiny = planLadder({ width: 160, height: 90 });
    assert.equal(capLadder(tiny, '480p').length, 1);
  });
});
