import assert from 'node:assert/strict';
import { type Browser } from 'playwright-core';
import { type Edge, type LiveStack, pushRtmp, waitFor } from './helpers';
import { browserRig, type ClockSite } from './rig';

// SPEC §17/§22: after POST …/reset-stream-key the old key is refused at once for WHIP, RTMP and
// SRT, the broadcast going on under it is ended, and no key appears in full in the edge's log
// (red team: `Error writing trailer of rtmp://…/whip/lsk…` with the whole key, which stayed valid).

describe('live: a stream key reset ends the broadcast on the old key and refuses it everywhere', function () {
  this.timeout(240_000);
  let s: LiveStack;
  let edge: Edge;
  let browser: Browser;
  let site: ClockSite;
  const rig = browserRig();
  before(() => {
    ({ s, edge, browser, site } = rig);
  });

  const status = async (id: string) => (await s.get(`/v1/live-streams/${id}`).expect(200)).body.status as string;
  const whip = (url: string, key: string) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/sdp', authorization: `Bearer ${key}` }, body: 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\nc=IN IP4 0.0.0.0\r\na=rtpmap:96 H264/90000\r\na=sendonly\r\n' });

  it('an SRT broadcast on the old key is dropped; the old key is refused over SRT, RTMP and WHIP', async () => {
    const ls = (await s.post('/v1/live-streams', { title: 'reset srt', reconnect_window: 30 }).expect(201)).body;
    const old = ls.stream_key as string;
    const push = pushRtmp(edge.url(old), { seconds: 120 });
    try {
      await waitFor('active', async () => (await status(ls.id)) === 'active', 60_000);
      const fresh = (await s.post(`/v1/live-streams/${ls.id}/reset-stream-key`).expect(200)).body.stream_key as string;
      assert.notEqual(fresh, old);
      const code = await Promise.race([push.done, new Promise((r) => setTimeout(() => r('still pushing'), 20_000))]);
      assert.notEqual(code, 'still pushing', 'the encoder on the old key is dropped');
      await waitFor('the broadcast leaves active', async () => (await status(ls.id)) !== 'active', 20_000);
    } finally {
      push.stop();
    }
    // Refused at once, every protocol.
    const srt = pushRtmp(edge.url(old), { seconds: 20 });
    const rtmp = pushRtmp(`${s.rtmpBase}/${old}`, { seconds: 20 });
    const [srtCode, rtmpCode] = await Promise.all([srt.done, rtmp.done].map((d) => Promise.race([d, new Promise((r) => setTimeout(() => r('admitted'), 15_000))])));
    srt.stop();
    rtmp.stop();
    assert.notEqual(srtCode, 'admitted', 'SRT with the old key');
    assert.notEqual(rtmpCode, 'admitted', 'RTMP with the old key');
    const w = await whip(ls.ingest.whip_url, old);
    assert.equal(w.status, 401, await w.text());
    assert.notEqual(await status(ls.id), 'active');
    assert.ok(!edge.log().includes(old), 'the old key is never in the edge log in full');
    // The plan's one broadcast slot, for the next test.
    await s.post(`/v1/live-streams/${ls.id}/complete`).expect(200);
    await waitFor('idle', async () => (await status(ls.id)) === 'idle', 60_000);
  });

  it('a WHIP broadcast (Chromium) on the old key is ended, and its retry with the old key is refused', async () => {
    const ls = (await s.post('/v1/live-streams', { title: 'reset whip', reconnect_window: 30 }).expect(201)).body;
    const old = ls.stream_key as string;
    const page = await browser.newPage();
    try {
      await page.goto(`${site.base}/blank`);
      await page.evaluate(async ([url, key]) => {
        const w = window as unknown as { vhWhip: (u: string, k: string, st: MediaStream) => Promise<{ pc: RTCPeerConnection }>; vhClock: { camera(fps: number): MediaStream }; pub: { pc: RTCPeerConnection } };
        w.pub = await w.vhWhip(url, key, w.vhClock.camera(15));
      }, [ls.ingest.whip_url, old]);
      await waitFor('active', async () => (await status(ls.id)) === 'active', 90_000);
      const sessions = async () => ((await (await fetch(`${edge.httpUrl}/streams/${ls.id}`, { headers: edge.headers })).json().catch(() => ({}))) as { protocol?: string }).protocol;
      assert.equal(await sessions(), 'whip');
      await s.post(`/v1/live-streams/${ls.id}/reset-stream-key`).expect(200);
      await waitFor('the WHIP session on the old key ended at the edge', async () => (await fetch(`${edge.httpUrl}/streams/${ls.id}`, { headers: edge.headers })).status === 404 || (await sessions()) !== 'whip', 30_000);
      await waitFor('the broadcast leaves active', async () => (await status(ls.id)) !== 'active', 30_000);
      const w = await whip(ls.ingest.whip_url, old);
      assert.equal(w.status, 401);
      assert.ok(!edge.log().includes(old), `the old key is never in the edge log in full:\n${edge.log().slice(-2000)}`);
      assert.match(edge.log(), new RegExp(`${old.slice(0, 6)}…`), 'the ending is logged, the key shortened');
    } finally {
      await page.close();
    }
  });
});
