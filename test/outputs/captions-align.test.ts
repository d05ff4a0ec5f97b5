import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import type { Browser } from 'playwright-core';
import { WebVTTParser } from 'webvtt-parser';
import { readyVideo, waitUntil } from '../playback/helpers';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { medianAbsError, SCRIPT, silentClip, type SpokenClip, spokenClip } from '../support/speech';
import { closeContexts, sharedBrowser } from '../support/chromium';
import { cdnGet, outputDir } from './helpers';

interface Track {
  language: string;
  status: string;
  default: boolean;
  url: string;
  error: { code: string; message: string } | null;
}

/**
 * POST /v1/videos/{id}/captions/{language}/align end to end (issue 37): a video whose audio is
 * Festival reading SCRIPT after 1.5 s of silence; the track goes `aligning` → `ready`, its cues
 * start when their first word is said (Festival's own times are the reference), it is an ordinary
 * SUBTITLES track in the master that the embed player shows at the right moments; transcripts that
 * do not belong fail with a reason and `video.captions.failed`; hostile bodies get 4xx.
 */
describe('Outputs: captions from a transcript (issue 37)', function () {
  this.timeout(240_000);
  let s: Stack;
  let clip: SpokenClip;
  let video: Awaited<ReturnType<typeof readyVideo>>;
  let browser: Browser | undefined;

  const align = (id: string, lang: string, body: string | object, type = 'text/plain', query = '') =>
    request(s.url).post(`/v1/videos/${id}/captions/${lang}/align${query}`).set('Authorization', `Bearer ${s.ws.fullKey}`).set('Content-Type', type).send(body);
  const track = async (id: string, lang: string): Promise<Track | undefined> =>
    ((await s.get(`/v1/videos/${id}/captions`).expect(200)).body.data as Track[]).find((t) => t.language === lang);
  const settled = async (id: string, lang: string): Promise<Track> => {
    let t: Track | undefined;
    await waitUntil(async () => {
      t = await track(id, lang);
      return t?.status === 'ready' || t?.status === 'failed';
    }, `the ${lang} track of ${id} ready or failed`, 120_000);
    return t!;
  };

  before(async function () {
    this.timeout(300_000);
    s = await startStack();
    clip = await spokenClip(SCRIPT, { leadSilence: 1.5 });
    video = await readyVideo(s, clip.file, 'public');
  });
  after(async () => closeContexts(browser));

  it('aligns a plain-text transcript: 202 aligning, then ready with cues that start when their first word is said', async () => {
    const res = await align(video.id, 'en', SCRIPT, 'text/plain; charset=utf-8', '?default=true');
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(res.body.status, 'aligning');
    assert.equal(res.body.error, null);
    assert.equal((await s.get(`/v1/videos/${video.id}`).expect(200)).body.captions[0].status, 'aligning');
    const again = await align(video.id, 'en', SCRIPT);
    assert.ok(again.status === 409 || (again.status === 202 && again.body.status === 'aligning'), `${again.status} ${JSON.stringify(again.body)}`);
    if (again.status === 409) assert.equal(again.body.error.code, 'alignment_in_progress');

    const done = await settled(video.id, 'en');
    assert.equal(done.status, 'ready', JSON.stringify(done));
    const vtt = (await cdnGet(s, `/v/${video.id}/captions/en.vtt`).expect(200)).body.toString('utf8');
    const tree = new WebVTTParser().parse(vtt, 'subtitles');
    assert.deepEqual(tree.errors, []);
    assert.ok(tree.cues.length >= 5, vtt);

    // Each cue's first word, found in reading order among Festival's words ("42" is said "forty two").
    const spoken = clip.words.map((w) => w.word.toLowerCase());
    const pairs: Array<[number, number]> = [];
    let at = 0;
    for (const cue of tree.cues) {
      const lines = cue.text.split('\n');
      assert.ok(lines.length <= 2 && lines.every((l) => l.length <= 42), JSON.stringify(cue.text));
      assert.ok(cue.endTime - cue.startTime <= 7, `${cue.startTime} → ${cue.endTime}`);
      const first = cue.text.split(/\s+/)[0].toLowerCase().replace(/[^a-z']/g, '');
      const idx = spoken.indexOf(first, at);
      assert.ok(idx >= 0, `"${first}" not found in Festival's words after ${at}`);
      pairs.push([cue.startTime, clip.words[idx].start]);
      at = idx + 1;
    }
    const median = medianAbsError(pairs);
    console.log(`      median cue-start error vs Festival's word starts: ${median.toFixed(3)} s over ${pairs.length} cues`);
    assert.ok(median <= 0.3, `median cue-start error ${median} s`);
    assert.ok(tree.cues[0].startTime > 1.2, 'the first cue waits for the speech after the 1.5 s of silence');

    // The activity marks the track ready, then republishes the master (which lists ready tracks), so
    // a read between the two sees the old master: wait (10 s at most) for the master to list it.
    const subs = /#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English",LANGUAGE="en",DEFAULT=YES/;
    let master = '';
    await waitUntil(async () => subs.test((master = (await cdnGet(s, `/v/${video.id}/master.m3u8`).expect(200)).body.toString('utf8'))), 'the master listing the aligned track');
    assert.match(master, subs);
    let event: { payload: { data: { caption_track: { language: string; status: string } } } } | undefined;
    await waitUntil(async () => Boolean((event = await s.db('events').where({ video_id: video.uuid, type: 'video.captions.ready' }).first())), 'video.captions.ready recorded');
    assert.ok(event);
    assert.equal(event.payload.data.caption_track.language, 'en');
    assert.equal(event.payload.data.caption_track.status, 'ready');
  });

  it('plays in Chromium through the embed player: the aligned cue is active while its words are said', async function () {
    this.timeout(120_000);
    const vtt = (await cdnGet(s, `/v/${video.id}/captions/en.vtt`).expect(200)).body.toString('utf8');
    const cues = new WebVTTParser().parse(vtt, 'subtitles').cues;
    const probe = cues[2];
    browser = await sharedBrowser();
    const page = await browser.newPage();
    try {
      await page.goto(`${s.config.playerUrl}/embed/${video.id}`);
      await page.waitForFunction(() => {
        const v = document.querySelector('video') as HTMLVideoElement;
        const t = Array.from(v?.textTracks ?? []).find((x) => x.language === 'en');
        return Boolean(t && t.cues && t.cues.length > 0);
      }, undefined, { timeout: 60_000 });
      const active = async (time: number) =>
        page.evaluate(async (t) => {
          const v = document.querySelector('video') as HTMLVideoElement;
          const track = Array.from(v.textTracks).find((x) => x.language === 'en')!;
          if (track.mode === 'disabled') track.mode = 'hidden';
          v.currentTime = t;
          await new Promise((r) => v.addEventListener('seeked', r, { once: true }));
          await new Promise((r) => setTimeout(r, 300));
          return Array.from(track.activeCues ?? []).map((c) => (c as VTTCue).text);
        }, time);
      const mid = (probe.startTime + probe.endTime) / 2;
      assert.deepEqual(await active(mid), [probe.text], `at ${mid} s`);
      const seen = await page.evaluate(() => {
        const v = document.querySelector('video') as HTMLVideoElement;
        const t = Array.from(v.textTracks).find((x) => x.language === 'en')!;
        return Array.from(t.cues ?? []).map((c) => [c.startTime.toFixed(2), c.endTime.toFixed(2)].join('–')).join(' ');
      });
      const hlsVtt = (await cdnGet(s, `/v/${video.id}/subs/en/captions.vtt`).expect(200)).body.toString('utf8').split('\n').slice(0, 5).join(' / ');
      assert.deepEqual(await active(0.5), [], `nothing during the silence before the speech; player cues ${seen}; file ${cues.map((c) => `${c.startTime}–${c.endTime}`).join(' ')}; hls ${hlsVtt}`);
      fs.mkdirSync(outputDir, { recursive: true });
      await page.screenshot({ path: path.join(outputDir, 'outputs-captions-aligned.png') });
    } finally {
      await page.close();
    }
  });

  it('takes JSON {text} too, and fails clearly on a transcript in another language, on silence and without audio', async () => {
    // The silent and the mute videos process while the French transcripts are aligned (they were
    // uploaded one after the other, after them).
    const quietReady = silentClip(8).then((f) => readyVideo(s, f, 'public'));
    const muteReady = makeClip({ width: 320, height: 180, seconds: 3, audio: false }).then((f) => readyVideo(s, f, 'public'));
    // Awaited below; a failure before that must not be an unhandled rejection.
    quietReady.catch(() => undefined);
    muteReady.catch(() => undefined);
    const french = "Bonjour à tous, aujourd'hui nous parlons de l'alignement forcé, une façon de synchroniser les sous-titres avec la parole d'une vidéo.";
    const fr = await align(video.id, 'fr', { text: french }, 'application/json');
    assert.equal(fr.status, 202, JSON.stringify(fr.body));
    const frDone = await settled(video.id, 'fr');
    assert.equal(frDone.status, 'failed');
    assert.equal(frDone.error?.code, 'transcript_mismatch');
    assert.match(frDone.error!.message, /does not match the speech/);
    await cdnGet(s, `/v/${video.id}/captions/fr.vtt`).expect(404);
    const master = (await cdnGet(s, `/v/${video.id}/master.m3u8`).expect(200)).body.toString('utf8');
    assert.doesNotMatch(master, /LANGUAGE="fr"/, 'a failed track is not published');
    let failed: { payload: { data: { error: { code: string }; caption_track: { language: string } } } } | undefined;
    await waitUntil(async () => Boolean((failed = await s.db('events').where({ video_id: video.uuid, type: 'video.captions.failed' }).first())), 'video.captions.failed recorded');
    assert.equal(failed?.payload.data.error.code, 'transcript_mismatch');
    assert.equal(failed?.payload.data.caption_track.language, 'fr');

    // French words under `en`: the English dictionary knows few of them.
    const asEn = await align(video.id, 'en-GB', { text: french }, 'application/json');
    assert.equal(asEn.status, 202);
    const asEnDone = await settled(video.id, 'en-GB');
    assert.equal(asEnDone.status, 'failed');
    assert.match(asEnDone.error!.code, /^(transcript_not_in_dictionary|transcript_mismatch)$/);

    const quiet = await quietReady;
    const onSilence = await align(quiet.id, 'en', 'Welcome to the studio. Today we talk about forced alignment.');
    assert.equal(onSilence.status, 202);
    const silenceDone = await settled(quiet.id, 'en');
    assert.equal(silenceDone.status, 'failed');
    assert.equal(silenceDone.error?.code, 'transcript_mismatch');

    const mute = await muteReady;
    assert.equal((await align(mute.id, 'en', 'Welcome to the studio.')).status, 202);
    const muteDone = await settled(mute.id, 'en');
    assert.deepEqual([muteDone.status, muteDone.error?.code], ['failed', 'no_audio']);
  });

  it('refuses hostile transcripts before any work: 10 MB, NUL bytes, 100,000 one-letter words, bad UTF-8, other languages and types', async () => {
    const big = await align(video.id, 'en', 'word '.repeat(2 * 1024 * 1024));
    assert.equal(big.status, 413);
    const justOver = await align(video.id, 'en', 'a'.repeat(200 * 1024 + 1));
    assert.equal(justOver.status, 413);
    assert.equal(justOver.body.error.code, 'transcript_too_large');
    const nul = await align(video.id, 'en', 'hello\u0000world');
    assert.equal(nul.status, 400);
    assert.equal(nul.body.error.code, 'invalid_request');
    const nulJson = await align(video.id, 'en', { text: 'hello\u0000world' }, 'application/json');
    assert.equal(nulJson.status, 400);
    const started = Date.now();
    const many = await align(video.id, 'en', 'a '.repeat(100_000));
    assert.equal(many.status, 422, JSON.stringify(many.body));
    assert.equal(many.body.error.code, 'transcript_too_long');
    assert.ok(Date.now() - started < 10_000, 'answered without aligning');
    const badUtf8 = await request(s.url).post(`/v1/videos/${video.id}/captions/en/align`).set('Authorization', `Bearer ${s.ws.fullKey}`).set('Content-Type', 'text/plain').send(Buffer.from([0x68, 0xc3, 0x28]));
    assert.equal(badUtf8.status, 400);
    assert.equal(badUtf8.body.error.code, 'invalid_transcript');
    const de = await align(video.id, 'de', 'Guten Tag');
    assert.equal(de.status, 422);
    assert.equal(de.body.error.code, 'language_unsupported');
    const badTag = await align(video.id, 'e_x', 'hello');
    assert.equal(badTag.body.error.code, 'invalid_language');
    const empty = await align(video.id, 'en', '  ... — !!  ');
    assert.equal(empty.status, 400);
    assert.equal(empty.body.error.code, 'invalid_transcript');
    const vtt = await align(video.id, 'en', 'WEBVTT\n\n', 'text/vtt');
    assert.equal(vtt.body.error.code, 'unsupported_content_type');
    assert.ok(vtt.status === 400 || vtt.status === 415);
    const readOnly = await request(s.url).post(`/v1/videos/${video.id}/captions/en/align`).set('Authorization', `Bearer ${s.ws.readKey}`).set('Content-Type', 'text/plain').send('hello');
    assert.equal(readOnly.status, 403);
    const other = await s.newWorkspace();
    const foreign = await request(s.url).post(`/v1/videos/${video.id}/captions/en/align`).set('Authorization', `Bearer ${other.fullKey}`).set('Content-Type', 'text/plain').send('hello');
    assert.equal(foreign.status, 404, 'another workspace cannot see the video');
    // None of these touched the ready English track.
    assert.equal((await track(video.id, 'en'))?.status, 'ready');
  });
});
