import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Child, ExitStatus } from '../../../ops/proc';
import { alive, spawnChild } from '../../../ops/proc';
import { type Clock, Supervisor } from '../../../ops/supervisor';

/** A child the test ends by hand. */
function fakeChild(pid: number) {
  let exit!: (s: ExitStatus) => void;
  const exited = new Promise<ExitStatus>((r) => (exit = r));
  const signals: string[] = [];
  const child: Child = {
    pid,
    exited,
    signal(sig, group) {
      signals.push(`${group ? '-' : ''}${sig}`);
      if (!group && (sig === 'SIGTERM' || sig === 'SIGINT' || sig === 'SIGKILL')) exit({ code: null, signal: sig });
    },
  };
  return { child, die: (s: ExitStatus = { code: null, signal: 'SIGKILL' }) => exit(s), signals };
}

/** Time moves only when the supervisor sleeps; every sleep is recorded. */
function fakeClock(): Clock & { sleeps: number[]; advance(ms: number): void } {
  let now = 0;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    advance: (ms) => void (now += ms),
    async sleep(ms) {
      sleeps.push(ms);
      now += ms;
    },
  };
}

const quiet = () => {
  const lines: string[] = [];
  return { lines, say: (m: string) => void lines.push(m), warn: (m: string) => void lines.push(`warning: ${m}`) };
};

const tick = () => new Promise((r) => setImmediate(r));
async function until(fn: () => boolean, what: string, ms = 5000) {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await tick();
  }
}

describe('ops/supervisor', () => {
  it('restarts a dying child with a backoff that doubles in a crash loop, up to the maximum, and resets after a healthy run', async () => {
    const clock = fakeClock();
    const log = quiet();
    const children: ReturnType<typeof fakeChild>[] = [];
    const sup = new Supervisor({ clock, log, healthyRunMs: 30_000, maxBackoffMs: 8000 });
    await sup.add({ name: 'worker', start: async () => (children.push(fakeChild(100 + children.length)), children[children.length - 1].child) });
    for (let i = 0; i < 5; i++) {
      children[i].die();
      await until(() => children.length === i + 2, `restart ${i + 1}`);
    }
    assert.deepEqual(clock.sleeps, [1000, 2000, 4000, 8000, 8000]);
    assert.match(log.lines.join('\n'), /warning: worker \(pid 100\) died after 0s \(killed by SIGKILL\); restarting in 1s/);
    assert.match(log.lines.join('\n'), /crash loop: 3 deaths, each within 30s of its start; restarting in 4s/);
    assert.match(log.lines.join('\n'), /worker started again \(pid 105\)/);
    // A run longer than healthyRunMs starts the count afresh.
    clock.advance(60_000);
    children[5].die({ code: 1, signal: null });
    await until(() => children.length === 7, 'restart after a healthy run');
    assert.equal(clock.sleeps.at(-1), 1000);
    assert.match(log.lines.at(-2)!, /died after 60s \(exit status 1\); restarting in 1s/);
    await sup.stop();
    assert.ok(children[6].signals.includes('SIGTERM'));
  });

  it('a start that fails counts as a death: backed off and tried again', async () => {
    const clock = fakeClock();
    const log = quiet();
    let starts = 0;
    const c = fakeChild(7);
    const sup = new Supervisor({ clock, log });
    await sup.add({
      name: 'Temporal dev server',
      async start() {
        starts += 1;
        if (starts === 1) return c.child;
        if (starts < 4) throw new Error('not healthy within 60s');
        return fakeChild(8).child;
      },
    });
    c.die();
    await until(() => starts === 4, 'fourth start');
    await until(() => log.lines.some((l) => /started again \(pid 8\)/.test(l)), 'started again');
    assert.deepEqual(clock.sleeps, [1000, 2000, 4000]);
    assert.match(log.lines.join('\n'), /could not start again: not healthy within 60s/);
    await sup.stop();
  });

  it('stop ends every child, newest first, with its own stop signal, and nothing restarts after it', async () => {
    const log = quiet();
    const order: string[] = [];
    const make = (name: string, pid: number, stopSignal?: NodeJS.Signals) => {
      const f = fakeChild(pid);
      const signal = f.child.signal;
      f.child.signal = (sig, group) => {
        if (!group) order.push(`${name}:${sig}`);
        signal(sig, group);
      };
      return { name, stopSignal, start: async () => f.child };
    };
    const sup = new Supervisor({ log });
    await sup.add(make('PostgreSQL', 1, 'SIGINT'));
    await sup.add(make('Temporal dev server', 2));
    await sup.add(make('worker', 3));
    await sup.add(make('API', 4));
    await sup.stop();
    await sup.done;
    assert.deepEqual(order, ['API:SIGTERM', 'worker:SIGTERM', 'Temporal dev server:SIGTERM', 'PostgreSQL:SIGINT']);
    assert.ok(!log.lines.some((l) => /restarting/.test(l)), log.lines.join('\n'));
  });

  it('kills the process group of a child that ignores its stop signal', async () => {
    const log = quiet();
    const sup = new Supervisor({ log });
    let pid = 0;
    await sup.add({
      name: 'stubborn',
      stopTimeoutMs: 300,
      start: async () => {
        const c = spawnChild('bash', ['-c', 'trap "" TERM; sleep 30 & wait; sleep 30']);
        pid = c.pid;
        return c;
      },
    });
    await new Promise((r) => setTimeout(r, 200));
    await sup.stop();
    assert.ok(!alive(pid));
    assert.match(log.lines.join('\n'), /stubborn did not stop within 0.3s, killing it/);
  });

  it('scripts/start-like process: SIGTERM or SIGINT from a parent stops every real child (none left in their groups)', async function () {
    this.timeout(30_000);
    for (const sig of ['SIGTERM', 'SIGINT'] as const) {
      // Started in the background of a non-interactive bash, which ignores SIGINT for it: node resets that.
      const script = path.join(__dirname, 'supervised.fixture.ts');
      const parent = spawn('bash', ['-c', `node --import tsx "$1" & echo $!; wait $!`, 'p', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      parent.stdout!.on('data', (d) => (out += d));
      await until(() => /children (\d+) (\d+)/.test(out), 'children started', 20_000);
      const [main, a, b] = [Number(out.split('\n')[0]), ...(/children (\d+) (\d+)/.exec(out)!.slice(1).map(Number))];
      assert.ok(alive(a) && alive(b));
      process.kill(main, sig);
      await new Promise((r) => parent.once('exit', r));
      await until(() => !alive(a) && !alive(b) && !alive(main), `all gone after ${sig}`, 10_000);
      assert.match(out, new RegExp(`stopped after ${sig}`));
    }
  });
});
