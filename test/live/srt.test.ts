import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { findGo } from '../../ops/go-tools';
import { repoRoot } from '../../ops/paths';
import { run } from '../../ops/proc';
import { type Edge, type LiveStack, pushRtmp, startEdge, startLiveStack, waitFor, waitLive } from './helpers';

/** `go test ./...` in ingest/, in a process group of its own: `stop()` ends it (and its test binaries) if it still runs. */
function goTest(go: string): { done: Promise<{ code: number | null; output: string }>; stop: () => void } {
  const child = spawn(go, ['test', './...'], { cwd: path.join(repoRoot, 'ingest'), env: { ...process.env, GOFLAGS: '-mod=mod -buildvcs=false' }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const stop = () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
  };
  const timer = setTimeout(stop, 340_000);
  const done = new Promise<{ code: number | null; output: string }>((resolve) => {
    child.once('error', (err) => resolve({ code: -1, output: `${output}${err.message}` }));
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
  return { done, stop };
}

/** ffmpeg exits by itself within `ms` (refused), or is still pushing. */
async function exitsWithin(p: ReturnType<typeof pushRtmp>, ms: number): Promise<number | null | 'still running'> {
  const code = await Promise.race([p.done, new Promise<'still running'>((r) => setTimeout(() => r('still running'), ms))]);
  p.stop();
  return code;
}

/** Refused in the SRT handshake (libsrt: the connection fails), not accepted and dropped later. */
async function refusedAtHandshake(p: ReturnType<typeof pushRtmp>, what: string): Promise<void> {
  const code = await exitsWithin(p, 10_000);
  assert.notEqual(code, 'still running', `${what} was not refused`);
  assert.notEqual(code, 0);
  assert.match(p.stderr(), /Connection to srt:\/\/.* failed/, `${what} was not refused at the handshake: ${p.stderr()}`);
}

describe('live: SRT in (the live edge), HLS out, recorded', function () {
  this.timeout(120_000);
  let s: LiveStack;
  let gw: Edge;
  const go = findGo();
  // The edge's own Go tests spend most of their time waiting on real-time feeds and ICE timers:
  // they run while the tests below do, and the last one judges them.
  let goTests: ReturnType<typeof goTest> | undefined;
  before(async () => {
    if (go) goTests = goTest(go);
    s = await startLiveStack();
    gw = await startEdge(s);
  });
  after(async () => {
    goTests?.stop();
    await gw?.stop();
    await s?.close();
    await goTests?.done;
  });

  it('refuses a wrong key, a malformed streamid and a disabled stream at the handshake', async () => {
    for (const streamId of [`lsk${'0'.repeat(32)}`, `#!::r=lsk${'0'.repeat(32)},m=publish`, 'live/whatever', '']) {
      await refusedAtHandshake(pushRtmp(gw.url(streamId), { seconds: 20 }), `the caller with streamid ${JSON.stringify(streamId)}`);
    }
    assert.match(gw.log(), /rejected: unknown stream key/);
    assert.match(gw.log(), /rejected: the streamid is not a stream key/);
    const ls = (await s.post('/v1/live-streams', { title: 'off' }).expect(201)).body;
    await s.post(`/v1/live-streams/${ls.id}/disable`).expect(200);
    await refusedAtHandshake(pushRtmp(gw.url(ls.stream_key), { seconds: 20 }), 'a disabled stream');
    assert.match(gw.log(), /rejected: live stream disabled/);
    const read = (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body;
    assert.equal(read.status, 'idle');
    assert.equal(read.active_video_id, null);
  });

  it('goes active from an SRT caller (plain streamid), refuses a second publisher, and records the broadcast', async () => {
    const created = (await s.post('/v1/live-streams', { title: 'srt show', reconnect_window: 2 }).expect(201)).body;
    assert.equal(created.ingest.srt_url, `srt://${s.config.live.publicIngestHost}:${s.config.live.srtPort}?streamid=${created.stream_key}`);
    const p = pushRtmp(gw.url(created.stream_key), { seconds: 60 });
    try {
      const active = await waitLive(s, created.id);
      const master = await (await fetch(created.hls_url)).text();
      assert.match(master, /source\/index\.m3u8/, 'the SRT feed is not played as its own rung');

      // A second publisher on the live key, by SRT (access-control streamid) or by RTMP, is refused.
      await refusedAtHandshake(pushRtmp(gw.url(`#!::r=${created.stream_key},m=publish`), { seconds: 20 }), 'a second SRT publisher');
      const third = await exitsWithin(pushRtmp(`${s.rtmpBase}/${created.stream_key}`, { seconds: 20 }), 10_000);
      assert.notEqual(third, 'still running', 'a second (RTMP) publisher was let in');
      assert.equal((await s.get(`/v1/live-streams/${created.id}`).expect(200)).body.status, 'active');

      await s.post(`/v1/live-streams/${created.id}/complete`).expect(200);
      // `complete` drops the encoder: the gateway ends the SRT caller's session.
      assert.notEqual(await exitsWithin(p, 15_000), 'still running', 'the SRT caller was not dropped on complete');
      const ready = await waitFor('recording ready', async () => {
        const v = (await s.get(`/v1/videos/${active.active_video_id}`).expect(200)).body;
        return v.status === 'ready' && v;
      }, 20_000);
      assert.equal(ready.live_stream_id, created.id);
      assert.ok(ready.duration_seconds > 1);
      const vod = await (await fetch(ready.hls_url.replace('master.m3u8', 'source/index.m3u8'))).text();
      assert.match(vod, /#EXT-X-ENDLIST/);
    } finally {
      p.stop();
    }
  });

  it('takes the access-control streamid form (#!::r=<key>,m=publish)', async () => {
    const created = (await s.post('/v1/live-streams', { title: 'srt acl', reconnect_window: 0 }).expect(201)).body;
    const p = pushRtmp(gw.url(`#!::r=${created.stream_key},m=publish`), { seconds: 60 });
    try {
      await waitLive(s, created.id);
    } finally {
      p.stop();
    }
    await waitFor('idle', async () => (await s.get(`/v1/live-streams/${created.id}`).expect(200)).body.status === 'idle', 30_000);
  });

  it("the edge answers /healthz, and the edge's own Go tests pass (SRT streamid forms, input-rate bound, rejection codes; key check; stream core; WHIP/WHEP with a pion publisher and viewers, hostile offers; LL-HLS from an ffmpeg PUT)", async function () {
    this.timeout(360_000);
    assert.equal((await fetch(`${gw.httpUrl}/healthz`)).status, 200);
    if (!go || !goTests) this.skip();
    const r = await goTests!.done;
    assert.equal(r.code, 0, r.output);
    const fmt = await run(path.join(path.dirname(fs.realpathSync(go!)), 'gofmt'), ['-l', '.'], { cwd: path.join(repoRoot, 'ingest') });
    assert.equal(fmt.stdout.trim(), '', `gofmt -l lists files that are not formatted: ${fmt.stdout}${fmt.stderr}`);
  });
});
