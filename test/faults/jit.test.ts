import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { keys } from '../../lib/storage';
import { loopedClip, makeClip } from '../support/media';
import { sleep, upload, waitVideo } from './flow';
import { startFaultStack, type FaultStack, type Proc } from './stack';

const run = promisify(execFile);

/** Every live process below `root` (its children's children included), by pid, with its command name. */
function descendants(root: number): Array<{ pid: number; comm: string }> {
  const parent = new Map<number, { ppid: number; comm: string }>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    // "pid (comm) state ppid ...": comm may hold spaces, so split after its closing parenthesis.
    const close = stat.lastIndexOf(')');
    parent.set(Number(name), { ppid: Number(stat.slice(close + 2).split(' ')[1]), comm: stat.slice(stat.indexOf('(') + 1, close) });
  }
  const out: Array<{ pid: number; comm: string }> = [];
  for (const [pid, p] of parent) {
    for (let up = p.ppid, hops = 0; up > 1 && hops < 20; up = parent.get(up)?.ppid ?? 0, hops++) {
      if (up === root) {
        out.push({ pid, comm: p.comm });
        break;
      }
    }
  }
  return out;
}

/** Until `api` runs an ffmpeg (its cut, in its sandbox): the moment to kill it "mid-cut". */
async function cutInFlight(api: Proc, timeoutMs = 60_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ff = descendants(api.child.pid!).find((p) => p.comm === 'ffmpeg');
    if (ff) return ff.pid;
    await sleep(5);
  }
  throw new Error(`${api.name} ran no ffmpeg in ${timeoutMs} ms`);
}

const cutLines = (p: Proc, key: string) => p.output().split('\n').filter((l) => l.includes('"jit: segment cut"') && l.includes(key)).length;

/** Every file under `dir` whose name says it is unfinished (a storage temp file or a cut's temp dir). */
function leftovers(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (/\.part$|^vidhost-jit-/.test(e.name)) out.push(p);
      else if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out;
}

async function probeSegment(body: Buffer) {
  const file = path.join(os.tmpdir(), `vidhost-faults-jit-${process.pid}-${Date.now()}.ts`);
  fs.writeFileSync(file, body);
  try {
    const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name,width,height,start_time,duration:packet=flags', '-of', 'json', file]);
    return JSON.parse(stdout) as { streams: Array<Record<string, string | number>>; packets: Array<{ flags: string }> };
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/**
 * SPEC §23 faults: the API process that cuts a just-in-time segment (the cuts run in the API, not
 * in a worker: lib/playback/jit.ts) is SIGKILLed while its ffmpeg runs. Another API waiting on the
 * same segment's lock takes over and cuts it once; the killed API's player retries against a fresh
 * process and gets the stored segment; storage holds that one object and nothing half-written.
 */
describe('faults: API SIGKILL mid-cut (just-in-time segments)', function () {
  this.timeout(600_000);
  let s: FaultStack;
  let tmp: string;
  /** Set by the first test: the video, its `240p` folder in storage, the API that is left. */
  let video: Record<string, any> | undefined;
  let prefix = '';
  let api: (Proc & { url: string }) | undefined;

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-faults-jit-tmp-'));
    // Both APIs' temp dirs in one place, to look for what a killed cut left; `info` for the cut log
    // lines; heartbeats as the other stacks' (a 1080p HEVC source on a loaded machine beats slower than 3 s).
    s = await startFaultStack({ apis: 2, env: { TMPDIR: tmp, LOG_LEVEL: 'info', JIT_CUT_TIMEOUT_MS: '120000', TRANSCODE_HEARTBEAT_TIMEOUT_MS: '30000' } });
  });

  after(async () => {
    await s?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('a cut killed with its API: the other API cuts it once, the retry gets it, nothing partial is left', async () => {
    // 1080p HEVC: each segment is a 2 s 1080p decode and an x264 encode of the lowest rung, long
    // enough (hundreds of ms, seconds on a loaded machine) to be caught while ffmpeg runs.
    // One 2 s GOP looped 30 times: the same 60 s source with a keyframe every 2 s, made in a fifth
    // of the x265 time (encoding 10 s of 1080p took ~13 CPU s, most of what this file cost).
    const clip = await makeClip({ width: 1920, height: 1080, seconds: 2, gop: 48, codec: 'hevc', videoBitrate: 4_000_000 });
    const id = await upload(s, await loopedClip(clip, 30));
    const v = await waitVideo(s, id, (x) => x.status === 'ready', 240_000);
    video = v;
    // The ladder behind `ready` is not what this test is about: the worker stops (it never cuts segments).
    await Promise.all(s.workers.map((w) => w.kill('SIGKILL')));

    const master = await (await fetch(v.hls_url)).text();
    // Issue 47: its rungs up to 1080p are encoded on request; the lowest (240p) is cut here.
    assert.match(master, /^240p\/index\.m3u8$/m, 'the variant is cut (encoded) on request');
    const name = 'seg_00020.ts';
    prefix = path.join(s.env.DATA_DIR, 'storage', keys.rendition(v.workspace_id, v.uuid, '240p'));
    const [a, b] = s.apis;
    const urlOf = (to: { url: string }) => new URL(`240p/${name}`, v.hls_url.replace(s.apis[0].url, to.url));

    // The player asks API A; its ffmpeg starts.
    const first = fetch(urlOf(a)).then(
      (r) => ({ status: r.status }),
      (err: Error) => ({ error: err.message }),
    );
    const ffmpeg = await cutInFlight(a);
    // A second viewer asks API B for the same segment: B waits on the segment's lock, which A holds.
    const second = fetch(urlOf(b)).then(async (r) => ({ status: r.status, body: Buffer.from(await r.arrayBuffer()) }));
    const waiting = async () => Number((await s.db.raw("select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted")).rows[0].n);
    for (const until = Date.now() + 30_000; (await waiting()) === 0; ) {
      if (Date.now() > until) throw new Error('API B never waited on the lock');
      await sleep(20);
    }
    assert.ok(fs.existsSync(`/proc/${ffmpeg}`), "A's cut is still running when it is killed");
    assert.equal(fs.existsSync(prefix + name), false, 'nothing stored before the kill');

    await a.kill('SIGKILL');
    const killed = await first;
    assert.ok('error' in killed, `the killed API's player got no answer: ${JSON.stringify(killed)}`);
    // The killed cut's ffmpeg went with it (its sandbox dies with its parent).
    for (const until = Date.now() + 10_000; fs.existsSync(`/proc/${ffmpeg}`); ) {
      if (Date.now() > until) throw new Error(`the killed API's ffmpeg ${ffmpeg} still runs`);
      await sleep(50);
    }

    // B takes the lock once A's connection is gone, cuts, answers.
    const got = await second;
    assert.equal(got.status, 200);
    const probe = await probeSegment(got.body);
    assert.equal(probe.streams.length, 1);
    assert.equal(probe.streams[0].codec_name, 'h264');
    // On the source's timeline (+ the muxer's 1.4 s, within the frame x264's 1/fps time base rounds
    // to): where the playlist puts segment 20.
    const playlist = await (await fetch(new URL('240p/index.m3u8', v.hls_url.replace(s.apis[0].url, b.url)))).text();
    const startOf20 = [...playlist.matchAll(/#EXTINF:([0-9.]+)/g)].slice(0, 20).reduce((t, m) => t + Number(m[1]), 0);
    const start = Number(probe.streams[0].start_time);
    assert.ok(Math.abs(start - (startOf20 + 1.4)) <= 1 / 24 + 0.001, `segment 20 starts at ${start} s, the playlist says ${startOf20} s`);
    assert.equal(probe.packets[0].flags[0], 'K', 'starts on a keyframe');
    const first20 = fs.statSync(prefix + name);

    // The killed API's player retries against a fresh process on the same port: the stored segment, not a new cut.
    const restarted = await s.startApi(a.port);
    const retry = await fetch(urlOf(restarted));
    assert.equal(retry.status, 200);
    assert.ok(Buffer.from(await retry.arrayBuffer()).equals(got.body), 'the retry gets the same bytes');

    // Cut once: one cut line in all three processes' logs, and the object never rewritten.
    const key = `hls/240p/${name}`;
    assert.deepEqual([cutLines(a, key), cutLines(b, key), cutLines(restarted, key)], [0, 1, 0]);
    const after = fs.statSync(prefix + name);
    assert.deepEqual([after.ino, after.mtimeMs], [first20.ino, first20.mtimeMs]);

    // Storage: the playlist, the plan, segment 20 and what B encoded ahead of it (21, 22, and on
    // to the next segment that starts at a source keyframe: with this stack's 1 s segments and the
    // source's 2 s GOPs, every other one starts between keyframes), once each, every one a whole
    // segment; nothing half-written: no storage temp file, and the killed cut's temp dir (its
    // partial segment) removed by the restarted API, which found its process gone.
    const midGop: number[] = JSON.parse(fs.readFileSync(prefix + 'jit.json', 'utf8')).midGop ?? [];
    let ahead = 22;
    while (midGop.includes(ahead + 1) && ahead < 25) ahead++;
    const expected = ['index.m3u8', 'jit.json', ...Array.from({ length: ahead - 19 }, (_, i) => `seg_000${20 + i}.ts`)];
    const stored = () => fs.readdirSync(prefix).filter((f) => !f.endsWith('.meta')).sort();
    const settled = () => JSON.stringify(stored()) === JSON.stringify(expected) && leftovers(tmp).length === 0;
    for (const until = Date.now() + 120_000; !settled() && Date.now() < until; ) await sleep(200);
    assert.deepEqual(stored(), expected);
    for (const f of expected.filter((x) => x.endsWith('.ts'))) assert.equal((await probeSegment(fs.readFileSync(prefix + f))).streams[0].codec_name, 'h264', f);
    assert.deepEqual([...leftovers(prefix), ...leftovers(tmp)], []);
    api = restarted;
  });

  it('a seek cancels the look-ahead cuts behind it, which leave nothing', async function () {
    if (!video || !api) this.skip();
    const segment = (n: number) => `seg_${String(n).padStart(5, '0')}.ts`;
    const get = (n: number) => fetch(new URL(`240p/${segment(n)}`, video!.hls_url.replace(s.apis[0].url, api!.url)));
    // Segment 40 asked: 41 and 42 are encoded ahead at once; the viewer seeks back to 10 right away.
    assert.equal((await get(40)).status, 200);
    const seek = await get(10);
    assert.equal(seek.status, 200);
    assert.equal((await probeSegment(Buffer.from(await seek.arrayBuffer()))).streams[0].codec_name, 'h264');
    const cancelled = (n: number) => api!.output().split('\n').some((l) => l.includes('"jit: look-ahead cancelled"') && l.includes(segment(n)));
    // Each of 41 and 42 was either finished before the seek (cut and stored) or cancelled (nothing stored).
    for (const until = Date.now() + 60_000; leftovers(tmp).length > 0 && Date.now() < until; ) await sleep(100);
    const outcome = [41, 42].map((n) => ({ n, cut: cutLines(api!, segment(n)), cancelled: cancelled(n), stored: fs.existsSync(prefix + segment(n)) }));
    for (const o of outcome) assert.ok((o.cut === 1 && !o.cancelled && o.stored) || (o.cut === 0 && o.cancelled && !o.stored), JSON.stringify(o));
    assert.ok(outcome.some((o) => o.cancelled), `a 1080p HEVC segment takes longer than a request: ${JSON.stringify(outcome)}`);
    assert.deepEqual([...leftovers(prefix), ...leftovers(tmp)], []);
  });
});
