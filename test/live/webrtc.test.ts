import assert from 'node:assert/strict';
import { type Browser, type Page } from 'playwright-core';
import { median } from './clock';
import { type Edge, type LiveStack, pushRtmp, waitFor, waitLive } from './helpers';
import { browserRig, type ClockSite } from './rig';

// Debian's Chromium as publisher and viewer (SPEC §22), through the API's public WHIP/WHEP
// endpoints and the real edge (vidhost-edge, LIVE_EDGE_PATH).

type Win = Window & { g2g: number[]; clockReads: number[]; errors?: string[]; pub?: { location: string; stop(): Promise<void> } };

/** The viewer reads the clock off the decoded picture, and it advances by more than `ms`. */
async function clockAdvances(tab: Page, ms: number, timeout = 45_000): Promise<number[]> {
  await tab.waitForFunction((d) => { const r = (window as unknown as Win).clockReads; return r?.length > 3 && r[r.length - 1] - r[0] > d; }, ms, { timeout, polling: 250 });
  return tab.evaluate(() => (window as unknown as Win).g2g.slice());
}

describe('live: WebRTC in (WHIP) and out (WHEP), LL-HLS, from Chromium', function () {
  this.timeout(240_000);
  let s: LiveStack;
  let edge: Edge;
  let browser: Browser;
  let site: ClockSite;
  const rig = browserRig({ env: { LIVE_LOW_LATENCY_SEGMENT_SECONDS: '1' } });
  before(() => {
    ({ s, edge, browser, site } = rig);
  });

  const analytics = async (id: string) => {
    // A WHEP session is a view from its ICE connection (SPEC §22): ask the edge now rather than at the next poll.
    await s.app.hot.whep.poll();
    await s.app.hot.beacons.flush();
    return (await s.get(`/v1/live-streams/${id}/analytics`).expect(200)).body;
  };
  const whepRows = async (id: string) =>
    (await s.db('analytics_events').where({ subject_id: id }).orderBy('received_at').select('view_id', 'seq', 'event', 'player', 'viewer_hash', 'workspace_id', 'received_at')) as Array<{ view_id: string; seq: number; event: string; player: string | null; viewer_hash: string | null; workspace_id: string | null; received_at: Date }>;

  /**
   * Issue 35: the WHEP viewer (who sends no beacon) is a view and a concurrent viewer of the live
   * stream, written by the API; DELETE ends it; a viewer who leaves without DELETE is ended once the
   * edge no longer has the session.
   */
  async function whepViewCounted(id: string, location: string, viewer: Page): Promise<void> {
    let a = await analytics(id);
    assert.equal(a.concurrent_viewers, 1, 'the WHEP viewer is concurrent');
    assert.equal(a.totals.views, 1, 'the WHEP viewer is a view');
    assert.equal(a.peak_concurrent_viewers, 1);
    const starts = (await whepRows(id)).filter((r) => r.event === 'viewstart');
    const minute = new Date(Math.floor(starts[0].received_at.getTime() / 60_000) * 60_000).toISOString();
    assert.equal(a.concurrent_series.find((p: { t: string }) => p.t === minute)?.concurrent_viewers, 1, 'in the per-minute series at the minute it joined');
    assert.deepEqual(starts.map((r) => [r.player, r.seq]), [['whep', 0]]);
    assert.match(String(starts[0].viewer_hash), /^-?\d+$/, 'the unique viewer hash, as beacons make it');
    assert.ok(starts[0].workspace_id);
    // The server-side heartbeat (every 10 s; one more now) keeps it concurrent while the edge has the session.
    await s.app.hot.whep.tick();
    await s.app.hot.beacons.flush();
    const rows = await whepRows(id);
    assert.ok(rows.length >= 2 && rows.slice(1).every((r) => r.event === 'heartbeat' && r.view_id === starts[0].view_id), JSON.stringify(rows));

    assert.equal((await fetch(location, { method: 'DELETE' })).status, 200);
    a = await analytics(id);
    assert.equal(a.concurrent_viewers, 0, 'DELETE ends the view');
    assert.equal(a.totals.views, 1);
    assert.equal(a.peak_concurrent_viewers, 1);
    assert.equal(s.app.hot.whep.size, 0);
    assert.equal((await whepRows(id)).at(-1)!.event, 'viewend');

    // A second viewer leaves by closing its connection, with no DELETE: the edge drops the session
    // and the next beat ends the view.
    await viewer.evaluate(async (url) => {
      const w = window as unknown as { vhWhep: (u: string, v: HTMLVideoElement) => Promise<{ pc: RTCPeerConnection }>; lastPc?: RTCPeerConnection };
      w.lastPc = (await w.vhWhep(url, document.getElementById('v') as HTMLVideoElement)).pc;
    }, `${s.config.cdnUrl}/live/${id}/whep`);
    // Counted once its ICE connects, not at the 201.
    a = await waitFor('the second viewer counted once connected', async () => {
      const x = await analytics(id);
      return x.totals.views === 2 && x;
    }, 30_000);
    assert.equal(a.concurrent_viewers, 1);
    await viewer.evaluate(() => (window as unknown as { lastPc: RTCPeerConnection }).lastPc.close());
    await waitFor('the edge drops the session', async () => ((await (await fetch(`${edge.httpUrl}/streams/${id}`, { headers: edge.headers })).json()) as { whep_viewers: number }).whep_viewers === 0, 60_000);
    await s.app.hot.whep.tick();
    a = await analytics(id);
    assert.equal(a.concurrent_viewers, 0, 'a viewer gone without DELETE is ended');
    assert.equal(a.totals.views, 2);
    assert.deepEqual((await whepRows(id)).filter((r) => r.event === 'viewend').length, 2);
  }

  it('refuses what is not a WHIP publish before the edge sees it: no key, wrong type, a huge offer; answers CORS', async () => {
    const ls = (await s.post('/v1/live-streams', { title: 'whip bounds' }).expect(201)).body;
    assert.equal(ls.ingest.whip_url, `${s.config.cdnUrl}/live/whip`);
    assert.equal(ls.webrtc_url, `${s.config.cdnUrl}/live/${ls.id}/whep`);
    assert.ok(ls.ingest.srt_url.includes(ls.stream_key));
    const offer = 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n';
    const post = (headers: Record<string, string>, body: string) => fetch(ls.ingest.whip_url, { method: 'POST', headers, body });
    let res = await post({ 'content-type': 'application/sdp' }, offer);
    assert.equal(res.status, 401);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'invalid_stream_key');
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    res = await post({ 'content-type': 'application/sdp', authorization: `Bearer lsk${'0'.repeat(32)}` }, offer);
    assert.equal(res.status, 400, 'an offer with no media is refused by the edge');
    res = await post({ 'content-type': 'application/json', authorization: `Bearer ${ls.stream_key}` }, offer);
    assert.equal(res.status, 415);
    const candidates = Array.from({ length: 10_000 }, (_, i) => `a=candidate:${i} 1 udp 2122260223 10.0.${i % 250}.1 ${10000 + i} typ host\r\n`).join('');
    res = await post({ 'content-type': 'application/sdp', authorization: `Bearer ${ls.stream_key}` }, offer + candidates);
    assert.equal(res.status, 413);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'payload_too_large');
    const pre = await fetch(ls.ingest.whip_url, { method: 'OPTIONS', headers: { origin: 'https://studio.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } });
    assert.equal(pre.status, 204);
    assert.match(pre.headers.get('access-control-allow-methods') ?? '', /POST/);
    assert.match(pre.headers.get('access-control-allow-headers') ?? '', /Authorization/);
    assert.match(pre.headers.get('access-control-expose-headers') ?? '', /Location/);
    // No broadcast: WHEP has nothing to play.
    res = await fetch(ls.webrtc_url, { method: 'POST', headers: { 'content-type': 'application/sdp' }, body: offer });
    assert.equal(res.status, 404);
  });

  it('a browser publishes over WHIP; another plays WHEP and hls.js plays LL-HLS, both reading the clock; DELETE ends it and the recording turns ready', async () => {
    const ls = (await s.post('/v1/live-streams', { title: 'from the browser', visibility: 'public', latency_mode: 'low', reconnect_window: 0 }).expect(201)).body;
    const publisher = await browser.newPage();
    const viewer = await browser.newPage();
    const hlsViewer = await browser.newPage();
    try {
      await publisher.goto(`${site.base}/blank`);
      const location = await publisher.evaluate(async ([url, key]) => {
        const w = window as unknown as Win & { vhWhip: (u: string, k: string, st: MediaStream) => Promise<{ location: string; stop(): Promise<void> }>; vhClock: { camera(fps: number): MediaStream } };
        w.pub = await w.vhWhip(url, key, w.vhClock.camera(15));
        return w.pub.location;
      }, [ls.ingest.whip_url, ls.stream_key]);
      assert.ok(location.startsWith(`${s.config.cdnUrl}/live/whip/`), location);
      assert.ok(!location.includes(ls.stream_key), 'the session resource does not carry the key');

      const active = await waitLive(s, ls.id, { timeoutMs: 90_000 });

      // Stream health from the edge's own measure of the WHIP publisher.
      const health = await waitFor('WHIP health', async () => {
        const h = (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body.health;
        return h?.video?.width && h;
      }, 20_000);
      assert.equal(health.protocol, 'whip');
      // The camera is 640x360; a busy machine makes Chromium's WebRTC sender scale down (keeping
      // the aspect ratio), so the measured size is checked for shape and bound, not to the pixel.
      assert.equal(health.video.codec.toLowerCase(), 'h264');
      assert.ok(health.video.width <= 640 && health.video.height <= 360 && health.video.width > 0, `${health.video.width}x${health.video.height}`);
      assert.ok(Math.abs(health.video.width / health.video.height - 16 / 9) < 0.1, `${health.video.width}x${health.video.height} keeps 16:9`);
      assert.ok(health.bitrate_kbps > 0);

      // A second publisher on the live key is refused with 409.
      const second = await publisher.evaluate(async ([url, key]) => {
        const w = window as unknown as { vhWhip: (u: string, k: string, st: MediaStream) => Promise<unknown>; vhClock: { camera(fps: number): MediaStream } };
        try {
          await w.vhWhip(url, key, w.vhClock.camera(5));
          return 'admitted';
        } catch (e) {
          return String(e);
        }
      }, [ls.ingest.whip_url, ls.stream_key]);
      assert.match(second, /WHIP 409 .*live_stream_busy/);

      // WHEP: the clock read off the decoded picture advances.
      await viewer.goto(`${site.base}/blank`);
      const whepLocation = await viewer.evaluate(async (url) => {
        const w = window as unknown as { vhWhep: (u: string, v: HTMLVideoElement) => Promise<{ location: string }>; vhMeasure: (v: HTMLVideoElement) => void };
        const v = document.getElementById('v') as HTMLVideoElement;
        const r = await w.vhWhep(url, v);
        w.vhMeasure(v);
        return r.location;
      }, ls.webrtc_url);
      assert.ok(whepLocation.startsWith(`${ls.webrtc_url}/`), whepLocation);
      const whep = await clockAdvances(viewer, 2000);
      await whepViewCounted(ls.id, whepLocation, viewer);

      // LL-HLS: the master is the edge's, its media playlists have parts and block.
      const master = await waitFor('LL-HLS master', async () => {
        const text = await (await fetch(ls.hls_url)).text();
        return text.includes('ll/') && text;
      }, 30_000);
      const media = /^(ll\/[^\s]+\.m3u8)$/m.exec(master)?.[1];
      assert.ok(media, master);
      const mediaUrl = `${s.config.cdnUrl}/live/${ls.id}/${media}`;
      const playlist = await (await fetch(mediaUrl)).text();
      assert.match(playlist, /#EXT-X-PART-INF/);
      assert.match(playlist, /CAN-BLOCK-RELOAD=YES/);
      assert.match(playlist, /#EXT-X-PRELOAD-HINT/);
      const msn = Number(/#EXT-X-MEDIA-SEQUENCE:(\d+)/.exec(playlist)![1]) + (playlist.match(/#EXTINF/g)?.length ?? 0);
      const blocked = await fetch(`${mediaUrl}?_HLS_msn=${msn}&_HLS_part=0`);
      assert.equal(blocked.status, 200);
      assert.match(await blocked.text(), new RegExp(`#EXT-X-PART:.*`));
      assert.equal((await fetch(`${mediaUrl}?_HLS_msn=abc`)).status, 400);

      await hlsViewer.goto(site.hls(ls.hls_url));
      const llhls = await clockAdvances(hlsViewer, 2000, 60_000);
      assert.deepEqual(await hlsViewer.evaluate(() => (window as unknown as Win).errors), []);
      if (process.env.LIVE_FIGURES) console.log(`glass to glass (test machine): WHEP median ${median(whep)} ms, LL-HLS median ${median(llhls)} ms`);
      // A WHIP source (H.264 without B-frames, Opus, no mark) goes to WHEP as is: no WebRTC rendition (lib/live/webrtc.ts).
      const edgeSees = (await (await fetch(`${edge.httpUrl}/streams/${ls.id}`, { headers: edge.headers })).json()) as { webrtc_rendition: boolean };
      assert.equal(edgeSees.webrtc_rendition, false);

      // DELETE the WHIP session: the broadcast ends (reconnect_window 0) and its recording is ready.
      await publisher.evaluate(() => (window as unknown as Win).pub!.stop());
      const ready = await waitFor('recording ready', async () => {
        const v = (await s.get(`/v1/videos/${active.active_video_id}`).expect(200)).body;
        return v.status === 'ready' && v;
      }, 60_000);
      assert.equal(ready.live_stream_id, ls.id);
      assert.ok(ready.duration_seconds > 1);
      await waitFor('idle', async () => (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body.status === 'idle', 20_000);
    } finally {
      await Promise.all([publisher.close(), viewer.close(), hlsViewer.close()]);
    }
  });

  it('an aes-128 low-latency broadcast is not offered LL-HLS: the plain ladder with encrypted segments (docs/live.md)', async () => {
    const ls = (await s.post('/v1/live-streams', { title: 'encrypted low', visibility: 'public', latency_mode: 'low', encryption: 'aes-128', reconnect_window: 0 }).expect(201)).body;
    const push = pushRtmp(`${s.rtmpBase}/${ls.stream_key}`, { seconds: 60 });
    try {
      await waitLive(s, ls.id);
      await new Promise((r) => setTimeout(r, 3000));
      const master = await (await fetch(ls.hls_url)).text();
      assert.match(master, /^source\/index\.m3u8$/m);
      assert.doesNotMatch(master, /ll\//);
      assert.equal((await fetch(`${s.config.cdnUrl}/live/${ls.id}/ll/source/index.m3u8`)).status, 404);
      // The session never fed the edge's packager.
      assert.equal((await fetch(`${edge.httpUrl}/hls/${ls.id}/index.m3u8`, { headers: edge.headers })).status, 404);
    } finally {
      push.stop();
      await s.post(`/v1/live-streams/${ls.id}/complete`).expect(200);
      await waitFor('idle', async () => (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body.status === 'idle', 30_000);
    }
  });

  // Last: it spends this address's bad-key budget (INVALID_KEY_LIMIT_PER_MINUTE, 20), which then blocks WHIP POSTs from it.
  it('rate-limits wrong WHIP keys per address: 429 + Retry-After once the budget is spent, then even a right key waits', async () => {
    const ls = (await s.post('/v1/live-streams', { title: 'whip guessing' }).expect(201)).body;
    const offer = 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n';
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 30; i++) {
      last = await fetch(ls.ingest.whip_url, { method: 'POST', headers: { 'content-type': 'application/sdp', authorization: `Bearer guess${i}` }, body: offer });
      statuses.push(last.status);
    }
    assert.equal(statuses[0], 401);
    assert.ok(statuses.filter((x) => x === 401).length <= 20, statuses.join(','));
    assert.equal(statuses.at(-1), 429, statuses.join(','));
    assert.ok(Number(last!.headers.get('retry-after')) >= 1);
    const right = await fetch(ls.ingest.whip_url, { method: 'POST', headers: { 'content-type': 'application/sdp', authorization: `Bearer ${ls.stream_key}` }, body: offer });
    assert.equal(right.status, 429, 'the address is blocked for a while, key checks included');
    // The budget's rows live in the shard's one test database, shared by every stack: left spent,
    // the next file's bad-key check from 127.0.0.1 in this minute got 429, not its 401.
    await s.db('rate_limits').where('key_id', 'like', 'badkey:%').delete();
  });
});
