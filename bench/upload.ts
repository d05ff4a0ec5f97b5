/**
 * Upload throughput and the API's memory, through the real stack (API in a child process):
 *   - a generated stream of `--gib` GiB (default 1) through tus (tus-js-client, 64 MiB PATCHes),
 *     sampling the API's RSS, until the video is ready;
 *   - the same bytes as one PUT to a presigned URL (only when they fit the 5 GiB single-PUT limit).
 * The stream is a real 2 s clip (faststart MP4) followed by a 64-bit `free` box of zeros, which
 * ffmpeg skips: the video reaches ready whatever the size, and nothing is written to disk first.
 *   npm run bench:upload -- --gib 1 [--driver local|s3]      (5 GiB+: --gib 5.5)
 * Run it with the services scripts/test provisions (see README, Tests and benchmarks).
 */
import fs from 'node:fs';
import { Readable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import * as tus from 'tus-js-client';
import { spawnApi } from '../test/support/child';
import { isStatus, waitForVideo } from '../test/support/flow';
import { makeClip } from '../test/support/media';
import { startStack } from '../test/support/stack';
import { runMain } from '../test/support/main';

const argOf = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const GiB = 1024 ** 3;
const size = Math.round(Number(argOf('gib', '1')) * GiB);
const driver = argOf('driver', 'local') as 'local' | 's3';

/** clip bytes, then a `free` box (size 1 = 64-bit largesize follows) padding to `total`. */
function generated(clip: Buffer, total: number): Readable {
  const header = Buffer.alloc(16);
  const pad = total - clip.length;
  header.writeUInt32BE(1, 0);
  header.write('free', 4, 'latin1');
  header.writeBigUInt64BE(BigInt(pad), 8);
  const zeros = Buffer.alloc(4 * 1024 * 1024);
  let left = pad - 16;
  return Readable.from(
    (function* () {
      yield clip;
      yield header;
      while (left > 0) {
        const n = Math.min(left, zeros.length);
        left -= n;
        yield n === zeros.length ? zeros : zeros.subarray(0, n);
      }
    })(),
  );
}

function rss(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

async function main(): Promise<void> {
  const s = await startStack({ storage: driver, env: { MAX_RESUMABLE_UPLOAD_BYTES: String(60 * GiB) } });
  const ws = await s.newWorkspace('business');
  const port = 20000 + Math.floor(Math.random() * 20000);
  const env = { ...s.env, PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, LOG_LEVEL: 'info' };
  const api = await spawnApi(env);
  const apiPid = Number(/"pid":(\d+)/.exec(api.output())?.[1] ?? 0);
  const clip = fs.readFileSync(await makeClip({ width: 640, height: 360, seconds: 2 }));
  const post = (p: string, body: unknown) =>
    fetch(`${env.PUBLIC_BASE_URL}${p}`, { method: 'POST', headers: { Authorization: `Bearer ${ws.fullKey}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json());
  const waitReady = (id: string) => waitForVideo({ ...s, get: (p: string) => s.get(p, ws.fullKey) } as typeof s, id, isStatus('ready'), 30 * 60_000);

  // tus
  const init = await post('/v1/upload/init', { filename: 'big.mp4', size, content_type: 'video/mp4', upload_protocol: 'tus' });
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, apiPid ? rss(apiPid) : 0)), 200);
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    new tus.Upload(generated(clip, size), { uploadUrl: init.upload_url, uploadSize: size, chunkSize: 64 * 1024 * 1024, retryDelays: [0, 1000], onSuccess: () => resolve(), onError: reject }).start();
  });
  const tusSeconds = (performance.now() - t0) / 1000;
  await waitReady(init.video_id);
  const readySeconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  console.log(`tus: ${(size / GiB).toFixed(2)} GiB in ${tusSeconds.toFixed(1)} s = ${(size / 1024 ** 2 / tusSeconds).toFixed(0)} MiB/s; ready after ${readySeconds.toFixed(1)} s; API peak RSS ${(peak / 1024 ** 2).toFixed(0)} MB (pid ${apiPid})`);

  // single PUT of the same bytes
  if (size <= 5 * GiB) {
    const put = await post('/v1/upload/init', { filename: 'big.mp4', size, content_type: 'video/mp4' });
    const t1 = performance.now();
    const r = await fetch(put.upload_url, { method: 'PUT', headers: { ...put.upload_headers, 'Content-Length': String(size) }, body: Readable.toWeb(generated(clip, size)) as ReadableStream, duplex: 'half' } as RequestInit);
    const putSeconds = (performance.now() - t1) / 1000;
    if (!r.ok) throw new Error(`PUT: ${r.status} ${await r.text()}`);
    console.log(`PUT: ${(size / GiB).toFixed(2)} GiB in ${putSeconds.toFixed(1)} s = ${(size / 1024 ** 2 / putSeconds).toFixed(0)} MiB/s; tus/PUT time ratio ${(tusSeconds / putSeconds).toFixed(2)}`);
  }
  await api.kill('SIGTERM');
  await s.close();
}

runMain(main);
