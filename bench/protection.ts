/**
 * What playback protection (SPEC §20) costs on the CDN's hot paths, as a ratio to the same
 * unprotected route measured just before it in the same run (goal ≥ 0.8×): a restricted video's
 * segment (Referer checked on every request), an encrypted video's segment and playlist, a
 * capped token's master playlist, and a token bound to an address; and on `/cdn/live/` a
 * restricted and an encrypted broadcast's segment against an unprotected broadcast's, while three
 * ffmpeg pushes are on air. The API measured is its own process (api/server.ts); the load
 * generator (autocannon) is another child process.
 *
 *   npm run bench:protection -- --seconds 5 --connections 50
 *
 * Needs what the tests need: Postgres, the Temporal CLI (built by ./scripts/test).
 */
import { randomBytes } from 'node:crypto';
import { allRenditionsReady, uploadFormA, waitForVideo } from '../test/support/flow';
import { spawnApi } from '../test/support/child';
import { makeClip } from '../test/support/media';
import { freePort } from '../test/support/services';
import type { Stack } from '../test/support/stack';
import { pushRtmp, startLiveStack, waitFor } from '../test/live/helpers';
import { encryptedSegment } from '../lib/protection/enforce';
import { cappedMaster, encryptedMediaPlaylist } from '../lib/protection/hls';
import { compileRestriction, viewerAllowed } from '../lib/protection/restriction';
import { runMain } from '../test/support/main';
import { arg } from './args';
import { autocannon, type Load, type Result } from './autocannon';



const seconds = arg('seconds', 5);
const connections = arg('connections', 50);

const load = (l: Load): Promise<Result> => autocannon(l, { connections, seconds });

/** A broadcast of `ls` on air: its first rung's first segment path (`<rung>/seg_…ts`). */
async function liveSegment(s: Stack, ls: { id: string }, headers: Record<string, string> = {}): Promise<string> {
  await waitFor('active', async () => (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body.status === 'active', 120_000);
  const get = async (file: string) => {
    const r = await fetch(`${s.url}/cdn/live/${ls.id}/${file}`, { headers });
    return r.status === 200 ? r.text() : '';
  };
  const rung = await waitFor('a live rung', async () => /^([a-z0-9]+)\/index\.m3u8$/m.exec(await get('master.m3u8'))?.[1], 60_000);
  const seg = await waitFor('a live segment', async () => /^(seg_\d{6}\.ts)$/m.exec(await get(`${rung}/index.m3u8`))?.[1], 60_000);
  return `${rung}/${seg}`;
}

async function readyVideo(s: Stack, clip: string): Promise<{ id: string; rung: string }> {
  const { id } = await uploadFormA(s, clip, { extra: { visibility: 'public' } });
  const v = await waitForVideo(s, id, allRenditionsReady, 300_000);
  return { id, rung: v.renditions[0].name as string };
}

/** µs per call of the work protection adds to a request, in this process: what the HTTP ratios cost in CPU, less noisy than they are on a busy machine. */
function micro(segmentBytes: Buffer, playlist: string, master: string): Array<[string, number]> {
  const time = (fn: () => unknown, n: number) => {
    for (let i = 0; i < Math.min(n, 1000); i++) fn();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn();
    return Number(process.hrtime.bigint() - t0) / 1000 / n;
  };
  const r = compileRestriction({ id: 'pr_x', allowed_domains: ['*.example.com', 'example.org', 'example.net:8443'], allow_no_referrer: false });
  const self = new Set(['https://video.example.net']);
  const key = randomBytes(16);
  const held = Buffer.from(segmentBytes);
  return [
    ['Referer check (parse + match)', time(() => viewerAllowed(r, { referer: 'https://www.example.com/watch?v=1' }, self), 200_000)],
    [`AES-128 of a ${segmentBytes.length.toLocaleString('en')}-byte segment (not cached)`, time(() => encryptedSegment(key, '240p', 'seg_00000.ts', segmentBytes, false), 200)],
    ['AES-128 segment held by the file cache (cached ciphertext)', time(() => encryptedSegment(key, '240p', 'seg_00000.ts', held, true), 200_000)],
    ['rendition playlist: EXT-X-KEY lines', time(() => encryptedMediaPlaylist(playlist, 'https://cdn/v/t/key', key, '240p'), 5_000)],
    ['master playlist: max_resolution cap', time(() => cappedMaster(master, 240), 50_000)],
  ];
}

async function main(): Promise<void> {
  const clip = await makeClip({ width: 426, height: 240, seconds: 6 });
  const env = { LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000000', TRANSCODE_HEARTBEAT_TIMEOUT_MS: '120000' };
  const s = await startLiveStack({ env });
  const pr = await s.post('/v1/playback-restrictions', { referrer: { allowed_domains: ['*.example.com', 'example.org', 'example.net:8443'], allow_no_referrer: false } }).expect(201);
  // Three broadcasts on air for the whole run (320x240: the source passes through, no live encode).
  const stream = async (body: Record<string, unknown>) => (await s.post('/v1/live-streams', { reconnect_window: 2, ...body }).expect(201)).body;
  const [livePlain, liveRestricted, liveEncrypted] = await Promise.all([stream({}), stream({ playback_restriction_id: pr.body.id }), stream({ encryption: 'aes-128' })]);
  const pushes = [livePlain, liveRestricted, liveEncrypted].map((ls) => pushRtmp(`${s.rtmpBase}/${ls.stream_key}`, { seconds: 3600 }));
  process.stdout.write('transcoding three 6 s 240p clips, three broadcasts on air... ');
  const [plain, restricted, encrypted] = await Promise.all([readyVideo(s, clip), readyVideo(s, clip), readyVideo(s, clip)]);
  console.log('ready');
  await s.patch(`/v1/videos/${restricted.id}`, { playback_restriction_id: pr.body.id }).expect(200);
  await s.patch(`/v1/videos/${encrypted.id}`, { encryption: 'aes-128' }).expect(200);
  const token = async (id: string, q = '') => (await s.get(`/v1/playback/${id}?ttl=86400${q}`).expect(200)).body.token as string;
  const [plainT, encT, cappedT, ipT] = await Promise.all([token(plain.id), token(encrypted.id), token(plain.id, '&max_resolution=240p'), token(plain.id, '&ip=127.0.0.0/8')]);

  const referer = { Referer: 'https://www.example.com/watch' };
  const [livePlainSeg, liveRestrictedSeg, liveEncryptedSeg] = await Promise.all([liveSegment(s, livePlain), liveSegment(s, liveRestricted, referer), liveSegment(s, liveEncrypted)]);
  const bytes = async (u: string, headers: Record<string, string> = {}) => (await (await fetch(u, { headers })).arrayBuffer()).byteLength;
  console.log(`live segments: unprotected ${await bytes(`${s.url}/cdn/live/${livePlain.id}/${livePlainSeg}`)} B, restricted ${await bytes(`${s.url}/cdn/live/${liveRestricted.id}/${liveRestrictedSeg}`, referer)} B, encrypted ${await bytes(`${s.url}/cdn/live/${liveEncrypted.id}/${liveEncryptedSeg}`)} B`);
  const liveToken = async (id: string) => (await s.get(`/v1/playback/${id}?ttl=86400`).expect(200)).body.token as string;
  const [livePlainT, liveEncT] = await Promise.all([liveToken(livePlain.id), liveToken(liveEncrypted.id)]);

  const text = async (u: string) => (await fetch(u)).text();
  const segBytes = Buffer.from(await (await fetch(`${s.url}/cdn/v/${plain.id}/${plain.rung}/seg_00000.ts`)).arrayBuffer());
  const microRows = micro(segBytes, await text(`${s.url}/cdn/v/${plain.id}/${plain.rung}/index.m3u8`), await text(`${s.url}/cdn/v/${plain.id}/master.m3u8`));

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const api = await spawnApi({ ...s.env, ...env, PORT: String(port), PUBLIC_BASE_URL: base });
  const v = (subject: string, file: string) => `${base}/cdn/v/${subject}/${file}`;
  const live = (subject: string, file: string) => `${base}/cdn/live/${subject}/${file}`;
  const seg = (x: { rung: string }) => `${x.rung}/seg_00000.ts`;

  // [what, unprotected route, the protected route]
  const pairs: Array<[string, Load, Load]> = [
    ['segment, restricted (Referer checked)', { url: v(plain.id, seg(plain)) }, { url: v(restricted.id, seg(restricted)), headers: referer }],
    ['segment, AES-128 (token)', { url: v(plainT, seg(plain)) }, { url: v(encT, seg(encrypted)) }],
    ['rendition playlist, AES-128 (token)', { url: v(plainT, `${plain.rung}/index.m3u8`) }, { url: v(encT, `${encrypted.rung}/index.m3u8`) }],
    ['master playlist, max_resolution token', { url: v(plainT, 'master.m3u8') }, { url: v(cappedT, 'master.m3u8') }],
    ['segment, ip-bound token (Koa route)', { url: v(plainT, seg(plain)) }, { url: v(ipT, seg(plain)) }],
    // Live segments are read from storage on every request (no file cache) and, encrypted, ciphered each time.
    ['live segment, restricted (Referer checked)', { url: live(livePlain.id, livePlainSeg) }, { url: live(liveRestricted.id, liveRestrictedSeg), headers: referer }],
    ['live segment, AES-128 (token)', { url: live(livePlainT, livePlainSeg) }, { url: live(liveEncT, liveEncryptedSeg) }],
  ];
  const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : '';
  const rows: Array<{ what: string; base: Result; prot: Result }> = [];
  for (const [what, b, p] of pairs.filter(([w]) => w.includes(only))) {
    process.stdout.write(`${what}... `);
    // One request each first: the decisions, files and key are in memory, as on a warm CDN origin.
    for (const l of [b, p]) {
      const r = await fetch(l.url, { headers: l.headers });
      if (r.status !== 200) throw new Error(`${l.url} answered ${r.status}`);
    }
    const br = await load(b);
    const pr2 = await load(p);
    console.log(`${Math.round(pr2.rps)} vs ${Math.round(br.rps)} req/s`);
    rows.push({ what, base: br, prot: pr2 });
  }
  const n = (x: number) => Math.round(x).toLocaleString('en');
  console.log('');
  console.log(`autocannon: ${connections} connections, ${seconds} s a route; each protected route right after its unprotected twin`);
  console.log('| route | unprotected req/s | protected req/s | ratio | p99 unprotected / protected | non-2xx/errors |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.what} | ${n(r.base.rps)} | ${n(r.prot.rps)} | ${(r.prot.rps / r.base.rps).toFixed(2)}x | ${r.base.p99} / ${r.prot.p99} ms | ${r.base.non2xx + r.prot.non2xx}/${r.base.errors + r.prot.errors} |`,
    );
  }
  console.log('');
  console.log('CPU per call of the added work (µs, this process):');
  for (const [what, us] of microRows) console.log(`| ${what} | ${us.toFixed(us < 10 ? 2 : 0)} µs |`);
  await api.kill();
  for (const p of pushes) p.stop();
  await Promise.all(pushes.map((p) => p.done));
  await s.close();
}

runMain(main);
