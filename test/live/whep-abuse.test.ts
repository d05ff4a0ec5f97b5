import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { type Edge, type LiveStack, pushRtmp, startEdge, startLiveStack, waitFor, waitLive } from './helpers';

// SPEC §22 abuse bounds, as the red team tried them on loopback, through the API's public WHEP
// endpoint and the real edge: offers rate-limited per client address, sessions that never finish
// ICE freed and never counted; WHIP's PATCH is not advertised.

/** A browser-like recvonly offer (H.264 + Opus, no candidates): the edge answers it; nothing ever connects. */
function recvonlyOffer(): string {
  const ufrag = randomBytes(4).toString('hex');
  const pwd = randomBytes(12).toString('hex');
  const fp = Array.from(randomBytes(32), (b) => b.toString(16).padStart(2, '0').toUpperCase()).join(':');
  const common = [`a=ice-ufrag:${ufrag}`, `a=ice-pwd:${pwd}`, 'a=ice-options:trickle', `a=fingerprint:sha-256 ${fp}`, 'a=setup:actpass', 'a=rtcp-mux'];
  return [
    'v=0', `o=- ${Date.now()} 2 IN IP4 127.0.0.1`, 's=-', 't=0 0', 'a=group:BUNDLE 0 1', 'a=msid-semantic: WMS',
    'm=video 9 UDP/TLS/RTP/SAVPF 102', 'c=IN IP4 0.0.0.0', 'a=rtcp:9 IN IP4 0.0.0.0', ...common, 'a=mid:0', 'a=recvonly',
    'a=rtpmap:102 H264/90000', 'a=rtcp-fb:102 nack', 'a=rtcp-fb:102 nack pli', 'a=fmtp:102 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f',
    'm=audio 9 UDP/TLS/RTP/SAVPF 111', 'c=IN IP4 0.0.0.0', 'a=rtcp:9 IN IP4 0.0.0.0', ...common, 'a=mid:1', 'a=recvonly',
    'a=rtpmap:111 opus/48000/2', 'a=fmtp:111 minptime=10;useinbandfec=1', '',
  ].join('\r\n');
}

describe('live: WHEP abuse bounds (red team, SPEC §22)', function () {
  this.timeout(240_000);
  const CAP = 40;
  let s: LiveStack;
  let edge: Edge;
  before(async () => {
    // The test's "addresses" are X-Forwarded-For values from a trusted loopback proxy.
    s = await startLiveStack({ env: { TRUSTED_PROXIES: '127.0.0.1/32' } });
    edge = await startEdge(s, { LIVE_WEBRTC_ICE_TIMEOUT_SECONDS: '3', LIVE_WHEP_MAX_VIEWERS: String(CAP) });
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(`edge log:\n${edge?.log().slice(-4000)}`);
  });
  after(async () => {
    await edge?.stop();
    await s?.close();
  });

  it('200 offers from one address at once get a burst of sessions and 429s, never the viewer cap; another address still gets 201; none of them is a view', async () => {
    const ls = (await s.post('/v1/live-streams', { title: 'whep flood', visibility: 'public', reconnect_window: 0 }).expect(201)).body;
    const push = pushRtmp(edge.url(ls.stream_key), { seconds: 120 });
    try {
      await waitLive(s, ls.id);
      await waitFor('the SRT broadcast on the edge', async () => {
        const r = await fetch(`${edge.httpUrl}/streams/${ls.id}`, { headers: edge.headers });
        return r.status === 200 && ((await r.json()) as { video: unknown }).video;
      }, 60_000);
      const whep = (from: string) => fetch(ls.webrtc_url, { method: 'POST', headers: { 'content-type': 'application/sdp', 'x-forwarded-for': from }, body: recvonlyOffer() });
      const t0 = Date.now();
      const answers = await Promise.all(Array.from({ length: 200 }, () => whep('198.51.100.7')));
      const elapsed = (Date.now() - t0) / 1000;
      const created = answers.filter((a) => a.status === 201).length;
      const limited = answers.filter((a) => a.status === 429);
      const codes = await Promise.all(limited.map(async (a) => ((await a.clone().json()) as { error: { code: string } }).error.code));
      console.log(`      200 offers from one address in ${elapsed.toFixed(2)} s: ${created} sessions, ${limited.length} refused (${[...new Set(codes)].join(', ')})`);
      assert.deepEqual([...new Set(codes)], ['too_many_whep_offers'], 'refused by the offer bucket, never by the viewer cap');
      assert.equal(created + limited.length, 200, answers.map((a) => a.status).join(','));
      // The edge's bucket: 10 at once, then 2 a second.
      assert.ok(created >= 10 && created <= 10 + Math.ceil(elapsed * 2) + 1, `${created} sessions in ${elapsed} s`);
      assert.ok(created < CAP, 'the viewer cap is not reached');
      const body = (await limited[0].json()) as { error: { code: string } };
      assert.equal(body.error.code, 'too_many_whep_offers');
      assert.ok(Number(limited[0].headers.get('retry-after')) >= 1, `Retry-After ${limited[0].headers.get('retry-after')}`);
      await Promise.all(answers.map((a) => a.body?.cancel().catch(() => undefined)));

      // A real viewer from elsewhere is not locked out.
      const other = await whep('203.0.113.20');
      assert.equal(other.status, 201, await other.text());
      assert.equal(other.headers.get('accept-patch'), null, 'trickle ICE is not advertised');

      // Nothing connected: the ICE timeout (3 s here) frees every slot, and no session is a view.
      await new Promise((r) => setTimeout(r, 5000));
      const again = await Promise.all(Array.from({ length: 5 }, () => whep('203.0.113.21')));
      assert.deepEqual(again.map((a) => a.status), [201, 201, 201, 201, 201]);
      await s.app.hot.whep.poll();
      await s.app.hot.whep.tick();
      await s.app.hot.beacons.flush();
      const a = (await s.get(`/v1/live-streams/${ls.id}/analytics`).expect(200)).body;
      assert.equal(a.totals.views, 0, 'never-connected sessions are no views');
      assert.equal(a.peak_concurrent_viewers, 0);
      assert.equal(a.concurrent_viewers, 0);
      assert.equal(a.totals.watch_time_seconds ?? 0, 0);
      assert.equal(Number((await s.db('analytics_events').where({ subject_id: ls.id }).count('* as n'))[0].n), 0);
      const health = (await (await fetch(`${edge.httpUrl}/streams/${ls.id}`, { headers: edge.headers })).json()) as { whep_viewers: number; whep_sessions: string[] };
      assert.deepEqual([health.whep_viewers, health.whep_sessions], [0, []]);
    } finally {
      push.stop();
      await s.post(`/v1/live-streams/${ls.id}/complete`).expect(200);
    }
  });

  it('WHIP does not advertise trickle ICE: no PATCH in the preflight, PATCH → 405 trickle_ice_not_supported', async () => {
    const ls = (await s.post('/v1/live-streams', { title: 'no trickle' }).expect(201)).body;
    const pre = await fetch(ls.ingest.whip_url, { method: 'OPTIONS', headers: { origin: 'https://studio.example', 'access-control-request-method': 'POST' } });
    assert.equal(pre.status, 204);
    assert.doesNotMatch(pre.headers.get('access-control-allow-methods') ?? '', /PATCH/);
    const patch = await fetch(`${ls.ingest.whip_url}/abc123`, { method: 'PATCH', headers: { 'content-type': 'application/trickle-ice-sdpfrag', authorization: `Bearer ${ls.stream_key}` }, body: 'a=candidate:1 1 udp 1 203.0.113.1 9 typ host' });
    assert.equal(patch.status, 405);
    assert.equal(((await patch.json()) as { error: { code: string } }).error.code, 'trickle_ice_not_supported');
    assert.equal(patch.headers.get('allow'), 'DELETE');
  });
});
