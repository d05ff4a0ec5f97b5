import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import type { Logger } from '../logger';
import { registry } from './registry';

/**
 * A process's Prometheus endpoint, on its own port and off the public API: GET /metrics only,
 * bound to METRICS_HOST (127.0.0.1 by default), and with METRICS_TOKEN set only for
 * `Authorization: Bearer <token>`. The API and each worker serve one (docs/operations.md).
 */
export interface MetricsServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface MetricsOptions {
  port: number;
  host: string;
  token?: string;
  log: Logger;
  /** Text to serve (default: this process's registry). */
  collect?: () => Promise<string>;
}

const bearerMatches = (header: string | undefined, token: string) => {
  const given = Buffer.from(/^Bearer (.+)$/.exec(header ?? '')?.[1] ?? '');
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
};

/** Starts the endpoint; a busy port is logged and costs the metrics, never the process (undefined). */
export async function serveMetrics(opts: MetricsOptions): Promise<MetricsServer | undefined> {
  const collect = opts.collect ?? (() => registry.metrics());
  const server = http.createServer(async (req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404).end('not found\n');
      return;
    }
    if (opts.token && !bearerMatches(req.headers.authorization, opts.token)) {
      res.writeHead(401, { 'WWW-Authenticate': 'Bearer' }).end('unauthorized\n');
      return;
    }
    try {
      res.writeHead(200, { 'Content-Type': registry.contentType }).end(await collect());
    } catch (err) {
      opts.log.warn({ err }, 'metrics scrape failed');
      res.writeHead(500).end();
    }
  });
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', (err) => {
      opts.log.warn({ err, port: opts.port }, 'metrics port unavailable; this process runs without /metrics');
      resolve(false);
    });
    server.listen(opts.port, opts.host, () => resolve(true));
  });
  if (!listening) return undefined;
  const { port } = server.address() as AddressInfo;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${host}:${port}/metrics`,
    port,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
