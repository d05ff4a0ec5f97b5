import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { promisify } from 'node:util';
import { parseVideoId } from '../../lib/ids';
import { loadPlaybackVideo } from '../../lib/playback/access';
import { jitCuts } from '../../lib/playback/jit';
import { jitPlanKey } from '../../lib/playback/jitPlan';
import { keys } from '../../lib/storage';
import { isStatus, uploadFormA, until, waitForVideo } from '../support/flow';
import { loopedClip, makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';

const run = promisify(execFile);
const uris = (playlist: string) => playlist.split('\n').filter((l) => l && !l.startsWith('#'));
const variants = (master: string) => uris(master).filter((u) => u.endsWith('/index.m3u8')).map((u) => u.split('/')[0]);

async function get(url: string | URL): Promise<Response> {
  return fetch(url);
}

async function text(url: string | URL): Promise<string> {
  const res = await get(url);
  assert.equal(res.status, 200, String(url));
  return res.text();
}

async function probe(body: ArrayBuffer): Promise<{ streams: Array<Record<string, string | number>>; packets: Array<{ flags: string }> }> {
  const file = `/tmp/vidhost-onreq-test-${process.pid}-${Math.random()}.ts`;
  await fs.writeFile(file, Buffer.from(body));
  try {
    const { stdout } = await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=codec_name,width,height,start_time:packet=flags', '-of', 'json', file]);
    return JSON.parse(stdout);
  } finally {
    await fs.rm(file, { force: true });
  }
}

/**
 * SPEC §23 second round (issue 47), real ffmpeg and Temporal: a 10-minute 1080p HEVC source (the
 * passthrough refuses it) is `ready` with rungs up to 1080p encoded per segment on request, the
 * 720p listed first; a not-yet-encoded segment of it near the end is answered; a token capped at
 * 720p plays it (its rungs are judged by their real height). 8 fps: the encodes here cost in
 * proportion to frames, and nothing here depends on the frame rate.
 */
describe('on-request rungs up to 1080p (issue 47)', function () {
  this.timeout(600_000);
  let s: Stack;
  let video: Record<string, any>;

  before(async function () {
    this.timeout(300_000);
    s = await startStack();
    const hevc = await loopedClip(await makeClip({ width: 1920, height: 1080, seconds: 10, fps: 8, gop: 16, codec: 'hevc', silentAudio: true }), 60);
    const { id } = await uploadFormA(s, hevc);
    video = await waitForVideo(s, id, isStatus('ready'), 120_000);
    await until(async () => (await loadPlaybackVideo(s.db, video.uuid))?.status === 'ready', 10_000, 'the row says ready');
  });

  after(async () => {
    // Deleting cancels the ten-minute ladder behind ready: what it does is proven on short sources.
    if (video) {
      await s.del(`/v1/videos/${video.id}`).expect(204);
      await until(async () => (await s.db('videos').where({ id: parseVideoId(video.id)! }).first()) === undefined, 120_000, 'the deleted video\u2019s workflow finished', 500);
    }
  });

  it('is ready with every rung up to 1080p on request, the 720p first, none named `source`', async () => {
    const master = await text(video.hls_url);
    assert.deepEqual(variants(master), ['720p', '240p', '360p', '480p', '1080p']);
    assert.match(master, /RESOLUTION=1920x1080,CODECS="avc1\.6400[0-9a-f]{2},mp4a\.40\.2"/);
    assert.match(master, /TYPE=AUDIO,[^\n]*URI="audio\/a0-jit\/index\.m3u8"/);
    const read = (await s.get(`/v1/videos/${video.id}`).expect(200)).body;
    assert.deepEqual(read.renditions.map((r: { name: string }) => r.name), ['240p', '360p', '480p', '720p', '1080p']);
    assert.ok(read.renditions.every((r: { status: string }) => r.status === 'queued' || r.status === 'processing'), JSON.stringify(read.renditions));
    const playlist = await text(new URL('720p/index.m3u8', video.hls_url));
    assert.match(playlist, /#EXT-X-PLAYLIST-TYPE:VOD/);
    assert.equal(uris(playlist).length, 300, 'every 2 s segment of ten minutes, listed at once');
  });

  it('answers a not-yet-encoded 720p segment near the end, on the source\u2019s timeline', async () => {
    const base = new URL('720p/index.m3u8', video.hls_url);
    const playlist = await text(base);
    const names = uris(playlist);
    // Where that segment starts: the playlist's durations before it (its boundaries are the source's keyframes).
    const starts = [...playlist.matchAll(/#EXTINF:([0-9.]+)/g)].map((m) => Number(m[1]));
    const at = starts.slice(0, names.length - 20).reduce((sum, d) => sum + d, 0);
    const cuts = jitCuts.count;
    const t0 = performance.now();
    const res = await get(new URL(names[names.length - 20], base));
    const ms = performance.now() - t0;
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'public, max-age=60', 'replaceable until the ladder writes its own');
    const p = await probe(await res.arrayBuffer());
    assert.deepEqual([p.streams[0].codec_name, p.streams[0].width, p.streams[0].height], ['h264', 1280, 720]);
    assert.equal(p.packets[0].flags[0], 'K');
    // On the source's timeline, shifted by nothing but the MPEG-TS muxer's 1.4 s (as the audio
    // renditions are), within the frame x264's time base (1/fps) rounds it to: this looped source's
    // keyframes drift off the 1/8 s grid (at 560.2998 s here).
    assert.ok(at > 550 && Math.abs(Number(p.streams[0].start_time) - (at + 1.4)) <= 1 / 8, `starts at ${p.streams[0].start_time}, listed at ${at}`);
    assert.ok(jitCuts.count > cuts);
    // Timed here for the record; the bound (2 s) is bench/playable.ts's, on this machine's load.
    console.log(`      a 720p segment at ${at.toFixed(1)} s made on request in ${Math.round(ms)} ms (load ${(await import('node:os')).loadavg()[0].toFixed(1)})`);
  });

  it('an on-demand image renders right after ready, from a rung encoded on request', async () => {
    const res = await get(new URL(`thumbnail.jpg?time=300&width=320`, video.hls_url));
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('content-type'), 'image/jpeg');
    assert.ok((await res.arrayBuffer()).byteLength > 1000);
  });

  it('a six-digit name of a listed segment is a plain 404, and cuts nothing', async () => {
    const cuts = jitCuts.count;
    const res = await get(new URL('720p/seg_000011.ts', video.hls_url));
    assert.equal(res.status, 404);
    assert.equal(jitCuts.count, cuts);
    assert.equal(await s.storage.head(keys.rendition(s.ws.id, video.uuid, '720p') + 'seg_00011.ts'), null, 'not cut under the five-digit name either');
  });

  it('a max_resolution: 720p token plays it right after ready: every playlist and the segments a player fetches', async () => {
    const minted = (await s.get(`/v1/playback/${video.id}?max_resolution=720p`).expect(200)).body;
    const master = await text(minted.hls_url);
    assert.deepEqual(variants(master), ['720p', '240p', '360p', '480p'], 'the 1080p variant is not listed');
    const audio = /TYPE=AUDIO,[^\n]*URI="([^"]+)"/.exec(master)![1];
    // What a player fetches: each playlist it may switch to, the first segments, and those after a seek to the last minute.
    for (const rendition of [...variants(master), audio.replace(/\/index\.m3u8$/, '')]) {
      const list = new URL(`${rendition}/index.m3u8`, minted.hls_url);
      const names = uris(await text(list));
      for (const name of [names[0], names[names.length - 30]]) {
        const res = await get(new URL(name, list));
        assert.equal(res.status, 200, `${rendition}/${name}`);
        assert.ok((await res.arrayBuffer()).byteLength > 1000);
      }
    }
    for (const file of ['1080p/index.m3u8', '1080p/seg_00000.ts']) {
      const res = await get(new URL(file, minted.hls_url));
      assert.equal(res.status, 403, file);
      assert.equal((await res.json()).error.code, 'playback_restricted');
    }
  });

  it('a video from before (its lowest rung encoded on request under `source/`) is judged by that rung\u2019s height', async () => {
    // Such a video's `source/` holds the 240p rung's plan (activities/transcode/jit.ts before issue 47): made here from this one's.
    const from = keys.rendition(s.ws.id, video.uuid, '240p');
    const to = keys.rendition(s.ws.id, video.uuid, 'source');
    for (const f of [jitPlanKey(''), 'index.m3u8']) {
      const object = (await s.storage.get(from + f))!;
      const chunks: Buffer[] = [];
      for await (const c of object.body) chunks.push(c as Buffer);
      await s.storage.put(to + f, Buffer.concat(chunks), { contentType: 'application/octet-stream' });
    }
    const minted = (await s.get(`/v1/playback/${video.id}?max_resolution=480p`).expect(200)).body;
    for (const file of ['source/index.m3u8', 'source/seg_00003.ts']) assert.equal((await get(new URL(file, minted.hls_url))).status, 200, file);
    // A cap below that rung still refuses it. (A copy of the source keeps the source's height: test/protection.)
    const below = (await s.get(`/v1/playback/${video.id}?max_resolution=480p`).expect(200)).body;
    assert.equal((await get(new URL('720p/index.m3u8', below.hls_url))).status, 403);
  });
});
