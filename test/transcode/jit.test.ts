import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { jitCuts } from '../../lib/playback/jit';
import { parseVideoId } from '../../lib/ids';
import { loadPlaybackVideo } from '../../lib/playback/access';
import { allRenditionsReady, isStatus, uploadFormA, until, waitForVideo } from '../support/flow';
import { loopedClip, makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';

const run = promisify(execFile);

async function text(url: string | URL): Promise<string> {
  const res = await fetch(url);
  assert.equal(res.status, 200, String(url));
  return res.text();
}

/** A TS segment's video packets' presentation times, in order. */
async function packetTimes(body: Buffer): Promise<number[]> {
  const fs = await import('node:fs/promises');
  const file = `/tmp/vidhost-jit-test-${process.pid}-${Math.random()}.ts`;
  await fs.writeFile(file, body);
  try {
    const { stdout } = await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=pts_time', '-of', 'csv=p=0', file]);
    return stdout.split('\n').map((l) => Number.parseFloat(l)).filter(Number.isFinite).sort((x, y) => x - y);
  } finally {
    await fs.rm(file, { force: true });
  }
}

const uris = (playlist: string) => playlist.split('\n').filter((l) => l && !l.startsWith('#'));
const seconds = (playlist: string) => [...playlist.matchAll(/#EXTINF:([0-9.]+)/g)].reduce((s, m) => s + Number(m[1]), 0);

/** The video's playlists right at `ready`: every segment listed, VOD, ended. */
async function playlistsAtReady(s: Stack, id: string) {
  const ready = await waitForVideo(s, id, isStatus('ready'), 120_000);
  await until(async () => (await loadPlaybackVideo(s.db, ready.uuid))?.status === 'ready', 10_000, 'the row says ready');
  const master = await text(ready.hls_url);
  const variant = uris(master)[0];
  const audio = /TYPE=AUDIO,[^\n]*URI="([^"]+)"/.exec(master)?.[1];
  const video = await text(new URL(variant, ready.hls_url));
  return { ready, master, variant, audio, video, audioText: audio ? await text(new URL(audio, ready.hls_url)) : null };
}

/** SPEC §23: a long eligible source is ready from its keyframe index, segments cut on request. */
describe('just-in-time packaging (real ffmpeg + Temporal)', function () {
  this.timeout(600_000);
  let s: Stack;
  let long: string;
  let short: string;
  before(async function () {
    this.timeout(300_000);
    s = await startStack();
    // 10 minutes of 320x180 at 300 kb/s: the rung IS the source (sourceTop), nothing to encode.
    // 12 fps (keyframes every 2 s as before) and a silent audio track: what runs behind ready
    // (the full-length audio encode, the storyboard's decode) costs a fraction of 24 fps and a tone,
    // and nothing here depends on the frame rate or on what the audio sounds like.
    short = await makeClip({ width: 320, height: 180, seconds: 10, fps: 12, gop: 24, videoBitrate: 300_000, silentAudio: true });
    long = await loopedClip(short, 60);
  });

  /** DELETE, which cancels what still runs for the video (its encodes behind ready), and wait until it is gone. */
  async function gone(id: string): Promise<void> {
    await s.del(`/v1/videos/${id}`).expect(204);
    await until(async () => (await s.db('videos').where({ id: parseVideoId(id)! }).first()) === undefined, 120_000, 'the deleted video\u2019s workflow finished', 500);
  }

  it('lists every segment of a 10-minute source at ready, and cuts a segment on first request', async () => {
    const cutsBefore = jitCuts.count;
    const { id } = await uploadFormA(s, long);
    const at = await playlistsAtReady(s, id);
    assert.match(at.video, /#EXT-X-PLAYLIST-TYPE:VOD/);
    assert.match(at.video, /#EXT-X-ENDLIST/);
    assert.ok(Math.abs(seconds(at.video) - 600) < 1, `the video playlist lists ${seconds(at.video)} s`);
    assert.ok(at.audio && at.audioText, 'the master names an audio rendition');
    assert.equal(uris(at.audioText).length, uris(at.video).length, 'audio segments on the same boundaries');
    assert.ok(Math.abs(seconds(at.audioText) - 600) < 1);
    // BANDWIDTH of the variant counts the audio it plays with (SPEC §23 item 4).
    const bandwidth = Number(/BANDWIDTH=(\d+)/.exec(at.master)![1]);
    assert.ok(bandwidth > 128_000 + 200_000, `BANDWIDTH ${bandwidth} includes the 128 kb/s audio`);

    // The last segment of each, right away: a stream copy (video) and an AAC encode (audio) of its range.
    const lastVideo = new URL(uris(at.video).at(-1)!, new URL(at.variant, at.ready.hls_url));
    const lastAudio = new URL(uris(at.audioText).at(-1)!, new URL(at.audio, at.ready.hls_url));
    const [v, a] = await Promise.all([fetch(lastVideo), fetch(lastAudio)]);
    assert.equal(v.status, 200);
    assert.equal(a.status, 200);
    assert.equal(v.headers.get('content-type'), 'video/mp2t');
    const probe = async (body: ArrayBuffer, entries: string) => {
      const fs = await import('node:fs/promises');
      const file = `/tmp/vidhost-jit-test-${process.pid}-${Math.random()}.ts`;
      await fs.writeFile(file, Buffer.from(body));
      try {
        return JSON.parse((await run('ffprobe', ['-v', 'error', '-show_entries', entries, '-of', 'json', file])).stdout);
      } finally {
        await fs.rm(file, { force: true });
      }
    };
    const vs = await probe(await v.arrayBuffer(), 'stream=codec_name,start_time');
    assert.equal(vs.streams.length, 1, 'video only');
    assert.equal(vs.streams[0].codec_name, 'h264');
    // Source timestamps (+ the muxer's 1.4 s): the last segment starts near the end, not at 0.
    assert.ok(Number(vs.streams[0].start_time) > 590, `last segment starts at ${vs.streams[0].start_time}`);
    const as = await probe(await a.arrayBuffer(), 'stream=codec_name,channels,start_time');
    assert.equal(as.streams[0].codec_name, 'aac');
    assert.ok(Number(as.streams[0].start_time) > 590);
    assert.ok(jitCuts.count > cutsBefore, 'a segment was cut on request');

    // ffprobe reads the whole duration through the master.
    const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', at.ready.hls_url]);
    assert.ok(Math.abs(Number(stdout) - 600) < 2, `ffprobe reads ${stdout.trim()} s`);

    // What runs behind ready is length-blind and proven on a short source below; this one's
    // ten-minute audio encode would only hold the shard's CPU: deleting the video cancels it.
    await gone(id);
  });

  it('behind ready the rest is cut in one pass and the audio encoded; the master then names the encoded audio', async () => {
    const { id } = await uploadFormA(s, short);
    const at = await playlistsAtReady(s, id);
    assert.match(at.master, /-jit\//, 'ready with the audio cut on request');
    const lastVideo = new URL(uris(at.video).at(-1)!, new URL(at.variant, at.ready.hls_url));
    const first = Buffer.from(await (await fetch(lastVideo)).arrayBuffer());
    const done = await waitForVideo(s, id, allRenditionsReady, 300_000);
    await until(async () => !/-jit\//.test(await text(done.hls_url)), 120_000, 'the master names the encoded audio', 500);
    const again = await fetch(lastVideo);
    assert.equal(again.status, 200);
    assert.ok(Buffer.from(await again.arrayBuffer()).equals(first), 'the segment cut on request is the one cut behind ready');
  });

  it('a source the passthrough cannot take (HEVC) is ready from its rungs encoded per segment on request', async () => {
    // 12 fps and silence as above: the ladder encode, quality measure and audio encode behind ready
    // are what this test waits for, and they cost in proportion to frames and to the audio's content.
    const hevc = await loopedClip(await makeClip({ width: 320, height: 180, seconds: 10, fps: 12, codec: 'hevc', silentAudio: true }), 60);
    const cutsBefore = jitCuts.count;
    const { id } = await uploadFormA(s, hevc);
    const at = await playlistsAtReady(s, id);
    // Issue 47: the rung under its own name (a 320x180 source has one, at its own size), not `source`.
    assert.equal(at.variant, '180p/index.m3u8');
    assert.doesNotMatch(at.master, /source\//);
    assert.match(at.master, /RESOLUTION=320x180,CODECS="avc1\./, 'the variant is H.264 (the encoded rung), not the HEVC source');
    assert.ok(Math.abs(seconds(at.video) - 600) < 1);
    assert.ok(at.audioText && uris(at.audioText).length === uris(at.video).length);
    // A segment near the end: H.264, one keyframe at its start, on the source's timeline.
    const near = new URL(uris(at.video).at(-2)!, new URL(at.variant, at.ready.hls_url));
    const res = await fetch(near);
    assert.equal(res.status, 200);
    const fs = await import('node:fs/promises');
    const file = `/tmp/vidhost-jit-test-${process.pid}-hevc.ts`;
    await fs.writeFile(file, Buffer.from(await res.arrayBuffer()));
    try {
      const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name,width,height,start_time:packet=flags', '-of', 'json', file]);
      const probe = JSON.parse(stdout);
      assert.deepEqual([probe.streams[0].codec_name, probe.streams[0].width, probe.streams[0].height], ['h264', 320, 180]);
      assert.ok(Number(probe.streams[0].start_time) > 585);
      assert.equal(probe.packets[0].flags[0], 'K');
    } finally {
      await fs.rm(file, { force: true });
    }
    assert.ok(jitCuts.count > cutsBefore);
    await gone(id); // its ladder encode behind ready: proven on a short source below
  });

  it('behind a source encoded per segment the ladder writes the same segments over them: same timestamps, no seam', async () => {
    // Long enough (two rungs of 24 s at 24 fps) that the segment is made on request before the ladder writes its own.
    const hevc = await makeClip({ width: 640, height: 360, seconds: 24, codec: 'hevc', silentAudio: true });
    const { id } = await uploadFormA(s, hevc);
    const at = await playlistsAtReady(s, id);
    assert.equal(at.variant, '360p/index.m3u8', 'ready from the rungs encoded per segment, the tallest listed first');
    const second = new URL(uris(at.video).at(-2)!, new URL(at.variant, at.ready.hls_url));
    const cuts = jitCuts.count;
    const onRequest = await fetch(second);
    assert.equal(onRequest.status, 200);
    assert.ok(jitCuts.count > cuts, 'made on request');
    // Until the ladder has written its own, a minute; not immutable.
    assert.equal(onRequest.headers.get('cache-control'), 'public, max-age=60');
    const before = Buffer.from(await onRequest.arrayBuffer());
    const done = await waitForVideo(s, id, allRenditionsReady, 300_000);
    await until(async () => !(await loadPlaybackVideo(s.db, done.uuid))?.on_request?.length, 30_000, 'the rung is no longer on request');
    const master = await text(done.hls_url);
    assert.deepEqual(uris(master).filter((u) => u.endsWith('index.m3u8')).sort(), ['240p/index.m3u8', '360p/index.m3u8'], 'the same variants, now encoded');
    const laddered = await fetch(second);
    assert.match(laddered.headers.get('cache-control') ?? '', /immutable/);
    const after = Buffer.from(await laddered.arrayBuffer());
    assert.ok(!after.equals(before), 'the ladder\u2019s own encode replaced the one made on request');
    const [a, b] = await Promise.all([before, after].map(packetTimes));
    assert.deepEqual(a, b, 'the same frames at the same timestamps');
  });
});
