import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { onTeardown } from '../support/hooks';
import type { Stack } from '../support/stack';

export type Route = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A loopback HTTP server standing in for the internet; closed at the end of the run. */
export async function serve(routes: Record<string, Route>): Promise<{ url: string; hits: Map<string, number> }> {
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const route = routes[path];
    if (route) return route(req, res);
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTeardown(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

/** The first bytes of an MP4 (an `ftyp` box): enough to pass the sniff, not enough to decode. */
export const ftypHeader = () => Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2avc1mp41')]);

export const sendFile = (file: string, type = 'video/mp4'): Route => (_req, res) => {
  res.writeHead(200, { 'content-type': type, 'content-length': fs.statSync(file).size });
  fs.createReadStream(file).pipe(res);
};
export const sendBody = (body: string | Buffer, type: string): Route => (_req, res) => {
  res.writeHead(200, { 'content-type': type }).end(body);
};
/** `total` bytes that start like an MP4, with or without a Content-Length. */
export const sendPadded = (total: number, declare: boolean): Route => (_req, res) => {
  res.writeHead(200, { 'content-type': 'video/mp4', ...(declare ? { 'content-length': total } : {}) });
  res.write(ftypHeader());
  let sent = ftypHeader().length;
  const chunk = Buffer.alloc(64 * 1024);
  const pump = () => {
    while (sent < total) {
      const n = Math.min(chunk.length, total - sent);
      sent += n;
      if (!res.write(chunk.subarray(0, n))) return void res.once('drain', pump);
    }
    res.end();
  };
  pump();
};

/** Polls until `check` returns true. */
export async function eventually(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** Every object under the video's two prefixes (SPEC §3, §6). */
export async function videoObjects(stack: Stack, uuid: string): Promise<string[]> {
  const ws = stack.ws.id;
  // uploads/: where upload URLs write until completion moves the object to originals/ (SPEC §12).
  return [
    ...(await stack.storage.list(`uploads/${ws}/${uuid}/`)),
    ...(await stack.storage.list(`originals/${ws}/${uuid}/`)),
    ...(await stack.storage.list(`videos/${ws}/${uuid}/`)),
  ];
}

const run = promisify(execFile);

/** Command lines of running ffmpeg processes that mention `needle` (a video's uuid is in its input path). */
export async function ffmpegProcesses(needle: string): Promise<string[]> {
  const { stdout } = await run('ps', ['-eo', 'pid=,args=']);
  return stdout
    .split('\n')
    .filter((l) => /\bffmpeg\b/.test(l) && l.includes(needle) && !/\bps\b|\bgrep\b/.test(l))
    .map((l) => l.trim());
}
