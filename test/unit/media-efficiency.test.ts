import assert from 'node:assert/strict';
import { masterPlaylist } from '../../lib/media/args';
import { honestRung } from '../../lib/media/bandwidth';
import { LADDER, planLadder, sourceIsTopRung } from '../../lib/media/ladder';

describe('media: honest bandwidth and the source as the top rung (issue 28)', () => {
  it('honestRung lists the measured peak and average, CODECS still from the nominal rung', () => {
    const r720 = LADDER[3];
    const text = masterPlaylist([honestRung(r720, { peak: 912_345, average: 401_000 })], (r) => `${r.name}/index.m3u8`);
    assert.equal(
      text,
      '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-INDEPENDENT-SEGMENTS\n' +
        '#EXT-X-STREAM-INF:BANDWIDTH=912345,AVERAGE-BANDWIDTH=401000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2"\n720p/index.m3u8\n',
    );
  });

  it('honestRung keeps the nominal figures until measured', () => {
    assert.equal(honestRung(LADDER[0], null), LADDER[0]);
    assert.equal(honestRung(LADDER[0], { peak: 0, average: 0 }), LADDER[0]);
  });

  it('sourceIsTopRung: same size as the top rung, unrotated, within its cap', () => {
    const top = planLadder({ width: 1920, height: 1080 }).at(-1)!;
    const src = { width: 1920, height: 1080, rotation: 0, videoBitrate: 4_000_000 };
    assert.equal(sourceIsTopRung(src, top), true);
    assert.equal(sourceIsTopRung({ ...src, videoBitrate: 5_000_000 }, top), true, 'at the cap');
    assert.equal(sourceIsTopRung({ ...src, videoBitrate: 5_000_001 }, top), false, 'over the cap');
    assert.equal(sourceIsTopRung({ ...src, videoBitrate: null }, top), false);
    assert.equal(sourceIsTopRung({ ...src, rotation: 90 }, top), false);
    const odd = planLadder({ width: 1280, height: 1000 });
    assert.equal(sourceIsTopRung({ width: 1280, height: 1000, rotation: 0, videoBitrate: 1_000_000 }, odd.at(-1)), false, 'a 1000p source is not the 720p rung');
    assert.equal(sourceIsTopRung(src, undefined), false);
  });
});
