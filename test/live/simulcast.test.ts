import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { feedUrl } from '../../lib/live/feed';
import { startSimulcast } from '../../lib/live/simulcast';
import { createLogger } from '../../lib/logger';
import { freePort } from '../support/services';
import { type LiveStack, pushRtmp, startLiveStack, waitFor, waitLive } from './helpers';

describe('live: simulcast', function () {
  this.timeout(120_000);
  let s: LiveStack;
  before(async () => {
    s = await startLiveStack();
  });
  after(() => s?.close());

  it('refuses targets that are not public rtmp(s) URLs', async () => {
    const bad = await s.post('/v1/live-streams', { simulcast_targets: [{ url: 'rtmp://10.0.0.1/live', stream_key: 'k' }] }).expect(400);
    assert.equal(bad.body.error.code, 'url_not_allowed');
    const http = await s.post('/v1/live-streams', { simulcast_targets: [{ url: 'http://example.com/live' }] }).expect(400);
    assert.equal(http.body.error.code, 'invalid_parameters');
  });

  it('copies the broadcast to a working target; a failing target is reported, without its key, and hurts nothing', async () => {
    // The failing target's stream key: a third party's credential (issue 33 row 5).
    const THEIR_KEY = `sk-live-${Math.random().toString(36).slice(2)}`;
    const [port, closed] = await Promise.all([freePort(), freePort()]);
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vh-simulcast-')), 'got.flv');
    // A second RTMP endpoint: ffmpeg listening as a server, as a platform's ingest would.
    const target = spawn('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-listen', '1', '-i', `rtmp://127.0.0.1:${port}/app/tkey`, '-c', 'copy', '-t', '3', '-y', out], { stdio: 'ignore' });
    const received = new Promise<number | null>((r) => target.once('close', r));
    const ls = (
      await s
        .post('/v1/live-streams', {
          simulcast_targets: [
            { url: `rtmp://127.0.0.1:${port}/app`, stream_key: 'tkey' },
            { url: `rtmp://127.0.0.1:${closed}/app`, stream_key: THEIR_KEY },
          ],
        })
        .expect(201)
    ).body;
    assert.deepEqual(ls.simulcast_targets.map((t: { has_stream_key: boolean }) => t.has_stream_key), [true, true]);
    assert.ok(!JSON.stringify(ls).includes('tkey'), 'a target key is shown');
    const push = pushRtmp(`${s.rtmpBase}/${ls.stream_key}`, { seconds: 40 });
    try {
      await waitLive(s, ls.id);
      const failing = await waitFor('target 2 errored', async () => {
        const r = (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body;
        return r.simulcast_targets[1].status === 'errored' && r;
      }, 30_000);
      assert.ok(failing.simulcast_targets[1].error);
      assert.match(failing.simulcast_targets[1].error, /\[redacted\]/);
      assert.ok(!JSON.stringify(failing).includes(THEIR_KEY), `the target's key is in the read: ${failing.simulcast_targets[1].error}`);
      const readOnly = (await s.get(`/v1/live-streams/${ls.id}`, s.ws.readKey).expect(200)).body;
      assert.ok(!JSON.stringify(readOnly).includes(THEIR_KEY));
      // And not in the log: the same pushes, with a logger whose lines are kept.
      const lines: string[] = [];
      const log = createLogger('debug', 'simulcast-test', { write: (l: string) => void lines.push(l) });
      const extra = startSimulcast({ config: s.config, db: s.db, log }, ls.id, feedUrl(s.config, ls.id), [{ url: `rtmp://127.0.0.1:${closed}/app`, stream_key: THEIR_KEY }], 200);
      await waitFor('a logged failure', async () => lines.some((l) => l.includes('simulcast target errored')), 20_000);
      await extra.stop();
      assert.ok(!lines.join('').includes(THEIR_KEY), `the target's key is in the log: ${lines.join('')}`);
      assert.equal(failing.status, 'active');
      await Promise.race([received, new Promise((_, rej) => setTimeout(() => rej(new Error('the target received nothing')), 30_000))]);
      assert.ok(fs.statSync(out).size > 10_000, 'the target got too little');
      assert.equal((await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body.status, 'active');
    } finally {
      push.stop();
      target.kill('SIGKILL');
    }
  });

  it('connects to the address it checked, not to what the name resolves to later (DNS rebinding, issue 33 row 6)', async () => {
    const port = await freePort();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-rebind-'));
    // Two RTMP endpoints on one port: 127.0.0.2 is the address the guard is told and checks;
    // 127.0.0.1 is where `localhost` resolves for anyone who asks the system again (ffmpeg did).
    const listen = (host: string) => {
      const out = path.join(dir, `${host}.flv`);
      const child = spawn('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-listen', '1', '-i', `rtmp://${host}:${port}/app/rkey`, '-c', 'copy', '-t', '3', '-y', out], { stdio: 'ignore' });
      return { out, child, done: new Promise<number | null>((r) => child.once('close', r)) };
    };
    const checked = listen('127.0.0.2');
    const rebound = listen('127.0.0.1');
    // Its own workspace: the first test's broadcast may still hold the Free plan's one slot.
    const ws = await s.newWorkspace('pro');
    const ls = (await s.post('/v1/live-streams', { title: 'rebind' }, ws.fullKey).expect(201)).body;
    const push = pushRtmp(`${s.rtmpBase}/${ls.stream_key}`, { seconds: 40 });
    const asked: string[] = [];
    const lookup = async (host: string) => {
      asked.push(host);
      return [{ address: '127.0.0.2' }];
    };
    let sim: ReturnType<typeof startSimulcast> | undefined;
    try {
      await waitLive(s, ls.id, { key: ws.fullKey });
      const log = createLogger('silent', 'simulcast-test');
      sim = startSimulcast({ config: s.config, db: s.db, log }, ls.id, feedUrl(s.config, ls.id), [{ url: `rtmp://localhost:${port}/app`, stream_key: 'rkey' }], 500, lookup);
      await Promise.race([checked.done, new Promise((_, rej) => setTimeout(() => rej(new Error('the checked address received nothing')), 30_000))]);
      assert.ok(fs.statSync(checked.out).size > 10_000, 'the checked address got too little');
      assert.ok(!fs.existsSync(rebound.out) || fs.statSync(rebound.out).size === 0, 'ffmpeg resolved the name again and pushed elsewhere');
      assert.ok(asked.includes('localhost'));
    } finally {
      await sim?.stop();
      push.stop();
      checked.child.kill('SIGKILL');
      rebound.child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
