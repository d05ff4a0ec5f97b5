import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parseVideoId } from '../../lib/ids';
import { type LiveStack, pushRtmp, startEdge, startLiveStack, waitFor, waitLive } from './helpers';

const root = path.resolve(__dirname, '../..');

/** The pid whose socket listens on TCP `port` (from /proc/net/tcp{,6} and each process's fds). */
function listenerOf(port: number): number | null {
  const inodes = new Set<string>();
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '').split('\n').slice(1)) {
      const c = line.trim().split(/\s+/);
      if (c.length > 9 && c[3] === '0A' && parseInt(c[1].split(':')[1], 16) === port) inodes.add(c[9]);
    }
  }
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let fds: string[] = [];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m && inodes.has(m[1])) return Number(pid);
      } catch {
        /* gone */
      }
    }
  }
  return null;
}

// SPEC §22 "One live hub": the Go edge is the only ingest. An RTMP encoder publishes to the edge
// itself (no node-media-server anywhere: not a dependency, not loaded, not listening), the
// service hears of it through the edge's hooks, and the ladder reads the edge's feed into the
// recording; `complete` asks the edge to drop the encoder.
describe('live: one hub — RTMP into the Go edge, no node-media-server', function () {
  this.timeout(180_000);
  let s: LiveStack;
  before(async () => {
    s = await startLiveStack();
  });
  after(async () => {
    await s?.close();
  });

  it('has no node-media-server: not in package.json or its lock, not loaded, and the RTMP port is the edge’s', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    assert.equal({ ...pkg.dependencies, ...pkg.devDependencies }['node-media-server'], undefined);
    assert.doesNotMatch(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8'), /node-media-server/);
    assert.deepEqual(Object.keys(require.cache).filter((m) => m.includes('node-media-server')), []);
    const pid = listenerOf(s.config.live.rtmpPort);
    assert.equal(pid, s.edge.child.pid, `the RTMP port ${s.config.live.rtmpPort} is held by pid ${pid}, not the edge (${s.edge.child.pid})`);
    assert.match(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'), /vidhost-edge/);
  });

  it('an RTMP broadcast is received by the edge, recorded from its feed, and ended by complete', async () => {
    const ls = (await s.post('/v1/live-streams', { reconnect_window: 0, new_video_settings: { visibility: 'public' } }).expect(201)).body;
    const push = pushRtmp(`${s.rtmpBase}/${ls.stream_key}`, { seconds: 60, size: '320x240' });
    try {
      const active = await waitLive(s, ls.id);
      // The edge carries it (its own measure) and the service knows it as an RTMP publisher.
      const seen = await (await fetch(`${s.edge.httpUrl}/streams/${ls.id}`, { headers: s.edge.headers })).json();
      assert.equal(seen.protocol, 'rtmp');
      assert.equal(s.ingest.active.get(ls.id)?.protocol, 'rtmp');
      // Segments of the ladder, read from the edge's feed, reach the recording.
      const videoId = parseVideoId(active.active_video_id);
      await waitFor('segments', async () => Number((await s.db('live_segments').where({ video_id: videoId }).count('* as n').first())?.n) >= 3, 60_000);
      // The feed wants the service's credential.
      assert.equal((await fetch(`${s.edge.httpUrl}/feed/${ls.id}`)).status, 401);
      await s.post(`/v1/live-streams/${ls.id}/complete`).expect(200);
      // Dropped by the edge (DELETE …/publisher): the encoder's connection ends well before its 60 s.
      const code = await Promise.race([push.done, new Promise((r) => setTimeout(() => r('still running'), 20_000))]);
      assert.notEqual(code, 'still running', 'the encoder was not dropped');
      await waitFor('ready', async () => (await s.get(`/v1/videos/${active.active_video_id}`).expect(200)).body.status === 'ready', 60_000);
    } finally {
      push.stop();
    }
  });

  it('an edge SIGKILLed mid-broadcast (no disconnected hook): the broadcast waits, and the encoder reconnects into the same recording', async () => {
    const ls = (await s.post('/v1/live-streams', { reconnect_window: 60 }).expect(201)).body;
    const url = `${s.rtmpBase}/${ls.stream_key}`;
    const first = pushRtmp(url, { seconds: 60 });
    let second: ReturnType<typeof pushRtmp> | undefined;
    try {
      const active = await waitLive(s, ls.id);
      s.edge.child.kill('SIGKILL');
      await first.done;
      await startEdge(s); // supervised: started again, a new process
      // The hooks see another edge process answering: the encoder it carried is gone.
      await waitFor('disconnected', async () => (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body.status === 'disconnected', 30_000);
      assert.equal(s.ingest.active.has(ls.id), false, 'the key is free again');
      second = pushRtmp(url, { seconds: 60 });
      const again = await waitFor('active again', async () => {
        const r = (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body;
        return r.status === 'active' && r;
      }, 60_000);
      assert.equal(again.active_video_id, active.active_video_id, 'a second recording was started');
      await s.post(`/v1/live-streams/${ls.id}/complete`).expect(200);
      await waitFor('ready', async () => (await s.get(`/v1/videos/${active.active_video_id}`).expect(200)).body.status === 'ready', 60_000);
    } finally {
      first.stop();
      second?.stop();
    }
  });
});
