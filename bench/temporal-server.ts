/**
 * What the test suite's Temporal dev server (test/support/services.ts startTemporal, one per
 * mocha process) spends CPU on. Starts it as the tests do, then measures its CPU (utime+stime
 * from /proc) over `--seconds` in phases: alone; with `--stacks` idle test stacks
 * (startStack's in-process workers on their own queues); with one uploaded video's workflow
 * queried (queryVideoState, as a read of a working video does) every 300 ms and every 50 ms.
 *   npx tsx bench/temporal-server.ts --seconds 30 --stacks 5
 * The machine may be shared: the figures are CPU seconds of the server process, not wall time.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { parseVideoId } from '../lib/ids';
import { queryVideoState } from '../lib/videos/workflow';
import { isStatus, uploadFormA, waitForVideo } from '../test/support/flow';
import { mochaHooks, temporalEnv } from '../test/support/hooks';
import { makeClip } from '../test/support/media';
import { startStack, type Stack } from '../test/support/stack';
import { arg } from './args';

const seconds = arg('seconds', 30);
const stacks = arg('stacks', 5);

const ticks = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** CPU seconds (user + system) a process has used so far. */
function cpuOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / ticks;
}

/** The dev server: this process's child named `temporal`. */
function serverPid(): number {
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (comm === 'temporal' && ppid === process.pid) return Number(d);
    } catch {
      // gone
    }
  }
  throw new Error('no temporal child process');
}

async function phase(name: string, pid: number, during?: () => Promise<void>, count?: () => string): Promise<void> {
  const s0 = cpuOf(pid);
  const m0 = process.cpuUsage();
  const t0 = Date.now();
  const end = t0 + seconds * 1000;
  let stop = false;
  const load = during
    ? (async () => {
        while (!stop) await during();
      })()
    : Promise.resolve();
  await new Promise((r) => setTimeout(r, end - Date.now()));
  stop = true;
  await load;
  const server = cpuOf(pid) - s0;
  const m = process.cpuUsage(m0);
  const wall = (Date.now() - t0) / 1000;
  console.log(
    `${name.padEnd(44)} server ${server.toFixed(2)} CPU s (${((server / wall) * 100).toFixed(1)} % of a core over ${wall.toFixed(0)} s); this process ${((m.user + m.system) / 1e6).toFixed(2)} s${count ? `; ${count()}` : ''}`,
  );
}

async function main(): Promise<void> {
  await temporalEnv();
  const pid = serverPid();
  console.log(`dev server pid ${pid}; ${seconds} s a phase`);
  await new Promise((r) => setTimeout(r, 3000));
  await phase('alone', pid);
  const open: Stack[] = [];
  for (let i = 0; i < stacks; i++) open.push(await startStack());
  await new Promise((r) => setTimeout(r, 3000));
  await phase(`${stacks} idle stacks`, pid);
  const s = open[open.length - 1];
  const clip = await makeClip({ width: 640, height: 360, seconds: 3 });
  let id = '';
  let videos = 0;
  await phase(`  + videos uploaded one after another, reads every 300 ms`, pid, async () => {
    ({ id } = await uploadFormA(s, clip));
    await waitForVideo(s, id, isStatus('ready'));
    videos++;
  }, () => `${videos} videos`);
  const uuid = parseVideoId(id)!;
  await new Promise((r) => setTimeout(r, 3000));
  await phase(`${stacks} idle stacks, a video ready (idle run)`, pid);
  for (const every of [300, 50]) {
    let queries = 0;
    await phase(`  + its workflow queried every ${every} ms`, pid, async () => {
      await queryVideoState(s.temporal, uuid);
      queries++;
      await new Promise((r) => setTimeout(r, every));
    }, () => `${queries} queries`);
  }
  await mochaHooks.afterAll.call({ timeout() {} } as never);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
