import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { allRenditionsReady, uploadFormA, waitForVideo } from '../support/flow';
import { ffprobeJson, makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required'];
const SHAKA = path.join(__dirname, '..', '..', 'node_modules', 'shaka-player', 'dist', 'shaka-player.compiled.js');

/** Issue 28 (SPEC §21): HEVC and AV1 as CMAF renditions next to H.264, and a DASH manifest over them. */
describe('codecs: HEVC and AV1 CMAF renditions, DASH (real ffmpeg + Temporal + Chromium)', function () {
  this.timeout(300_000);
  let s: Stack;
  before(async () => {
    s = await startStack();
  });

  it('lists hvc1/av01 variants with correct CODECS, the HEVC rendition probes as HEVC, and Shaka plays the AV1 DASH manifest', async () => {
    const { id } = await uploadFormA(s, await makeClip({ width: 320, height: 180, seconds: 4 }), { extra: { codecs: ['hevc', 'av1'] } });
    const ready = await waitForVideo(s, id, allRenditionsReady, 240_000);
    assert.deepEqual(ready.codecs, ['h264', 'hevc', 'av1']);
    // SPEC §23: dash_url is in the read only once the manifest is published (never a URL that answers 404).
    const v = await waitForVideo(s, id, (x) => x.dash_url !== null, 240_000);
    assert.equal(v.dash_url, `${s.config.cdnUrl}/v/${id}/manifest.mpd`);
    assert.equal((await fetch(v.dash_url)).status, 200, 'the manifest exists as soon as the read names it');
    // The CMAF renditions follow the H.264 ladder: wait for the manifest.
    let mpd: Response | undefined;
    for (let i = 0; i < 240 && (!mpd || mpd.status !== 200); i++) {
      mpd = await fetch(v.dash_url);
      if (mpd.status !== 200) await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(mpd!.status, 200);
    assert.equal(mpd!.headers.get('content-type'), 'application/dash+xml');
    const manifest = await mpd!.text();
    assert.match(manifest, /codecs="av01\.0\.\d\dM\.08"/);
    assert.match(manifest, /codecs="hvc1\.1\.6\.L\d+\.B0"/);

    const master = await (await fetch(v.hls_url)).text();
    // Their sound is the CMAF audio group (issue 28: the AAC packaged once as fMP4), so AAC is
    // named beside the video codec; the H.264 (TS) variants keep the TS AUDIO group (SPEC §19).
    assert.match(master, /#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud-cmaf",[^\n]*DEFAULT=YES[^\n]*URI="audio\/a0-cmaf\/index\.m3u8"/);
    assert.match(master, /#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",[^\n]*URI="audio\/a0\/index\.m3u8"/);
    assert.match(master, /CODECS="hvc1\.1\.6\.L\d+\.B0,mp4a\.40\.2"[^\n]*AUDIO="aud-cmaf"[^\n]*\n180p-hevc\/index\.m3u8/);
    assert.match(master, /CODECS="av01\.0\.\d\dM\.08,mp4a\.40\.2"[^\n]*AUDIO="aud-cmaf"[^\n]*\n180p-av1\/index\.m3u8/);
    assert.match(master, /CODECS="avc1\.[0-9a-f]{6},mp4a\.40\.2"[^\n]*AUDIO="aud"[^\n]*\n180p\/index\.m3u8/, 'H.264 always stays, with TS audio');
    // The DASH manifest has the same CMAF audio as an audio AdaptationSet.
    assert.match(manifest, /<AdaptationSet [^>]*contentType="audio" mimeType="audio\/mp4"[^>]*>[\s\S]*?codecs="mp4a\.40\.2"[\s\S]*?initialization="audio\/a0-cmaf\/init\.mp4"/);
    // The CMAF audio is AAC in fMP4 (init + first segment probe as one file), as long as the video.
    const audioPlaylist = await (await fetch(new URL('audio/a0-cmaf/index.m3u8', v.dash_url))).text();
    assert.match(audioPlaylist, /#EXT-X-MAP:URI="init\.mp4"/);
    const audioInit = await fetch(new URL('audio/a0-cmaf/init.mp4', v.dash_url));
    assert.equal(audioInit.status, 200);
    const audioSeg = await fetch(new URL('audio/a0-cmaf/seg_00000.m4s', v.dash_url));
    assert.equal(audioSeg.status, 200);
    const audioFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'cmaf-audio-')), 'first.mp4');
    fs.writeFileSync(audioFile, Buffer.concat([Buffer.from(await audioInit.arrayBuffer()), Buffer.from(await audioSeg.arrayBuffer())]));
    const probedAudio = await ffprobeJson(audioFile);
    assert.equal(probedAudio.format.format_name, 'mov,mp4,m4a,3gp,3g2,mj2');
    assert.deepEqual(probedAudio.streams.map((x) => [x.codec_type, x.codec_name]), [['audio', 'aac']]);
    const fullAudio = await ffprobeJson(await s.storage.mediaSource(`videos/${s.ws.id}/${v.uuid}/hls/audio/a0-cmaf/index.m3u8`));
    assert.ok(Math.abs(Number(fullAudio.format.duration) - 4) < 0.2, `audio duration ${fullAudio.format.duration}`);

    // The HEVC rendition is HEVC in hvc1 sample entries (what Safari and MSE require), full length.
    const hevc = await ffprobeJson(await s.storage.mediaSource(`videos/${s.ws.id}/${v.uuid}/hls/180p-hevc/index.m3u8`));
    const stream = hevc.streams.find((x) => x.codec_type === 'video')!;
    assert.equal(stream.codec_name, 'hevc');
    assert.equal(stream.codec_tag_string, 'hvc1');
    assert.equal(stream.width, 320);
    assert.ok(Math.abs(Number(hevc.format.duration) - 4) < 0.2, `duration ${hevc.format.duration}`);
    // Segments and init are served by the CDN routes with their types.
    const init = await fetch(new URL('180p-av1/init.mp4', v.dash_url));
    assert.equal(init.status, 200);
    assert.equal(init.headers.get('content-type'), 'video/mp4');

    // Shaka Player (another origin) plays the DASH manifest with AV1 in Chromium.
    const site = http.createServer((req, res) => {
      if (req.url === '/shaka.js') {
        res.setHeader('Content-Type', 'text/javascript');
        fs.createReadStream(SHAKA).pipe(res);
        return;
      }
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.end('<!doctype html><video id="v" muted autoplay playsinline></video><script src="/shaka.js"></script>');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    try {
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
      const result = await page.evaluate(async (url) => {
        const w = window as unknown as { shaka: any };
        w.shaka.polyfill.installAll();
        const video = document.getElementById('v') as HTMLVideoElement;
        const player = new w.shaka.Player();
        await player.attach(video);
        player.configure({ preferredVideoCodecs: ['av01'] });
        await player.load(url);
        await video.play();
        const t0 = Date.now();
        while (video.currentTime < 1 && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 100));
        const active = player.getVariantTracks().find((t: { active: boolean }) => t.active);
        const buffered = player.getBufferedInfo();
        return {
          time: video.currentTime,
          width: video.videoWidth,
          codec: active?.videoCodec ?? null,
          audioCodec: active?.audioCodec ?? null,
          audioBuffered: buffered.audio.reduce((n: number, r: { start: number; end: number }) => n + (r.end - r.start), 0),
          error: video.error?.message ?? null,
        };
      }, v.dash_url);
      assert.equal(result.error, null);
      assert.ok(result.time >= 1, `played to ${result.time} s`);
      assert.equal(result.width, 320);
      assert.match(String(result.codec), /^av01/);
      // Its variant has sound: the CMAF AAC audio, buffered as it plays.
      assert.equal(result.audioCodec, 'mp4a.40.2');
      assert.ok(result.audioBuffered >= 1, `audio buffered ${result.audioBuffered} s`);
    } finally {
      await browser.close();
      site.close();
    }
  });
});
