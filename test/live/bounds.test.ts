import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseVideoId } from '../../lib/ids';
import { type LiveStack, startLiveStack, waitFor, waitLive } from './helpers';

const run = promisify(execFile);
const ffmpeg = process.env.FFMPEG_PATH ?? 'ffmpeg';
const ffprobe = process.env.FFPROBE_PATH ?? 'ffprobe';

/** `ffmpeg -re -i file -c copy -f flv rtmp://…`: a prepared feed, as the reproduction sends it. */
function pushFile(file: string, url: string): { child: ChildProcess; done: Promise<number | null>; startedAt: number } {
  const child = spawn(ffmpeg, ['-hide_banner', '-loglevel', 'error', '-re', '-i', file, '-c', 'copy', '-f', 'flv', url], { stdio: 'ignore' });
  return { child, done: new Promise((r) => child.once('close', r)), startedAt: Date.now() };
}

/**
 * The same push with the feed on stdin: `first` at once, and the rest of the MPEG-TS (`then`) once
 * the test calls `more()`. ffmpeg sees one stream either way; the test decides when the switch can
 * come (after the broadcast is active, however long a loaded machine takes to get there).
 */
function pushParts(first: Buffer, then: Buffer, url: string): { child: ChildProcess; done: Promise<number | null>; more: () => void } {
  const child = spawn(ffmpeg, ['-hide_banner', '-loglevel', 'error', '-re', '-f', 'mpegts', '-i', 'pipe:0', '-c', 'copy', '-f', 'flv', url], { stdio: ['pipe', 'ignore', 'ignore'] });
  child.stdin!.on('error', () => undefined);
  child.stdin!.write(first);
  return { child, done: new Promise((r) => child.once('close', r)), more: () => child.stdin!.end(then) };
}

async function encode(out: string, size: string, fps: number, seconds: number, extra: string[] = []): Promise<void> {
  await run(ffmpeg, [
    '-hide_banner', '-loglevel', 'error', '-y',
    '-f', 'lavfi', '-i', `testsrc=size=${size}:rate=${fps}`,
    '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100',
    '-t', String(seconds),
    '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', String(fps), ...extra,
    '-c:a', 'aac', '-b:a', '64k', '-f', 'mpegts', out,
  ]);
}

describe('live: input bounds for the whole broadcast (issue 33 rows 3 and 7)', function () {
  this.timeout(180_000);
  let s: LiveStack;
  let dir: string;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-bounds-'));
    // The feeds are made while the stack starts. 360p for 8 s, then 2160p: one MPEG-TS whose H.264
    // changes its SPS mid-stream; the first 2160p keyframe is past the bounds, so 2 s of 2160p (20
    // frames, the costly part to encode) is plenty. And 80 Mb/s for 12 s: constant-bitrate H.264
    // padded with filler data (cheap to make, real bytes on the wire).
    [s] = await Promise.all([
      startLiveStack(),
      encode(path.join(dir, 'a.ts'), '640x360', 15, 8),
      encode(path.join(dir, 'b.ts'), '3840x2160', 10, 2),
      encode(path.join(dir, 'fast.ts'), '320x240', 15, 12, ['-x264-params', 'nal-hrd=cbr', '-b:v', '80M', '-minrate', '80M', '-maxrate', '80M', '-bufsize', '80M']),
    ]);
  });
  after(async () => {
    await s?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const disconnectedEvent = (id: string) =>
    waitFor('live_stream.disconnected', () => s.db('events').where({ type: 'live_stream.disconnected' }).whereRaw(`payload->'data'->'live_stream'->>'id' = ?`, [id]).first(), 60_000);

  it('drops a feed that switches from 360p to 2160p mid-stream; nothing past the bounds reaches the recording', async () => {
    const ls = (await s.post('/v1/live-streams', { reconnect_window: 0, new_video_settings: { visibility: 'public' } }).expect(201)).body;
    const p = pushParts(fs.readFileSync(path.join(dir, 'a.ts')), fs.readFileSync(path.join(dir, 'b.ts')), `${s.rtmpBase}/${ls.stream_key}`);
    try {
      const active = await waitLive(s, ls.id);
      // The 2160p part follows the 360p one in the same MPEG-TS (at its 8 s mark, or at once if
      // the broadcast took longer than that to go active).
      p.more();
      const code = await p.done;
      assert.notEqual(code, 0, 'the encoder sent its whole feed: it was not dropped');
      const ev = await disconnectedEvent(ls.id);
      assert.match(ev.payload.data.reason, /input out of bounds: 3840x2160 is over 1080p/);
      const idle = await waitFor('idle', async () => {
        const r = (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body;
        return r.status === 'idle' && r;
      });
      assert.match(idle.last_disconnect_reason, /3840x2160 is over 1080p/);
      // The recording holds the 360p part only: every stored segment of every rung is ≤ 1080p.
      const video = await waitFor('recording ready', async () => {
        const v = (await s.get(`/v1/videos/${active.active_video_id}`).expect(200)).body;
        return v.status === 'ready' && v;
      }, 30_000);
      assert.equal(video.height, 360);
      const rows = await s.db('live_segments').where({ video_id: parseVideoId(active.active_video_id) }).orderBy(['rung', 'seq']);
      assert.ok(rows.length > 0);
      for (const r of rows) {
        const seg = await fetch(video.hls_url.replace('master.m3u8', `${r.rung}/seg_${String(r.seq).padStart(6, '0')}.ts`));
        assert.equal(seg.status, 200);
        const file = path.join(dir, `got-${r.rung}-${r.seq}.ts`);
        fs.writeFileSync(file, Buffer.from(await seg.arrayBuffer()));
        const { stdout } = await run(ffprobe, ['-v', 'error', '-select_streams', 'v', '-show_entries', 'stream=height', '-of', 'csv=p=0', file]);
        for (const h of stdout.trim().split('\n').map(Number)) assert.ok(h <= 1080, `${r.rung} segment ${r.seq} is ${h} lines high`);
      }
    } finally {
      p.child.kill('SIGKILL');
    }
  });

  it('drops an RTMP feed sending 80 Mb/s, measured on the bytes that arrive', async () => {
    const ls = (await s.post('/v1/live-streams', { reconnect_window: 0 }).expect(201)).body;
    const p = pushFile(path.join(dir, 'fast.ts'), `${s.rtmpBase}/${ls.stream_key}`);
    try {
      const code = await p.done;
      const took = Date.now() - p.startedAt;
      assert.notEqual(code, 0, 'the encoder sent its whole feed: it was not dropped');
      assert.ok(took < 11_000, `the feed ran ${took} ms`);
      const ev = await disconnectedEvent(ls.id);
      assert.match(ev.payload.data.reason, /input out of bounds: \d+ Mb\/s is over 20 Mb\/s/);
    } finally {
      p.child.kill('SIGKILL');
    }
  });
});
