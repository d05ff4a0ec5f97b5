import assert from 'node:assert/strict';
import { cdnGet, probeBytes } from '../outputs/helpers';
import { startStack, type Stack } from '../support/stack';
import { audioMedia, cdnText, settled, upload } from './helpers';
import { audioSource } from './media';

describe('Audio: each source audio stream is its own rendition (SPEC §19)', function () {
  this.timeout(300_000);
  let s: Stack;
  const ids: Record<string, string> = {};

  before(async function () {
    this.timeout(300_000);
    s = await startStack();
    for (const name of ['twoLangMkv', 'twoLangMp4', 'surround', 'silentVideo'] as const) ids[name] = await upload(s, await audioSource(name));
  });
  after(() => s?.close());

  for (const name of ['twoLangMkv', 'twoLangMp4'] as const) {
    it(`${name}: two languages → an AUDIO group, the first default, every video rung referencing it and carrying no audio`, async () => {
      const v = await settled(s, ids[name]);
      assert.equal(v.status, 'ready', JSON.stringify(v));
      const names = name === 'twoLangMkv' ? ['English', 'Français'] : ['English', 'French'];
      assert.deepEqual(v.audio_tracks, [
        { language: 'en', name: names[0], default: true, channels: 2, status: 'ready' },
        { language: 'fr', name: names[1], default: false, channels: 2, status: 'ready' },
      ]);
      assert.equal(typeof v.loudness_lufs, 'number');
      const master = await cdnText(s, `/v/${v.id}/master.m3u8`);
      const media = audioMedia(master);
      assert.deepEqual(media.map((m) => [m['GROUP-ID'], m.LANGUAGE, m.DEFAULT, m.AUTOSELECT, m.CHANNELS]), [
        ['aud', 'en', 'YES', 'YES', '2'],
        ['aud', 'fr', 'NO', 'YES', '2'],
      ]);
      const variants = master.split('\n').filter((l) => l.startsWith('#EXT-X-STREAM-INF'));
      assert.ok(variants.length > 0);
      for (const l of variants) {
        assert.match(l, /AUDIO="aud"/);
        assert.match(l, /CODECS="avc1\.[0-9a-fA-F]{6},mp4a\.40\.2"/);
      }
      // The rung's segments are video only; each audio rendition has audio only.
      const rung = master.split('\n').find((l) => l.endsWith('/index.m3u8') && !l.startsWith('#'))!;
      const rungPlaylist = await cdnText(s, `/v/${v.id}/${rung}`);
      const seg = rungPlaylist.split('\n').find((l) => l.endsWith('.ts'))!;
      const segProbe = await probeBytes((await cdnGet(s, `/v/${v.id}/${rung.replace('index.m3u8', seg)}`).expect(200)).body, 'ts');
      assert.deepEqual(segProbe.streams.map((x) => x.codec_type), ['video']);
      for (const m of media) {
        const pl = await cdnText(s, `/v/${v.id}/${m.URI}`);
        const aseg = pl.split('\n').find((l) => l.endsWith('.ts'))!;
        const p = await probeBytes((await cdnGet(s, `/v/${v.id}/${m.URI.replace('index.m3u8', aseg)}`).expect(200)).body, 'ts');
        assert.deepEqual(p.streams.map((x) => [x.codec_type, x.codec_name, x.channels]), [['audio', 'aac', 2]]);
      }
    });
  }

  it('5.1 + stereo: the 5.1 stream gets a stereo downmix (default) and keeps a CHANNELS="6" rendition; `und` without a language', async () => {
    const v = await settled(s, ids.surround);
    assert.equal(v.status, 'ready', JSON.stringify(v));
    assert.deepEqual(v.audio_tracks, [
      { language: 'en', name: 'English', default: true, channels: 2, status: 'ready' },
      { language: 'en', name: 'English (5.1)', default: false, channels: 6, status: 'ready' },
      { language: 'und', name: 'Audio 2', default: false, channels: 2, status: 'ready' },
    ]);
    const media = audioMedia(await cdnText(s, `/v/${v.id}/master.m3u8`));
    assert.deepEqual(media.map((m) => [m.LANGUAGE, m.CHANNELS, m.DEFAULT]), [['en', '2', 'YES'], ['en', '6', 'NO'], ['und', '2', 'NO']]);
    const surround = media[1];
    const pl = await cdnText(s, `/v/${v.id}/${surround.URI}`);
    const seg = pl.split('\n').find((l) => l.endsWith('.ts'))!;
    const p = await probeBytes((await cdnGet(s, `/v/${v.id}/${surround.URI.replace('index.m3u8', seg)}`).expect(200)).body, 'ts');
    assert.equal(p.streams[0].channels, 6);
  });

  it('a silent video (no audio stream at all) is ready with no AUDIO group, video-only CODECS and no loudness', async () => {
    const v = await settled(s, ids.silentVideo);
    assert.equal(v.status, 'ready', JSON.stringify(v));
    assert.deepEqual(v.audio_tracks, []);
    assert.equal(v.loudness_lufs, null);
    const master = await cdnText(s, `/v/${v.id}/master.m3u8`);
    assert.doesNotMatch(master, /TYPE=AUDIO|AUDIO=|mp4a/);
  });
});
