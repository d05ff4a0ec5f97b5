import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { cdnGet, probeBytes } from '../outputs/helpers';
import { waitUntil } from '../playback/helpers';
import { startStack, type Stack } from '../support/stack';
import { cdnText, settled, upload } from './helpers';
import { audioSource, hostilePlaylist, loudnessOf } from './media';

const run = promisify(execFile);
const KINDS = ['mp3', 'm4a', 'wav', 'flac', 'opus'] as const;

/** The mean colour of a JPEG, by ffmpeg scaling it to one pixel. */
async function meanColour(jpeg: Buffer): Promise<[number, number, number]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-colour-'));
  try {
    fs.writeFileSync(path.join(dir, 'a.jpg'), jpeg);
    await run('ffmpeg', ['-v', 'error', '-i', path.join(dir, 'a.jpg'), '-vf', 'scale=1:1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', path.join(dir, 'p.rgb')]);
    const [r, g, b] = fs.readFileSync(path.join(dir, 'p.rgb'));
    return [r, g, b];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('Audio: audio-only media and loudness (SPEC §19)', function () {
  this.timeout(300_000);
  let s: Stack;
  const ids: Record<string, string> = {};

  before(async function () {
    this.timeout(300_000);
    s = await startStack();
    for (const k of KINDS) ids[k] = await upload(s, await audioSource(k), k === 'wav' ? { mp4_support: 'audio_only' } : {});
    ids.mp3Cover = await upload(s, await audioSource('mp3Cover'));
    ids.hostile = await upload(s, hostilePlaylist());
    ids.quiet = await upload(s, await audioSource('quietVideo'), { normalize_audio: true });
    ids.quietAsIs = await upload(s, await audioSource('quietVideo'));
  });
  after(() => s?.close());

  for (const k of KINDS) {
    it(`${k}: an audio-only ladder (64 and 128 kb/s AAC), its duration, a waveform poster, no video anywhere`, async () => {
      const v = await settled(s, ids[k]);
      assert.equal(v.status, 'ready', JSON.stringify(v));
      assert.deepEqual(v.renditions.map((r: { name: string; bitrate: number; status: string }) => [r.name, r.bitrate, r.status]), [
        ['audio-64k', 64000, 'ready'],
        ['audio-128k', 128000, 'ready'],
      ]);
      assert.ok(Math.abs(v.duration_seconds - 3) < 0.2, `duration ${v.duration_seconds}`);
      assert.equal(v.width, null);
      assert.equal(typeof v.loudness_lufs, 'number');
      const master = await cdnText(s, `/v/${v.id}/master.m3u8`);
      assert.match(master, /#EXT-X-STREAM-INF:BANDWIDTH=\d+,AVERAGE-BANDWIDTH=64000,CODECS="mp4a.40.2"\naudio-64k\/index.m3u8/);
      assert.match(master, /AVERAGE-BANDWIDTH=128000,CODECS="mp4a.40.2"\naudio-128k\/index.m3u8/);
      const pl = await cdnText(s, `/v/${v.id}/audio-128k/index.m3u8`);
      const seg = pl.split('\n').find((l) => l.endsWith('.ts'))!;
      const p = await probeBytes((await cdnGet(s, `/v/${v.id}/audio-128k/${seg}`).expect(200)).body, 'ts');
      assert.deepEqual(p.streams.map((x) => [x.codec_type, x.codec_name]), [['audio', 'aac']]);
      const thumb = await cdnGet(s, `/v/${v.id}/thumbnail.jpg`).expect(200);
      const t = await probeBytes(thumb.body, 'jpg');
      assert.deepEqual([t.streams[0].width, t.streams[0].height], [1280, 360], 'the waveform picture');
      const [r, g, b] = await meanColour(thumb.body);
      assert.ok(b > r && b > 20, `a blue waveform on a dark band, mean rgb ${r},${g},${b}`);
      // A resolution cap is about video frames: a capped token still gets the waveform as it is.
      const capped = (await s.get(`/v1/playback/${v.id}?max_resolution=240p`).expect(200)).body.token;
      assert.deepEqual((await cdnGet(s, `/v/${capped}/thumbnail.jpg`).expect(200)).body, thumb.body);
    });
  }

  it('mp4_support audio_only on an audio-only upload → audio.m4a', async () => {
    let v: Record<string, any> = {};
    await waitUntil(async () => {
      v = (await s.get(`/v1/videos/${ids.wav}`).expect(200)).body;
      return v.static_renditions[0]?.status === 'ready';
    }, 'audio.m4a ready', 60_000);
    assert.equal(v.static_renditions[0].name, 'audio.m4a');
    const m4a = await cdnGet(s, `/v/${v.id}/download/audio.m4a`).expect(200);
    const p = await probeBytes(m4a.body, 'm4a');
    assert.deepEqual(p.streams.map((x) => [x.codec_type, x.codec_name, Number(x.bit_rate) > 90_000]), [['audio', 'aac', true]]);
  });

  it('an MP3 with cover art is audio-only, with the picture as its poster', async () => {
    const v = await settled(s, ids.mp3Cover);
    assert.equal(v.status, 'ready', JSON.stringify(v));
    assert.equal(v.renditions.length, 2);
    const thumb = await cdnGet(s, `/v/${v.id}/thumbnail.jpg`).expect(200);
    const t = await probeBytes(thumb.body, 'jpg');
    assert.deepEqual([t.streams[0].width, t.streams[0].height], [200, 200]);
    const [r, g, b] = await meanColour(thumb.body);
    assert.ok(r > 200 && g < 60 && b < 60, `the red cover, mean rgb ${r},${g},${b}`);
  });

  it('a hostile "audio" that is really an HLS playlist is refused: failed, invalid_media, nothing published', async () => {
    const v = await settled(s, ids.hostile);
    assert.equal(v.status, 'failed');
    assert.equal(v.error_code, 'invalid_media');
    assert.match(v.error_message, /HLS playlist/);
    assert.deepEqual(v.audio_tracks, []);
  });

  it('loudness is measured for every video; normalize_audio: true brings the renditions to −16 LUFS (±1 LU)', async () => {
    const [norm, asIs] = [await settled(s, ids.quiet), await settled(s, ids.quietAsIs)];
    assert.equal(norm.status, 'ready');
    assert.equal(norm.normalize_audio, true);
    assert.ok(norm.loudness_lufs < -40 && norm.loudness_lufs > -60, `the source is quiet: ${norm.loudness_lufs}`);
    assert.equal(asIs.loudness_lufs, norm.loudness_lufs, 'the source is measured the same either way');
    const measured = async (id: string) => {
      const master = await cdnText(s, `/v/${id}/master.m3u8`);
      const uri = /TYPE=AUDIO.*URI="([^"]+)"/.exec(master)![1];
      const pl = await cdnText(s, `/v/${id}/${uri}`);
      const segs = pl.split('\n').filter((l) => l.endsWith('.ts'));
      const bytes = Buffer.concat(await Promise.all(segs.map(async (x) => (await cdnGet(s, `/v/${id}/${uri.replace('index.m3u8', x)}`).expect(200)).body)));
      const file = path.join(os.tmpdir(), `vidhost-loud-${id}.ts`);
      fs.writeFileSync(file, bytes);
      try {
        return await loudnessOf(file);
      } finally {
        fs.rmSync(file, { force: true });
      }
    };
    const out = await measured(norm.id);
    assert.ok(Math.abs(out - -16) <= 1, `normalised rendition at ${out} LUFS`);
    const untouched = await measured(asIs.id);
    assert.ok(Math.abs(untouched - asIs.loudness_lufs) <= 1.5, `without normalize_audio the rendition keeps the source's ${asIs.loudness_lufs} LUFS (got ${untouched})`);
  });
});
