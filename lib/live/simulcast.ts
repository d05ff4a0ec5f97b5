// Simulcast (SPEC §17): during a broadcast, one ffmpeg per target copies the feed (no re-encode)
// to the target's RTMP(S) URL. A failing target is retried every few seconds and reported in the
// stream's read (`simulcast_targets[].status/error`); it never touches the broadcast itself.
// DNS rebinding (issue 33 row 6): the target's name is resolved once, the address is checked,
// and ffmpeg is given that address, never the name (which it would resolve again): for rtmp the
// URL's host is the IP literal and the name stays in the tcUrl; for rtmps ffmpeg speaks RTMP to a
// one-connection relay on loopback that opens TLS to the checked address with the name as SNI and
// verifies the certificate against it (ffmpeg would send no SNI to an IP literal).
import net from 'node:net';
import tls from 'node:tls';
import type { Config } from '../config';
import type { Db } from '../db';
import type { Logger } from '../logger';
import { type Lookup, resolvePublicUrl } from '../net/guard';
import { redactSecrets } from '../redact';
import { feedHeaders, startLiveFfmpeg } from './feed';
import { feedInputArgs } from './ladder';
import type { SimulcastTarget } from './read';

export function targetUrl(t: SimulcastTarget): string {
  return t.stream_key ? `${t.url.replace(/\/+$/, '')}/${t.stream_key}` : t.url;
}

/** ffmpeg's RTMP application: the path without its last part (the stream name), as rtmpproto.c splits it. */
function rtmpApp(pathname: string): string {
  const p = pathname.replace(/^\//, '');
  const i = p.lastIndexOf('/');
  return i < 0 ? '' : p.slice(0, i);
}

export interface PinnedTarget {
  /** The URL ffmpeg pushes to (an IP literal, or the TLS relay on loopback). */
  output: string;
  /** ffmpeg options before it: the tcUrl naming the target's own host. */
  args: string[];
  /** Why the TLS relay's upstream failed, if it did (ffmpeg only sees the connection close). */
  relayError(): string | null;
  close(): void;
}

/** The target, pinned to the address that was checked. */
export async function pinTarget(t: SimulcastTarget, url: URL, address: string): Promise<PinnedTarget> {
  const full = new URL(targetUrl(t));
  const secure = url.protocol === 'rtmps:';
  const port = Number(url.port) || (secure ? 443 : 1935);
  const tcUrl = `${url.protocol}//${url.hostname}:${port}/${rtmpApp(full.pathname)}`;
  const args = ['-rtmp_tcurl', tcUrl];
  if (!secure) {
    const host = net.isIPv6(address) ? `[${address}]` : address;
    return { output: `rtmp://${host}:${port}${full.pathname}${full.search}`, args, relayError: () => null, close: () => undefined };
  }
  let error: string | null = null;
  const name = url.hostname.replace(/^\[|\]$/g, '');
  const relay = net.createServer((down) => {
    relay.close();
    const up = tls.connect({ host: address, port, servername: net.isIP(name) ? undefined : name });
    down.pipe(up).pipe(down);
    up.on('error', (err) => {
      error = `TLS to ${name}: ${err.message}`;
      down.destroy();
    });
    down.on('error', () => up.destroy());
    down.on('close', () => up.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    relay.once('error', reject);
    relay.listen(0, '127.0.0.1', () => resolve());
  });
  const relayPort = (relay.address() as net.AddressInfo).port;
  return { output: `rtmp://127.0.0.1:${relayPort}${full.pathname}${full.search}`, args, relayError: () => error, close: () => relay.close() };
}

async function report(db: Db, liveStreamId: string, i: number, status: string, error: string | null): Promise<void> {
  await db.raw(`update live_streams set simulcast_status = simulcast_status || jsonb_build_object(?::text, jsonb_build_object('status', ?::text, 'error', ?::text)) where id = ?`, [
    String(i),
    status,
    error,
    liveStreamId,
  ]);
}

/** Starts the pushes; `stop()` ends them and marks every target idle. */
export function startSimulcast(
  deps: { config: Config; db: Db; log: Logger },
  liveStreamId: string,
  feed: string,
  targets: SimulcastTarget[],
  retryMs = 3000,
  lookup?: Lookup,
  /** The feed's audio codec: FLV carries AAC as is; anything else (a WHIP broadcast's Opus) is encoded to AAC. */
  audioCodec: string | null = 'aac',
): { stop: () => Promise<void> } {
  const { config, db, log } = deps;
  let stopped = false;
  const running = new Set<() => void>();
  const errored = new Set<number>();
  const loops = targets.map(async (t, i) => {
    while (!stopped) {
      let error: string;
      let pinned: PinnedTarget | undefined;
      try {
        // Checked again at push time (a name may resolve elsewhere than when the target was
        // saved), and ffmpeg connects to the very address checked.
        const { url, address } = await resolvePublicUrl(t.url, config.allowLoopbackUrls, ['rtmp:', 'rtmps:'], lookup);
        pinned = await pinTarget(t, url, address);
        await report(db, liveStreamId, i, 'connecting', null);
        const audio = audioCodec === null || audioCodec === 'aac' ? [] : ['-c:a', 'aac', '-b:a', '160k'];
        const args = ['-hide_banner', '-loglevel', 'error', ...feedInputArgs(feedHeaders(config)), '-i', feed, '-map', '0:v:0', '-map', '0:a:0?', '-c', 'copy', ...audio, '-f', 'flv', ...pinned.args, pinned.output];
        const ff = await startLiveFfmpeg(config, args, feed);
        running.add(ff.stop);
        // Live once it has been pushing for a moment without failing.
        const live = setTimeout(() => {
          errored.delete(i);
          void report(db, liveStreamId, i, 'live', null).catch(() => undefined);
        }, 2000);
        const { code, stderr } = await ff.exited;
        clearTimeout(live);
        running.delete(ff.stop);
        if (stopped) break;
        error = pinned.relayError() ?? (stderr.trim().split('\n').pop() || `ffmpeg exited with code ${code}`);
      } catch (err) {
        error = (err as Error).message;
      } finally {
        pinned?.close();
      }
      // ffmpeg names the output URL, stream key included: the key is the third party's credential,
      // and this error is shown to read-only keys and members and written to the log.
      error = redactSecrets(error, [targetUrl(t), pinned?.output, t.stream_key]).slice(0, 300);
      log.info({ liveStreamId, target: i, error }, 'live: simulcast target errored');
      errored.add(i);
      await report(db, liveStreamId, i, 'errored', error).catch(() => undefined);
      await new Promise((r) => setTimeout(r, retryMs));
    }
  });
  return {
    async stop() {
      stopped = true;
      for (const stop of running) stop();
      await Promise.allSettled(loops);
      // A target that was failing when the broadcast ended keeps its error in the read.
      await Promise.all(targets.map((_, i) => (errored.has(i) ? undefined : report(db, liveStreamId, i, 'idle', null).catch(() => undefined))));
    },
  };
}
