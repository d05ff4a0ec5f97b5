import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { freePort } from '../support/services';

const HLS_JS = fs.readFileSync(require.resolve('hls.js/dist/hls.min.js'), 'utf8');
import { type EdgeProcess, spawnEdge, waitFor } from './helpers';

// Debian's Chromium, driven by playwright-core (as test/live/browser.test.ts).
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required'];
const KEY = `lsk${'ab'.repeat(16)}`;
const SECRET = 'webrtc-edge-test-credential';

/**
 * The camera and the viewer, in one page: a canvas paints the wall clock (Date.now(), 42 bits as
 * 40x40 black/white blocks) 30 times a second and is published over WHIP (H.264); the viewer plays
 * WHEP into a <video>, draws each decoded frame onto a canvas and reads the clock back.
 */
const PAGE = `
const W = 320, H = 240, BITS = 42, B = 40;
window.cam = document.createElement('canvas'); cam.width = W; cam.height = H;
const cx = cam.getContext('2d');
setInterval(() => {
  const t = Date.now();
  for (let i = 0; i < 48; i++) {
    const bit = i < BITS ? Math.floor(t / 2 ** i) % 2 : 0;
    cx.fillStyle = bit ? '#fff' : '#000';
    cx.fillRect((i % 8) * B, Math.floor(i / 8) * B, B, B);
  }
}, 1000 / 30);
window.offer = async (pc) => {
  const o = await pc.createOffer();
  await pc.setLocalDescription(o);
  if (pc.iceGatheringState !== 'complete') await new Promise((r) => pc.addEventListener('icegatheringstatechange', () => pc.iceGatheringState === 'complete' && r()));
  return pc.localDescription.sdp;
};
window.publish = async () => {
  window.pub = new RTCPeerConnection();
  const track = cam.captureStream(30).getVideoTracks()[0];
  const tr = pub.addTransceiver(track, { direction: 'sendonly' });
  tr.setCodecPreferences(RTCRtpSender.getCapabilities('video').codecs.filter((c) => c.mimeType === 'video/H264'));
  const ctx = new AudioContext(); const osc = ctx.createOscillator(); const dst = ctx.createMediaStreamDestination(); osc.connect(dst); osc.start();
  pub.addTransceiver(dst.stream.getAudioTracks()[0], { direction: 'sendonly' });
  return offer(pub);
};
window.readClock = (v, samples) => {
  const rd = document.createElement('canvas'); rd.width = W; rd.height = H; const rx = rd.getContext('2d', { willReadFrequently: true });
  const onFrame = () => {
    if (v.videoWidth) {
      rx.drawImage(v, 0, 0, W, H);
      let t = 0;
      for (let i = 0; i < BITS; i++) {
        const p = rx.getImageData((i % 8) * B + B / 2, Math.floor(i / 8) * B + B / 2, 1, 1).data;
        if (p[0] > 128) t += 2 ** i;
      }
      samples.push(Date.now() - t);
    }
    v.requestVideoFrameCallback(onFrame);
  };
  v.requestVideoFrameCallback(onFrame);
};
window.watch = async () => {
  window.sub = new RTCPeerConnection();
  sub.addTransceiver('video', { direction: 'recvonly' });
  sub.addTransceiver('audio', { direction: 'recvonly' });
  window.v = document.createElement('video'); v.muted = true; v.autoplay = true; v.playsInline = true; document.body.appendChild(v);
  sub.ontrack = (e) => { if (e.track.kind === 'video') { v.srcObject = new MediaStream([e.track]); v.play().catch(() => {}); } };
  window.samples = [];
  readClock(v, samples);
  return offer(sub);
};
window.playLL = (src) => {
  window.llv = document.createElement('video'); llv.muted = true; llv.autoplay = true; document.body.appendChild(llv);
  window.llSamples = []; window.llErrors = [];
  const hls = new Hls({ lowLatencyMode: true });
  hls.on(Hls.Events.ERROR, (e, d) => { if (d.fatal) llErrors.push(d.details); });
  hls.loadSource(src); hls.attachMedia(llv); llv.play().catch(() => {});
  readClock(llv, llSamples);
};
`;

let edge: EdgeProcess;
/** A call to the edge's API with its credential. */
const edgeFetch = (p: string, init: RequestInit = {}) => fetch(`${edge.httpUrl}${p}`, { ...init, headers: { ...edge.headers, ...(init.headers as Record<string, string> | undefined) } });

async function sdpPost(p: string, sdp: string): Promise<{ status: number; location: string | null; body: string }> {
  const r = await edgeFetch(p, { method: 'POST', headers: { 'content-type': 'application/sdp' }, body: sdp });
  return { status: r.status, location: r.headers.get('location'), body: await r.text() };
}

describe('live edge: Chromium publishes over WHIP and watches over WHEP (directly against vidhost-edge)', function () {
  this.timeout(120_000);
  let check: http.Server;
  let browser: Browser;
  let page: Page;
  let site: http.Server;
  let tmp: string;
  let stopped = false;
  let sessionFfmpeg: ChildProcess | undefined;
  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-edge-'));
    // The service's key check and hooks (this test is the edge alone): the key is admitted as ls_e2e.
    check = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        // The hooks (the edge reports its publisher connected and disconnected): taken.
        if (req.url !== '/check') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        const { key, app } = JSON.parse(body || '{}') as { key?: string; app?: string };
        if (key === KEY && app === 'whip') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ live_stream_id: 'ls_e2e', workspace_id: 'ws_e2e' }));
        else res.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'unknown', reason: 'unknown stream key' }));
      });
    });
    await new Promise<void>((r) => check.listen(0, '127.0.0.1', r));
    // No service here: a stand-in for the live session's ffmpeg reads the edge's feed of ls_e2e
    // (GET /feed, MPEG-TS; H.264 copied, Opus → AAC) and PUTs it to the edge's own LL-HLS
    // packager, as the session's ffmpeg does (without the ladder). Started again until the test
    // ends (the feed answers 404 until a publisher has a keyframe).
    const edgePort = await freePort();
    const feedArgs = ['-hide_banner', '-loglevel', 'error', '-fflags', 'nobuffer', '-analyzeduration', '500000', '-probesize', '500000', '-f', 'mpegts', '-headers', `Authorization: Bearer ${SECRET}\r\n`, '-i', `http://127.0.0.1:${edgePort}/feed/ls_e2e`,
      '-map', '0:v:0', '-c:v', 'copy', '-map', '0:a:0?', '-c:a', 'aac', '-b:a', '64k', '-f', 'mpegts', '-flush_packets', '1', '-muxdelay', '0', '-method', 'PUT', '-headers', `Authorization: Bearer ${SECRET}\r\n`, `http://127.0.0.1:${edgePort}/hls/ls_e2e/src/ingest`];
    const session = () => {
      if (stopped) return;
      sessionFfmpeg = spawn(process.env.FFMPEG_PATH ?? 'ffmpeg', feedArgs, { stdio: 'ignore' });
      sessionFfmpeg.once('exit', () => setTimeout(session, 500));
    };
    edge = await spawnEdge({
      LIVE_INGEST_HOST: '0.0.0.0', // Chromium gathers on the host's interfaces (a loopback-bound edge works too)
      LIVE_SRT_PORT: String(await freePort()),
      LIVE_SRT_CHECK_PORT: String((check.address() as AddressInfo).port),
      LIVE_EDGE_HTTP_PORT: String(edgePort),
      LIVE_EDGE_SECRET: SECRET,
    });
    session();
    // The page's own origin serves hls.js and proxies /hls/ to the edge (the API's CDN routes do that in production).
    site = http.createServer((req, res) => {
      if (req.url?.startsWith('/hls/')) {
        void edgeFetch(req.url).then(
          async (r) => {
            res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/octet-stream' });
            res.end(Buffer.from(await r.arrayBuffer()));
          },
          () => res.writeHead(502).end(),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><body><script>${HLS_JS}</script><script>${PAGE}</script></body>`);
    });
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
  });
  after(async () => {
    stopped = true;
    sessionFfmpeg?.kill('SIGKILL');
    await browser?.close();
    await edge?.stop();
    check?.close();
    site?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('takes no request but /healthz without the credential (LIVE_EDGE_SECRET)', async () => {
    const health = await fetch(`${edge.httpUrl}/healthz`);
    assert.equal(health.status, 200);
    assert.equal((await health.text()).trim(), 'ok', '/healthz says nothing else');
    const calls: Array<[string, string, Record<string, string>]> = [
      ['GET', '/streams/ls_e2e', {}],
      ['POST', `/whip/${KEY}`, { 'content-type': 'application/sdp' }],
      ['POST', '/whep/ls_e2e', { 'content-type': 'application/sdp' }],
      ['PUT', '/hls/ls_e2e/src/ingest', {}],
      ['GET', '/hls/ls_e2e/index.m3u8', {}],
      ['DELETE', '/hls/ls_e2e', {}],
      ['DELETE', `/whip/${KEY}/x`, {}],
    ];
    for (const auth of [undefined, 'Bearer wrong-credential', `Bearer ${SECRET}x`, SECRET]) {
      for (const [method, p, headers] of calls) {
        const r = await fetch(`${edge.httpUrl}${p}`, { method, headers: { ...headers, ...(auth ? { authorization: auth } : {}) }, body: method === 'POST' || method === 'PUT' ? 'v=0\r\n' : undefined });
        assert.equal(r.status, 401, `${method} ${p} with ${auth}`);
        assert.equal(((await r.json()) as { error: { code: string } }).error.code, 'unauthorized');
      }
    }
    assert.equal((await edgeFetch('/hls/ls_e2e', { method: 'DELETE' })).status, 200, 'with it');
  });

  it('refuses a wrong key with 401, then carries the painted clock WHIP → WHEP and reports the stream health', async () => {
    const offer = await page.evaluate(() => (window as unknown as { publish: () => Promise<string> }).publish());
    assert.equal((await sdpPost(`/whip/lsk${'0'.repeat(32)}`, offer)).status, 401);
    const pub = await sdpPost(`/whip/${KEY}`, offer);
    assert.equal(pub.status, 201, pub.body);
    assert.match(pub.location ?? '', new RegExp(`^/whip/${KEY}/[0-9a-f]{32}$`));
    await page.evaluate((sdp) => (window as unknown as { pub: RTCPeerConnection }).pub.setRemoteDescription({ type: 'answer', sdp }), pub.body);
    await waitFor('the WHIP source', async () => (await edgeFetch('/streams/ls_e2e')).status === 200, 20_000);

    const wOffer = await page.evaluate(() => (window as unknown as { watch: () => Promise<string> }).watch());
    const sub = await sdpPost(`/whep/ls_e2e`, wOffer);
    assert.equal(sub.status, 201, sub.body);
    await page.evaluate((sdp) => (window as unknown as { sub: RTCPeerConnection }).sub.setRemoteDescription({ type: 'answer', sdp }), sub.body);
    await page.waitForFunction(() => (window as unknown as { samples: number[] }).samples.length > 90, undefined, { timeout: 30_000 });
    const { samples, width } = await page.evaluate(() => ({ samples: (window as unknown as { samples: number[] }).samples.slice(-60), width: (window as unknown as { v: HTMLVideoElement }).v.videoWidth }));
    assert.equal(width, 320);
    const sorted = [...samples].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    if (process.env.LIVE_FIGURES) console.log(`WHIP → WHEP glass to glass (Chromium, same machine): median ${median} ms of ${samples.length} frames (min ${sorted[0]}, max ${sorted[sorted.length - 1]})`);
    // The clock read off the decoded picture is a real, recent time (a misread would be far off).
    assert.ok(median >= 0 && median < 10_000, `clock read back ${median} ms behind`);

    const health = (await (await edgeFetch('/streams/ls_e2e')).json()) as { protocol: string; video: { codec: string; width: number; height: number; fps: number | null }; audio: { codec: string } | null; whep_viewers: number; bitrate_kbps: number };
    assert.equal(health.protocol, 'whip');
    assert.deepEqual([health.video.codec, health.video.width, health.video.height], ['h264', 320, 240]);
    assert.equal(health.audio?.codec, 'opus');
    assert.equal(health.whep_viewers, 1);
    assert.ok(health.bitrate_kbps > 0);

    // A second publisher on the live key is refused; DELETE ends the viewer, then the publisher.
    assert.equal((await sdpPost(`/whip/${KEY}`, offer)).status, 409);
    assert.equal((await edgeFetch(sub.location!, { method: 'DELETE' })).status, 200);
    assert.equal((await edgeFetch(pub.location!, { method: 'DELETE' })).status, 200);
    assert.equal((await edgeFetch('/hls/ls_e2e', { method: 'DELETE' })).status, 200);
    await waitFor('the stream gone from the edge', async () => (await edgeFetch('/streams/ls_e2e')).status === 404, 10_000);
  });

  it('packages the same broadcast as LL-HLS that hls.js plays (the clock read back the same way)', async () => {
    const offer = await page.evaluate(() => (window as unknown as { publish: () => Promise<string> }).publish());
    const pub = await sdpPost(`/whip/${KEY}`, offer);
    assert.equal(pub.status, 201, pub.body);
    await page.evaluate((sdp) => (window as unknown as { pub: RTCPeerConnection }).pub.setRemoteDescription({ type: 'answer', sdp }), pub.body);
    await waitFor('the LL-HLS playlist', async () => (await edgeFetch('/hls/ls_e2e/index.m3u8')).status === 200, 30_000);
    const media = await (await edgeFetch('/hls/ls_e2e/src/video1_stream.m3u8')).text();
    assert.match(media, /#EXT-X-PART:/);
    assert.match(media, /CAN-BLOCK-RELOAD=YES/);
    await page.evaluate(() => (window as unknown as { playLL: (src: string) => void }).playLL('/hls/ls_e2e/index.m3u8'));
    await page.waitForFunction(() => (window as unknown as { llSamples: number[] }).llSamples.length > 90, undefined, { timeout: 45_000 }).catch(async (err: Error) => {
      const state = await page.evaluate(() => {
        const w = window as unknown as { llv: HTMLVideoElement; llErrors: string[]; llSamples: number[] };
        return { t: w.llv.currentTime, ready: w.llv.readyState, width: w.llv.videoWidth, errors: w.llErrors, samples: w.llSamples.length };
      });
      throw new Error(`${err.message}: ${JSON.stringify(state)}; ${edge.log().slice(-1500)}`);
    });
    const { samples, errors } = await page.evaluate(() => ({ samples: (window as unknown as { llSamples: number[] }).llSamples.slice(-60), errors: (window as unknown as { llErrors: string[] }).llErrors }));
    assert.deepEqual(errors, []);
    const sorted = [...samples].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    if (process.env.LIVE_FIGURES) console.log(`WHIP → edge LL-HLS (remux, no ladder) → hls.js glass to glass: median ${median} ms of ${samples.length} frames (min ${sorted[0]}, max ${sorted[sorted.length - 1]})`);
    assert.ok(median >= 0 && median < 15_000, `clock read back ${median} ms behind`);
    assert.equal((await edgeFetch(pub.location!, { method: 'DELETE' })).status, 200);
    assert.equal((await edgeFetch('/hls/ls_e2e', { method: 'DELETE' })).status, 200);
  });
});
