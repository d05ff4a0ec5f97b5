// The glass-to-glass harness (issue 35): a camera paints the wall clock (Date.now(), ms) into every
// frame as a bit pattern big enough to survive compression and scaling, and a viewer draws each
// decoded frame to a canvas and reads the clock back: latency = viewer's now − the painted time
// (same machine, same clock). The pattern: 44 cells across a 640×360 picture, row A the 44 low
// bits of the time, row B their complement (a reading counts only when B is A's complement).
// Browser cameras: a canvas + captureStream published over WHIP. ffmpeg cameras: this process
// paints raw gray frames in real time into ffmpeg's stdin (RTMP, SRT, or HLS files for the floor).
// Viewers: WHEP in a page, or hls.js (`lowLatencyMode`) for HLS and LL-HLS.
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const W = 640;
export const H = 360;
const BITS = 44;
const CELL = 14;
const X0 = (W - BITS * CELL) / 2;
const ROW_A = 40;
const ROW_B = 120;
const ROW_H = 60;

/** Paints `t` into a gray (1 byte/pixel) W×H frame. */
export function paintGray(buf: Buffer, t: number): void {
  buf.fill(96);
  for (let i = 0; i < BITS; i++) {
    const bit = Math.floor(t / 2 ** i) % 2;
    for (const [row, v] of [[ROW_A, bit], [ROW_B, 1 - bit]] as const) {
      const shade = v ? 235 : 16;
      for (let y = row; y < row + ROW_H; y++) buf.fill(shade, y * W + X0 + i * CELL, y * W + X0 + (i + 1) * CELL);
    }
  }
}

/**
 * The browser side, injected as a script: `vhClock.paint(ctx, t)`, `vhClock.read(ctx)` (the time
 * or null), `vhClock.camera(fps)` (a canvas stream with a tone), `vhWhip(url, key, stream)`,
 * `vhWhep(url, video)` and `vhMeasure(video)` (pushes latency samples to `window.g2g`).
 */
export const BROWSER_JS = `
(() => {
  const W = ${W}, H = ${H}, BITS = ${BITS}, CELL = ${CELL}, X0 = ${X0}, ROW_A = ${ROW_A}, ROW_B = ${ROW_B}, ROW_H = ${ROW_H};
  const vhClock = {
    paint(ctx, t) {
      ctx.fillStyle = 'rgb(96,96,96)'; ctx.fillRect(0, 0, W, H);
      for (let i = 0; i < BITS; i++) {
        const bit = Math.floor(t / 2 ** i) % 2;
        ctx.fillStyle = bit ? '#ebebeb' : '#101010'; ctx.fillRect(X0 + i * CELL, ROW_A, CELL, ROW_H);
        ctx.fillStyle = bit ? '#101010' : '#ebebeb'; ctx.fillRect(X0 + i * CELL, ROW_B, CELL, ROW_H);
      }
      ctx.fillStyle = '#fff'; ctx.font = '32px monospace'; ctx.fillText(String(t), 20, 300);
    },
    read(ctx) {
      const px = ctx.getImageData(0, 0, W, H).data;
      const luma = (x, y) => { let s = 0; for (let dy = -3; dy <= 3; dy++) for (let dx = -3; dx <= 3; dx++) { const o = ((y + dy) * W + x + dx) * 4; s += px[o] * 0.299 + px[o + 1] * 0.587 + px[o + 2] * 0.114; } return s / 49; };
      let t = 0;
      for (let i = 0; i < BITS; i++) {
        const x = X0 + i * CELL + CELL / 2;
        const a = luma(x, ROW_A + ROW_H / 2) > 128, b = luma(x, ROW_B + ROW_H / 2) > 128;
        if (a === b) return null;
        if (a) t += 2 ** i;
      }
      return t;
    },
    camera(fps) {
      const c = document.createElement('canvas'); c.width = W; c.height = H;
      const ctx = c.getContext('2d');
      const tick = () => vhClock.paint(ctx, Date.now());
      tick(); setInterval(tick, 1000 / fps);
      const stream = c.captureStream(fps);
      try {
        const ac = new AudioContext(); const osc = ac.createOscillator(); const dst = ac.createMediaStreamDestination();
        osc.connect(dst); osc.start(); stream.addTrack(dst.stream.getAudioTracks()[0]);
      } catch (e) { /* video only */ }
      return stream;
    },
  };
  const gathered = (pc) => new Promise((r) => { if (pc.iceGatheringState === 'complete') return r(); const t = setTimeout(r, 2000); pc.addEventListener('icegatheringstatechange', () => { if (pc.iceGatheringState === 'complete') { clearTimeout(t); r(); } }); });
  const h264First = (tr) => {
    const codecs = RTCRtpReceiver.getCapabilities('video').codecs;
    const h264 = codecs.filter((c) => /h264/i.test(c.mimeType) && /packetization-mode=1/.test(c.sdpFmtpLine || ''));
    if (tr.setCodecPreferences && h264.length) tr.setCodecPreferences([...h264, ...codecs.filter((c) => /rtx/i.test(c.mimeType))]);
  };
  async function vhWhip(url, key, stream) {
    const pc = new RTCPeerConnection();
    for (const track of stream.getTracks()) { const tr = pc.addTransceiver(track, { direction: 'sendonly' }); if (track.kind === 'video') h264First(tr); }
    await pc.setLocalDescription(await pc.createOffer());
    await gathered(pc);
    const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/sdp', Authorization: 'Bearer ' + key }, body: pc.localDescription.sdp });
    if (res.status !== 201) { pc.close(); throw new Error('WHIP ' + res.status + ' ' + (await res.text())); }
    const location = new URL(res.headers.get('Location'), url).href;
    await pc.setRemoteDescription({ type: 'answer', sdp: await res.text() });
    return { pc, location, stop: async () => { pc.close(); await fetch(location, { method: 'DELETE', headers: { Authorization: 'Bearer ' + key } }); } };
  }
  async function vhWhep(url, video) {
    const pc = new RTCPeerConnection();
    h264First(pc.addTransceiver('video', { direction: 'recvonly' }));
    pc.addTransceiver('audio', { direction: 'recvonly' });
    const ms = new MediaStream();
    pc.ontrack = (e) => { ms.addTrack(e.track); video.srcObject = ms; video.play().catch(() => {}); };
    await pc.setLocalDescription(await pc.createOffer());
    await gathered(pc);
    const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/sdp' }, body: pc.localDescription.sdp });
    if (res.status !== 201) { pc.close(); throw new Error('WHEP ' + res.status + ' ' + (await res.text())); }
    const location = new URL(res.headers.get('Location'), url).href;
    await pc.setRemoteDescription({ type: 'answer', sdp: await res.text() });
    return { pc, location };
  }
  function vhMeasure(video) {
    const c = document.createElement('canvas'); c.width = W; c.height = H;
    const ctx = c.getContext('2d', { willReadFrequently: true });
    window.g2g = []; window.clockReads = [];
    const frame = () => {
      if (video.videoWidth) {
        ctx.drawImage(video, 0, 0, W, H);
        const t = vhClock.read(ctx);
        if (t !== null) { const now = Date.now(); window.clockReads.push(t); window.g2g.push(now - t); if (window.g2g.length > 2000) { window.g2g.shift(); window.clockReads.shift(); } }
      }
      video.requestVideoFrameCallback ? video.requestVideoFrameCallback(frame) : setTimeout(frame, 30);
    };
    frame();
  }
  Object.assign(window, { vhClock, vhWhip, vhWhep, vhMeasure });
})();
`;

/**
 * A page server on its own origin (as a customer's site): `/blank` with the harness loaded, and
 * `/hls?src=…` playing `src` with hls.js (`lowLatencyMode`, the player's own copy from `apiUrl`) and measuring.
 */
export function clockSite(apiUrl: string): Promise<{ base: string; hls: (src: string) => string; close: () => void }> {
  const site = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    if (u.pathname === '/hls') {
      const src = u.searchParams.get('src') ?? '';
      res.end(`<!doctype html><video id="v" muted autoplay playsinline></video>
<script>${BROWSER_JS}</script>
<script src="${apiUrl}/player/assets/hls.min.js"></script>
<script>
  const v = document.getElementById('v');
  const hls = new Hls({ lowLatencyMode: true, liveSyncDurationCount: 1, backBufferLength: 10 });
  window.hls = hls; window.errors = [];
  hls.on(Hls.Events.ERROR, (e, d) => { if (d.fatal) window.errors.push(d.details); });
  hls.loadSource(${JSON.stringify(src)});
  hls.attachMedia(v);
  v.play().catch(() => {});
  vhMeasure(v);
</script>`);
      return;
    }
    res.end(`<!doctype html><video id="v" muted autoplay playsinline></video><script>${BROWSER_JS}</script>`);
  });
  return new Promise((resolve) =>
    site.listen(0, '127.0.0.1', () => {
      const port = (site.address() as AddressInfo).port;
      const base = `http://localhost:${port}`;
      resolve({ base, hls: (src) => `${base}/hls?src=${encodeURIComponent(src)}`, close: () => site.close() });
    }),
  );
}

/**
 * An ffmpeg camera: this process paints the clock into `fps` gray frames a second, in real time,
 * and ffmpeg encodes them as they come (x264 zerolatency, `gop` seconds) to `out` (`-f format`).
 */
export function clockFfmpeg(out: string[], o: { fps?: number; gop?: number; seconds: number; preset?: string }): { child: ChildProcess; done: Promise<number | null>; stop: () => void; stderr: () => string } {
  const fps = o.fps ?? 30;
  const child = spawn(
    process.env.FFMPEG_PATH ?? 'ffmpeg',
    [
      '-hide_banner', '-loglevel', 'error',
      '-f', 'rawvideo', '-pix_fmt', 'gray', '-s', `${W}x${H}`, '-r', String(fps), '-i', 'pipe:0',
      '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000',
      '-map', '0:v', '-map', '1:a', '-shortest',
      '-c:v', 'libx264', '-preset', o.preset ?? 'ultrafast', '-tune', 'zerolatency', '-g', String(Math.round(fps * (o.gop ?? 1))), '-pix_fmt', 'yuv420p',
      '-c:a', 'aac', '-b:a', '64k',
      ...out,
    ],
    { stdio: ['pipe', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (c) => {
    stderr = (stderr + c).slice(-4000);
  });
  child.stdin!.on('error', () => undefined);
  const frame = Buffer.alloc(W * H);
  const started = Date.now();
  let n = 0;
  const timer = setInterval(() => {
    // Catch up in whole frames if the event loop was late: the pattern is always the time of writing.
    const due = Math.floor(((Date.now() - started) * fps) / 1000);
    if (due > n + 5) n = due - 1;
    while (n <= due && child.stdin!.writable) {
      paintGray(frame, Date.now());
      child.stdin!.write(frame);
      n++;
    }
    if (Date.now() - started > o.seconds * 1000) stop();
  }, Math.floor(1000 / fps / 2));
  const stop = () => {
    clearInterval(timer);
    child.stdin!.end();
  };
  const done = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  void done.then(() => clearInterval(timer));
  return { child, done, stop, stderr: () => stderr };
}

export const median = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] : NaN);
