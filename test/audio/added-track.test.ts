import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { audioTrackWorkflowId } from '../../workflows/audio/defs';
import { waitUntil } from '../playback/helpers';
import { putFile } from '../support/flow';
import { startStack, type Stack } from '../support/stack';
import { audioMedia, cdnText, settled, upload } from './helpers';
import { audioSource, hostilePlaylist } from './media';

const seconds = (playlist: string) => playlist.split('\n').filter((l) => l.startsWith('#EXTINF:')).reduce((sum, l) => sum + Number(l.slice(8).split(',')[0]), 0);

describe('Audio: tracks added to a ready video (SPEC §19)', function () {
  this.timeout(300_000);
  let s: Stack;
  let video: Record<string, any>;
  let files: http.Server;
  let filesUrl: string;

  const track = async (language: string) => (await s.get(`/v1/videos/${video.id}/audio-tracks`).expect(200)).body.data.find((t: { language: string }) => t.language === language);
  const settledTrack = async (language: string) => {
    let t: Record<string, any> = {};
    await waitUntil(async () => {
      t = await track(language);
      return t?.status === 'ready' || t?.status === 'failed';
    }, `${language} track settled`, 120_000);
    return t;
  };

  before(async function () {
    this.timeout(300_000);
    s = await startStack();
    video = await settled(s, await upload(s, await audioSource('twoLangMp4')));
    assert.equal(video.status, 'ready');
    const short = await audioSource('shortTrack');
    files = http.createServer((_req, res) => {
      res.setHeader('Content-Type', 'audio/mpeg');
      res.end(fs.readFileSync(short.file));
    });
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/short.mp3`;
  });
  after(async () => {
    files?.close();
    await s?.close();
  });

  it('through its single-use upload URL: a longer file is cut to the video, published in the AUDIO group, and the URL then closes', async () => {
    const src = await audioSource('longTrack');
    const r = await s.post(`/v1/videos/${video.id}/audio-tracks`, { language: 'es', name: 'Español', size: fs.statSync(src.file).size, content_type: src.contentType });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal(r.body.status, 'pending_upload');
    assert.ok(r.body.upload_url);
    const preflight = await fetch(r.body.upload_url, { method: 'OPTIONS', headers: { Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'PUT' } });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    assert.equal((await putFile(r.body.upload_url, src.file, src.contentType, r.body.upload_headers)).status, 200);
    const t = await settledTrack('es');
    assert.deepEqual(t, { language: 'es', name: 'Español', default: false, channels: 2, status: 'ready', error_message: null });
    const again = await putFile(r.body.upload_url, src.file, src.contentType, r.body.upload_headers);
    assert.equal(again.status, 409, 'single-use');
    assert.equal((await again.json()).error.code, 'upload_closed');
    const media = audioMedia(await cdnText(s, `/v/${video.id}/master.m3u8`));
    assert.deepEqual(media.map((m) => [m.LANGUAGE, m.NAME, m.DEFAULT]), [['en', 'English', 'YES'], ['fr', 'French', 'NO'], ['es', 'Español', 'NO']]);
    const es = await cdnText(s, `/v/${video.id}/${media[2].URI}`);
    assert.ok(Math.abs(seconds(es) - video.duration_seconds) < 0.15, `cut to the video's ${video.duration_seconds} s, got ${seconds(es)}`);
    // The event follows the track's `ready` (workflows/audio/track.ts emits after the encode
    // commits), so on a loaded machine it may land a moment after the read says ready.
    await waitUntil(async () => Boolean(await s.db('events').where({ video_id: video.uuid, type: 'video.audio_track.ready' }).first()), 'video.audio_track.ready event', 30_000);
    const read = (await s.get(`/v1/videos/${video.id}`).expect(200)).body;
    assert.deepEqual(read.audio_tracks.map((a: { language: string }) => a.language), ['en', 'fr', 'es']);
  });

  it('from a URL: a shorter file is padded with silence to the video, and can become the default', async () => {
    const r = await s.post(`/v1/videos/${video.id}/audio-tracks`, { language: 'de', name: 'Deutsch', url: filesUrl, default: true });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal(r.body.upload_url, null);
    const t = await settledTrack('de');
    assert.equal(t.status, 'ready', JSON.stringify(t));
    assert.equal(t.default, true);
    // The CDN's in-memory copy of the master is dropped on the commit's notification: a moment.
    let media: Array<Record<string, string>> = [];
    await waitUntil(async () => (media = audioMedia(await cdnText(s, `/v/${video.id}/master.m3u8`))).some((m) => m.LANGUAGE === 'de'), 'de in the master', 5000);
    const de = media.find((m) => m.LANGUAGE === 'de')!;
    assert.equal(de.DEFAULT, 'YES');
    assert.deepEqual(media.filter((m) => m.DEFAULT === 'YES').length, 1, 'one default');
    const pl = await cdnText(s, `/v/${video.id}/${de.URI}`);
    assert.ok(Math.abs(seconds(pl) - video.duration_seconds) < 0.15, `padded to ${video.duration_seconds} s, got ${seconds(pl)}`);
  });

  it('refuses what it must: a private address, a bad language, a duplicate; a playlist uploaded as audio fails the track', async () => {
    const meta = await s.post(`/v1/videos/${video.id}/audio-tracks`, { language: 'it', name: 'Italiano', url: 'http://169.254.169.254/latest/meta-data' });
    assert.equal(meta.status, 400);
    assert.equal(meta.body.error.code, 'url_not_allowed');
    const lang = await s.post(`/v1/videos/${video.id}/audio-tracks`, { language: 'not a tag!', name: 'x', url: filesUrl });
    assert.equal(lang.status, 400);
    const dup = await s.post(`/v1/videos/${video.id}/audio-tracks`, { language: 'es', name: 'again', url: filesUrl });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.error.code, 'audio_track_exists');
    const hostile = hostilePlaylist();
    const r = await s.post(`/v1/videos/${video.id}/audio-tracks`, { language: 'pt-BR', name: 'Português', size: fs.statSync(hostile.file).size, content_type: 'audio/mpeg' });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal((await putFile(r.body.upload_url, hostile.file, 'audio/mpeg', r.body.upload_headers)).status, 200);
    const t = await settledTrack('pt-BR');
    assert.equal(t.status, 'failed');
    assert.match(t.error_message, /HLS playlist|allow-list/);
    assert.doesNotMatch(await cdnText(s, `/v/${video.id}/master.m3u8`), /pt-BR/);
  });

  it('DELETE …/audio-tracks/{language} unpublishes it first, then removes it; video.audio_track.deleted', async () => {
    await s.del(`/v1/videos/${video.id}/audio-tracks/es`).expect(204);
    const master = await cdnText(s, `/v/${video.id}/master.m3u8`);
    assert.doesNotMatch(master, /LANGUAGE="es"/);
    await s.del(`/v1/videos/${video.id}/audio-tracks/es`).expect(404);
    assert.ok(await s.db('events').where({ video_id: video.uuid, type: 'video.audio_track.deleted' }).first());
    const read = (await s.get(`/v1/videos/${video.id}`).expect(200)).body;
    assert.deepEqual(read.audio_tracks.map((a: { language: string; status: string }) => a.language), ['en', 'fr', 'de', 'pt-BR']);
  });

  // Issue 33 row 11: an uploaded file sat in pending_upload for minutes, its wait queued on the
  // transcode queue behind whatever held its slots. Here every slot is held by another track
  // still waiting for its upload (the worst case: nothing frees them until those URLs expire).
  it('a PUT file is noticed promptly, whatever holds the transcode slots', async () => {
    const src = await audioSource('shortTrack');
    const add = (language: string) => s.post(`/v1/videos/${video.id}/audio-tracks`, { language, name: language, size: fs.statSync(src.file).size, content_type: src.contentType }).expect(202);
    const idle = ['it', 'ja', 'nl', 'sv'].slice(0, s.config.temporal.transcodeConcurrency);
    assert.equal(idle.length, s.config.temporal.transcodeConcurrency, 'one idle track per transcode slot');
    for (const language of idle) await add(language);
    // Each idle track's wait has started (it holds a slot wherever it runs).
    for (const language of idle) {
      await waitUntil(async () => {
        const d = await s.temporal.workflow.getHandle(audioTrackWorkflowId(video.uuid, `x-${language}`)).describe();
        return (d.raw.pendingActivities ?? []).some((a) => a.activityType?.name === 'receiveAddedTrack' && a.lastStartedTime != null);
      }, `${language} waiting for its upload`, 30_000);
    }
    try {
      const r = await add('ko');
      assert.equal((await putFile(r.body.upload_url, src.file, src.contentType, r.body.upload_headers)).status, 200);
      // Noticed within a second or so; 15 s leaves room for a loaded machine (it took minutes).
      await waitUntil(async () => (await track('ko'))?.status !== 'pending_upload', 'the ko track left pending_upload', 15_000);
      assert.equal((await settledTrack('ko')).status, 'ready');
    } finally {
      for (const language of [...idle, 'ko']) await s.del(`/v1/videos/${video.id}/audio-tracks/${language}`);
    }
  });
});
