import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import type { Browser } from 'playwright-core';
import { playlistUris, readyVideo } from '../playback/helpers';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { cdnGet, launchChromium, outputDir } from './helpers';

const VTT = 'WEBVTT\n\n00:00:00.000 --> 00:00:02.000\nHello from the captions\n\n00:00:02.000 --> 00:00:03.500\n<i>Second</i> cue\n';
const SRT = '1\r\n00:00:00,500 --> 00:00:02,000\r\nBonjour\r\n\r\n2\r\n00:00:02,000 --> 00:00:03,000\r\nDeuxième\r\n';

describe('Outputs: captions (SPEC §14)', function () {
  this.timeout(120_000);
  let s: Stack;
  let video: Awaited<ReturnType<typeof readyVideo>>;
  let browser: Browser | undefined;

  const put = (lang: string, body: string, type: string, query = '') =>
    request(s.url).put(`/v1/videos/${video.id}/captions/${lang}${query}`).set('Authorization', `Bearer ${s.ws.fullKey}`).set('Content-Type', type).send(body);
  const master = async () => (await cdnGet(s, `/v/${video.id}/master.m3u8`).expect(200)).body.toString('utf8') as string;

  before(async function () {
    this.timeout(240_000);
    s = await startStack();
    video = await readyVideo(s, await makeClip({ width: 320, height: 180, seconds: 4 }), 'public');
  });
  after(async () => browser?.close());

  it('accepts WebVTT and SRT, lists them, and republishes the master with a SUBTITLES group without touching the renditions', async () => {
    const before = await master();
    assert.doesNotMatch(before, /SUBTITLES/);
    const en = await put('en', VTT, 'text/vtt');
    assert.equal(en.status, 201, JSON.stringify(en.body));
    assert.deepEqual({ ...en.body, url: undefined }, { language: 'en', label: 'English', default: false, status: 'ready', cues: 2, url: undefined, error: null });
    const fr = await put('fr-fr', SRT, 'application/x-subrip', '?label=Fran%C3%A7ais&default=true');
    assert.equal(fr.status, 201, JSON.stringify(fr.body));
    assert.equal(fr.body.language, 'fr-FR', 'stored in canonical BCP-47 case');
    assert.equal(fr.body.default, true);

    const list = await s.get(`/v1/videos/${video.id}/captions`).expect(200);
    assert.deepEqual(list.body.data.map((c: { language: string; label: string; default: boolean }) => [c.language, c.label, c.default]), [
      ['en', 'English', false],
      ['fr-FR', 'Français', true],
    ]);
    const read = await s.get(`/v1/videos/${video.id}`).expect(200);
    assert.equal(read.body.captions.length, 2);
    assert.equal(read.body.captions[1].url, `${s.config.cdnUrl}/v/${video.id}/captions/fr-FR.vtt`);

    const after = await master();
    assert.deepEqual(playlistUris(after), playlistUris(before), 'renditions unchanged');
    assert.match(after, /#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English",LANGUAGE="en",DEFAULT=NO,AUTOSELECT=YES,URI="subs\/en\/index.m3u8"/);
    assert.match(after, /LANGUAGE="fr-FR",DEFAULT=YES/);
    for (const l of after.split('\n').filter((x) => x.startsWith('#EXT-X-STREAM-INF'))) assert.match(l, /,SUBTITLES="subs"$/);

    const playlist = await cdnGet(s, `/v/${video.id}/subs/fr-FR/index.m3u8`).expect(200);
    assert.match(playlist.headers['content-type'], /mpegurl/);
    assert.match(playlist.body.toString(), /#EXTINF:4\.\d{3},\ncaptions\.vtt\n#EXT-X-ENDLIST/);
    const converted = await cdnGet(s, `/v/${video.id}/captions/fr-FR.vtt`).expect(200);
    assert.match(converted.headers['content-type'], /text\/vtt/);
    assert.equal(converted.body.toString(), 'WEBVTT\n\n1\n00:00:00.500 --> 00:00:02.000\nBonjour\n\n2\n00:00:02.000 --> 00:00:03.000\nDeuxième\n');

    // Replacing a track keeps one entry; a new default unsets the old one.
    const again = await put('en', VTT, 'text/vtt; charset=utf-8', '?default=1');
    assert.equal(again.status, 200);
    const list2 = await s.get(`/v1/videos/${video.id}/captions`).expect(200);
    assert.deepEqual(list2.body.data.map((c: { default: boolean }) => c.default), [true, false]);
  });

  it('refuses broken files with the line, bad language tags and other content types', async () => {
    const badVtt = await put('de', 'WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nok\n\n00:00:0x.000 --> 00:00:04.000\nbad\n', 'text/vtt');
    assert.equal(badVtt.status, 400);
    assert.equal(badVtt.body.error.code, 'invalid_captions');
    assert.equal(badVtt.body.error.details.line, 6);
    assert.match(badVtt.body.error.message, /line 6/);
    const noHeader = await put('de', '00:00:01.000 --> 00:00:02.000\nok\n', 'text/vtt');
    assert.equal(noHeader.body.error.details.line, 1);
    // Line 6 of the SRT as sent: its end is before its start.
    const badSrt = await put('de', '1\n00:00:01,000 --> 00:00:02,000\nok\n\n2\n00:00:05,000 --> 00:00:03,000\nbackwards\n', 'application/x-subrip');
    assert.equal(badSrt.status, 400);
    assert.equal(badSrt.body.error.code, 'invalid_captions');
    assert.equal(badSrt.body.error.details.line, 6);
    for (const lang of ['e', 'en_US', 'x!', 'toolonglanguagetagthatisnotvalidatall1']) {
      const r = await put(lang, VTT, 'text/vtt');
      assert.equal(r.status, 400, lang);
      assert.equal(r.body.error.code, 'invalid_language');
    }
    const json = await put('de', VTT, 'application/json');
    assert.equal(json.status, 400);
    const plain = await put('de', VTT, 'text/plain');
    assert.equal(plain.status, 400);
    const badDefault = await put('de', VTT, 'text/vtt', '?default=maybe');
    assert.equal(badDefault.status, 400);
    const list = await s.get(`/v1/videos/${video.id}/captions`).expect(200);
    assert.ok(!list.body.data.some((c: { language: string }) => c.language === 'de'));
    const read = await request(s.url).put(`/v1/videos/${video.id}/captions/de`).set('Authorization', `Bearer ${s.ws.readKey}`).set('Content-Type', 'text/vtt').send(VTT);
    assert.equal(read.status, 403);
  });

  it('plays the SUBTITLES group in Chromium: hls.js exposes a text track with the cues', async function () {
    this.timeout(90_000);
    browser = await launchChromium();
    const page = await browser.newPage();
    try {
      await page.goto(`${s.config.playerUrl}/embed/${video.id}?autoplay=1`);
      const logs: string[] = [];
      page.on('console', (m) => logs.push(`${m.type()}: ${m.text()}`));
      page.on('requestfailed', (r) => logs.push(`failed: ${r.url()}`));
      page.on('response', (r) => r.status() >= 400 && logs.push(`${r.status()}: ${r.url()}`));
      // The default track (en, after the PUT with default=1) is selected by hls.js and its cues loaded.
      await page
        .waitForFunction(
          () => {
            const v = document.querySelector('video') as HTMLVideoElement;
            const t = Array.from(v.textTracks).find((x) => x.language === 'en');
            return Boolean(t && t.cues && t.cues.length > 0);
          },
          undefined,
          { timeout: 45_000 },
        )
        .catch(async (err) => {
          const state = await page.evaluate(() => {
            const v = document.querySelector('video') as HTMLVideoElement;
            return { t: v.currentTime, tracks: Array.from(v.textTracks).map((x) => [x.language, x.mode, x.cues?.length ?? null]) };
          });
          throw new Error(`${(err as Error).message}; state ${JSON.stringify(state)}; ${logs.join(' | ')}`);
        });
      const tracks = await page.evaluate(() =>
        Array.from((document.querySelector('video') as HTMLVideoElement).textTracks).map((t) => ({
          language: t.language,
          label: t.label,
          cues: Array.from(t.cues ?? []).map((c) => (c as VTTCue).text),
        })),
      );
      const en = tracks.find((t) => t.language === 'en');
      assert.ok(en, JSON.stringify(tracks));
      assert.ok(en.cues.includes('Hello from the captions'), JSON.stringify(en));
      assert.ok(tracks.some((t) => t.language === 'fr-FR'), 'both tracks offered');
      fs.mkdirSync(outputDir, { recursive: true });
      await page.screenshot({ path: path.join(outputDir, 'outputs-captions.png') });
    } finally {
      await page.close();
    }
  });

  it('DELETE removes the track from the list, the master and the CDN', async () => {
    await s.del(`/v1/videos/${video.id}/captions/fr-FR`).expect(204);
    await s.del(`/v1/videos/${video.id}/captions/fr-FR`).expect(404);
    const m = await master();
    assert.doesNotMatch(m, /fr-FR/);
    assert.match(m, /LANGUAGE="en"/);
    await cdnGet(s, `/v/${video.id}/captions/fr-FR.vtt`).expect(404);
    await cdnGet(s, `/v/${video.id}/subs/fr-FR/index.m3u8`).expect(404);
    await s.del(`/v1/videos/${video.id}/captions/en`).expect(204);
    assert.doesNotMatch(await master(), /SUBTITLES/);
    const read = await s.get(`/v1/videos/${video.id}`).expect(200);
    assert.deepEqual(read.body.captions, []);
  });
});
