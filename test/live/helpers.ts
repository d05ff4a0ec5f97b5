import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../../lib/logger';
import { type IngestServer, startIngestServer } from '../../lib/live/ingest';
import { freePort } from '../support/services';
import { type Stack, startStack, type StackOptions } from '../support/stack';

export interface LiveStack extends Stack {
  /** The live ingest: the edge (RTMP on LIVE_RTMP_PORT, SRT, WebRTC) and the hooks it calls; `stop()` stops both. */
  ingest: IngestServer;
  /** The running live edge (startEdge replaces it with one started with other settings). */
  edge: Edge;
  rtmpBase: string;
  /** Starts the hooks and the edge again (after `ingest.stop()`), on the same ports and settings. */
  restartIngest(): Promise<void>;
}

/**
 * A stack with the live worker role, the in-process hooks server (lib/live/ingest.ts) and the
 * live edge (`vidhost-edge`, the only ingest) on free ports.
 */
export async function startLiveStack(opts: StackOptions = {}): Promise<LiveStack> {
  const [rtmp, srt, srtCheck, edgeHttp] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const stack = await startStack({
    ...opts,
    workers: opts.workers ?? ['workflow', 'transcode', 'live'],
    env: {
      LIVE_RTMP_PORT: String(rtmp),
      LIVE_SRT_PORT: String(srt),
      LIVE_SRT_CHECK_PORT: String(srtCheck),
      // Where the API and live workers find the edge.
      LIVE_EDGE_HTTP_PORT: String(edgeHttp),
      LIVE_EDGE_INTERNAL_URL: `http://127.0.0.1:${edgeHttp}`,
      LIVE_SEGMENT_SECONDS: '1',
      LIVE_HEARTBEAT_TIMEOUT_MS: '3000',
      LIVE_X264_PRESET: 'ultrafast',
      ...opts.env,
    },
  });
  const log = createLogger(stack.config.logLevel, 'live-hooks');
  let hooks = await startIngestServer({ config: stack.config, db: stack.db, temporal: stack.temporal, log });
  let edgeEnv: NodeJS.ProcessEnv = {};
  const ingest: IngestServer = {
    get port() {
      return hooks.port;
    },
    get active() {
      return hooks.active;
    },
    async stop() {
      await live.edge.stop();
      await hooks.stop();
    },
  };
  const live: LiveStack = Object.assign(stack, {
    ingest,
    edge: undefined as unknown as Edge,
    rtmpBase: `rtmp://127.0.0.1:${rtmp}/live`,
    async restartIngest() {
      hooks = await startIngestServer({ config: stack.config, db: stack.db, temporal: stack.temporal, log });
      live.edge = await launchEdge(live, edgeEnv);
    },
  });
  live.edge = await launchEdge(live, edgeEnv);
  (live as LiveStack & { setEdgeEnv(e: NodeJS.ProcessEnv): void }).setEdgeEnv = (e) => {
    edgeEnv = e;
  };
  const close = stack.close;
  live.close = async () => {
    await live.ingest.stop().catch(() => undefined);
    await close();
  };
  return live;
}

/**
 * ffmpeg pushing a tiny test picture and tone over RTMP (or SRT for an srt:// URL), as OBS would (`-re`: real time).
 * A keyframe every `gop` seconds (default 1), and only then (no scene-cut keyframes) when `gop` is given.
 */
export function pushRtmp(url: string, o: { seconds: number; size?: string; fps?: number; gop?: number }): { child: ChildProcess; done: Promise<number | null>; stop: () => void; stderr: () => string } {
  const fps = o.fps ?? 15;
  const noSceneCut = o.gop === undefined ? [] : ['-sc_threshold', '0'];
  const child = spawn(
    process.env.FFMPEG_PATH ?? 'ffmpeg',
    [
      '-hide_banner', '-loglevel', 'error', '-re',
      '-f', 'lavfi', '-i', `testsrc=size=${o.size ?? '320x240'}:rate=${fps}`,
      '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100',
      '-t', String(o.seconds),
      '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', String(Math.round(fps * (o.gop ?? 1))), ...noSceneCut, '-pix_fmt', 'yuv420p',
      '-c:a', 'aac', '-b:a', '64k',
      '-f', url.startsWith('srt://') ? 'mpegts' : 'flv', url,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (c) => {
    stderr += c;
  });
  const done = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  void done.then(() => {
    if (process.env.TEST_LOG_LEVEL) console.log('pusher:', stderr.slice(-500));
  });
  return { child, done, stop: () => child.kill('SIGINT'), stderr: () => stderr };
}

/**
 * Polls a live stream until it reads `status` (active by default) and returns its body. The
 * default wait is 60 s: a broadcast goes active once every rung has a segment, which a shard
 * running three suites on two cores can take most of a minute to reach.
 */
export async function waitLive(
  s: Pick<Stack, 'get'>,
  id: string,
  o: { status?: string; timeoutMs?: number; key?: string } = {},
): Promise<Record<string, any>> {
  const status = o.status ?? 'active';
  return waitFor(status, async () => {
    const r = (await s.get(`/v1/live-streams/${id}`, o.key).expect(200)).body;
    return r.status === status && r;
  }, o.timeoutMs ?? 60_000);
}

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 30_000, everyMs = 250): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A page on another origin playing `src` with hls.js (the player's own copy), as a customer's site would. */
export function hlsPage(apiUrl: string): Promise<{ url: (src: string) => string; close: () => void }> {
  const site = http.createServer((req, res) => {
    const src = new URL(req.url ?? '/', 'http://x').searchParams.get('src') ?? '';
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(`<!doctype html><video id="v" muted autoplay playsinline></video>
<script src="${apiUrl}/player/assets/hls.min.js"></script>
<script>
  const v = document.getElementById('v');
  const hls = new Hls({ lowLatencyMode: true, liveSyncDurationCount: 2 });
  window.hls = hls; window.errors = [];
  hls.on(Hls.Events.ERROR, (e, d) => { if (d.fatal) window.errors.push(d.details); });
  hls.loadSource(${JSON.stringify(src)});
  hls.attachMedia(v);
  v.play().catch(() => {});
</script>`);
  });
  return new Promise((resolve) =>
    site.listen(0, '127.0.0.1', () => {
      const port = (site.address() as AddressInfo).port;
      resolve({ url: (src) => `http://localhost:${port}/?src=${encodeURIComponent(src)}`, close: () => site.close() });
    }),
  );
}


export interface Edge {
  /** An SRT caller URL on the stack's LIVE_SRT_PORT. */
  url: (streamId: string) => string;
  /** The edge's internal HTTP API (WHIP/WHEP, LL-HLS, /streams, /healthz). */
  httpUrl: string;
  /** Its credential (`authorization: Bearer LIVE_EDGE_SECRET`), for every call but /healthz. */
  headers: Record<string, string>;
  /** The WebRTC UDP port (LIVE_WEBRTC_UDP_PORT). */
  webrtcPort: number;
  child: ChildProcess;
  log: () => string;
  stop: () => Promise<void>;
}

/**
 * The stack's live edge started again with `env` over its settings (LIVE_INGEST_HOST, …): the
 * one it ran is stopped first (one process holds the ports). The stack stops it at the end.
 */
export async function startEdge(s: LiveStack, env: NodeJS.ProcessEnv = {}): Promise<Edge> {
  await s.edge.stop();
  (s as LiveStack & { setEdgeEnv(e: NodeJS.ProcessEnv): void }).setEdgeEnv(env);
  s.edge = await launchEdge(s, env);
  return s.edge;
}

/**
 * The live edge (ingest/, `vidhost-edge`, built by scripts/test's provisioning: LIVE_EDGE_PATH):
 * RTMP on the stack's LIVE_RTMP_PORT, SRT on its LIVE_SRT_PORT, WHIP/WHEP on a free UDP port and
 * its HTTP API on the stack's LIVE_EDGE_HTTP_PORT, asking the stack's hooks about keys.
 */
async function launchEdge(s: Stack, env: NodeJS.ProcessEnv = {}): Promise<Edge> {
  const bin = process.env.LIVE_EDGE_PATH;
  if (!bin) throw new Error('LIVE_EDGE_PATH is not set: run the test through scripts/test');
  const [httpPort, webrtcPort] = [Number(env.LIVE_EDGE_HTTP_PORT) || s.config.live.edgeHttpPort, Number(env.LIVE_WEBRTC_UDP_PORT) || (await freePort())];
  const child = spawn(bin, [], {
    env: {
      ...process.env,
      LIVE_INGEST_HOST: '127.0.0.1',
      LIVE_RTMP_PORT: String(s.config.live.rtmpPort),
      LIVE_SRT_PORT: String(s.config.live.srtPort),
      LIVE_SRT_CHECK_PORT: String(s.config.live.srtCheckPort),
      LIVE_EDGE_HTTP_PORT: String(httpPort),
      LIVE_WEBRTC_UDP_PORT: String(webrtcPort),
      // The credential the stack's API and workers send (derived from its upload secret).
      LIVE_EDGE_SECRET: s.config.live.edgeSecret,
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  let running = true;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      running = false;
      resolve();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (c) => {
      log += c;
      if (process.env.TEST_LOG_LEVEL) process.stderr.write(String(c));
      if (log.includes('listening on')) resolve();
    });
    void exited.then(() => reject(new Error(`the live edge exited: ${log}`)));
  });
  return {
    url: (streamId) => `srt://127.0.0.1:${s.config.live.srtPort}?streamid=${streamId}&mode=caller`,
    httpUrl: `http://127.0.0.1:${httpPort}`,
    headers: { authorization: `Bearer ${env.LIVE_EDGE_SECRET ?? s.config.live.edgeSecret}` },
    webrtcPort,
    child,
    log: () => log,
    async stop() {
      if (running) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A running `vidhost-edge` (LIVE_EDGE_PATH, built by scripts/test's provisioning). */
export interface EdgeProcess {
  /** The edge's internal HTTP API (WHIP/WHEP, LL-HLS, /streams, /healthz). */
  httpUrl: string;
  /** Its credential (`authorization: Bearer LIVE_EDGE_SECRET`), for every call but /healthz. */
  headers: Record<string, string>;
  /** The WebRTC UDP port (LIVE_WEBRTC_UDP_PORT). */
  webrtcPort: number;
  child: ChildProcess;
  log: () => string;
  stop: () => Promise<void>;
}

/** Starts the edge with `env` over the inherited environment, its HTTP and WebRTC ports free ones unless given. */
export async function spawnEdge(env: NodeJS.ProcessEnv = {}): Promise<EdgeProcess> {
  const bin = process.env.LIVE_EDGE_PATH;
  if (!bin) throw new Error('LIVE_EDGE_PATH is not set: run the test through scripts/test');
  const httpPort = Number(env.LIVE_EDGE_HTTP_PORT) || (await freePort());
  const webrtcPort = Number(env.LIVE_WEBRTC_UDP_PORT) || (await freePort());
  // Its RTMP listener (always on) on a free port too, never the machine's 1935.
  const rtmpPort = Number(env.LIVE_RTMP_PORT) || (await freePort());
  const secret = env.LIVE_EDGE_SECRET ?? 'edge-test-credential-0123456789';
  const child = spawn(bin, [], {
    env: { ...process.env, ...env, LIVE_RTMP_PORT: String(rtmpPort), LIVE_EDGE_HTTP_PORT: String(httpPort), LIVE_WEBRTC_UDP_PORT: String(webrtcPort), LIVE_EDGE_SECRET: secret },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (c) => {
      log += c;
      if (process.env.TEST_LOG_LEVEL) process.stderr.write(String(c));
      if (log.includes('listening on')) resolve();
    });
    void exited.then(() => reject(new Error(`the live edge exited: ${log}`)));
  });
  return {
    httpUrl: `http://127.0.0.1:${httpPort}`,
    headers: { authorization: `Bearer ${secret}` },
    webrtcPort,
    child,
    log: () => log,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * What a failed live test leaves for its reader (a test's hook prints it): the last streams made,
 * each with its status, what the edge sees of it (publisher, fps, bitrate, feed readers), the
 * segments its recording has per rung, and the session ffmpegs' age and CPU time. A broadcast
 * that never went active on a loaded shard tells there whether the source, the encoder or the
 * upload stalled.
 */
export async function diagnoseLive(s: Pick<Stack, 'db'>, edge?: { httpUrl: string; headers: Record<string, string> }): Promise<string> {
  const out: string[] = [];
  try {
    const streams = await s.db('live_streams').orderBy('created_at', 'desc').limit(3).select('id', 'status');
    for (const ls of streams) {
      const health = edge ? await fetch(`${edge.httpUrl}/streams/${ls.id}`, { headers: edge.headers, signal: AbortSignal.timeout(3000) }).then((r) => r.text()).catch((e: Error) => e.message) : '';
      const video = await s.db('videos').where({ live_stream_id: ls.id }).orderBy('created_at', 'desc').first('id', 'status');
      const segs = video ? await s.db('live_segments').where({ video_id: video.id }).groupBy('rung').select('rung', s.db.raw('count(*)::int as n')) : [];
      out.push(`${ls.id} ${ls.status}; recording ${video?.status ?? 'none'}; segments ${JSON.stringify(segs)}; edge ${health.slice(0, 800)}`);
    }
  } catch (err) {
    out.push(`(no diagnosis: ${(err as Error).message})`);
  }
  const ps = spawnSync('ps', ['-eo', 'pid,etime,time,args', '--sort=-time'], { encoding: 'utf8' }).stdout ?? '';
  out.push(...ps.split('\n').filter((l) => /ffmpeg .*(feed|live)/.test(l)).map((l) => l.slice(0, 300)));
  return out.join('\n');
}
