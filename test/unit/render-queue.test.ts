import assert from 'node:assert/strict';
import { animationFrames, canonicalImage } from '../../lib/outputs/images';
import { RenderBudget, RenderQueue, RenderRefused } from '../../lib/outputs/renderQueue';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A job that runs until released (or its signal aborts). */
function gate() {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return { release, job: (signal: AbortSignal) => Promise.race([done, new Promise<void>((_, rej) => signal.addEventListener('abort', () => rej(new Error('aborted'))))]) };
}

describe('render queue and budgets (issue 22 item 8)', () => {
  it('anonymous jobs take at most their share of the slots; keyed jobs run beside them', async () => {
    const q = new RenderQueue({ concurrency: 2, anonymousConcurrency: 1, queueMax: 4, timeoutMs: 10_000 });
    const a = gate();
    const b = gate();
    const first = q.run('anonymous', a.job);
    const second = q.run('anonymous', b.job);
    await sleep(10);
    assert.deepEqual(q.stats(), { active: { keyed: 0, anonymous: 1 }, queued: { keyed: 0, anonymous: 1 } });
    let keyedRan = false;
    await q.run('keyed', async () => {
      keyedRan = true;
    });
    assert.ok(keyedRan, 'a keyed job does not wait behind anonymous ones');
    a.release();
    await first;
    b.release();
    await second;
    assert.deepEqual(q.stats(), { active: { keyed: 0, anonymous: 0 }, queued: { keyed: 0, anonymous: 0 } });
  });

  it('a full queue refuses at once with a Retry-After', async () => {
    const q = new RenderQueue({ concurrency: 1, anonymousConcurrency: 1, queueMax: 2, timeoutMs: 10_000 });
    const g = gate();
    const running = [q.run('anonymous', g.job), q.run('anonymous', g.job), q.run('anonymous', g.job)];
    await assert.rejects(q.run('anonymous', g.job), (err: RenderRefused) => err.reason === 'queue_full' && err.retryAfterSeconds >= 1);
    g.release();
    await Promise.all(running);
  });

  it('the time limit runs from the moment a job is queued, not from when it starts', async () => {
    const q = new RenderQueue({ concurrency: 1, anonymousConcurrency: 1, queueMax: 4, timeoutMs: 1000 });
    let release!: () => void;
    // A job that ignores its signal holds the only slot past the waiter's deadline.
    const hog = q.run('anonymous', () => new Promise<void>((r) => (release = r)));
    const t0 = Date.now();
    const out = await q.run('anonymous', async () => 'ran').catch((e: RenderRefused) => e);
    assert.ok(out instanceof RenderRefused && out.reason === 'timeout', String(out));
    assert.ok(Date.now() - t0 < 1800, 'refused about timeoutMs after it was queued');
    assert.equal(q.stats().queued.anonymous, 0, 'it left the queue');
    release();
    await hog;
    const g = gate();
    const stopped = await q.run('anonymous', g.job).catch((e: Error) => e);
    assert.match(String(stopped), /aborted/, 'a running job gets the same deadline through its signal');
  });

  it('budgets: N a window per key, then a refusal until the window ends', () => {
    const b = new RenderBudget(60_000);
    for (let i = 0; i < 3; i++) assert.deepEqual(b.take('a:1', 3, 1000), { ok: true });
    assert.deepEqual(b.take('a:1', 3, 31_000), { ok: false, retryAfterSeconds: 30 });
    assert.deepEqual(b.take('a:2', 3, 31_000), { ok: true }, 'per key');
    assert.deepEqual(b.take('a:1', 3, 61_000), { ok: true }, 'a new window');
  });

  it('rounds parameters (times to 0.1 s, animated widths to 8 px) and counts frames', () => {
    assert.deepEqual(canonicalImage({ kind: 'thumbnail', ext: 'jpg', time: 3.04, fit: 'preserve', width: 101 }, 10), { kind: 'thumbnail', ext: 'jpg', time: 3, fit: 'preserve', width: 101 });
    assert.deepEqual(canonicalImage({ kind: 'thumbnail', ext: 'jpg', time: 9.99, fit: 'preserve' }, 10), { kind: 'thumbnail', ext: 'jpg', time: 9.95, fit: 'preserve' });
    assert.deepEqual(canonicalImage({ kind: 'animated', ext: 'gif', start: 0.96, end: 9.98, width: 203, fps: 10 }, 9.98), { kind: 'animated', ext: 'gif', start: 1, end: 9.98, width: 200, fps: 10 });
    assert.equal(animationFrames({ start: 0.5, end: 0.5, fps: 1 }), 0);
    assert.equal(animationFrames({ start: 0, end: 0.5, fps: 1 }), 0);
    assert.equal(animationFrames({ start: 1, end: 3, fps: 10 }), 20);
  });
});
