import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { uploadFormA, waitForVideo } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';

const root = path.resolve(__dirname, '..', '..');
const run = promisify(execFile);

/** bin/replay as an engineer runs it, against the run's Temporal server. */
async function replay(s: Stack, ...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', path.join(root, 'bin', 'replay.ts'), ...args], {
      cwd: root,
      env: { ...process.env, TEMPORAL_ADDRESS: s.env.TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE: s.config.temporal.namespace },
      timeout: 120_000,
    });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('bin/replay', function () {
  this.timeout(300_000);
  let s: Stack;
  let id: string;

  before(async () => {
    s = await startStack();
    const clip = await makeClip({ width: 320, height: 180, seconds: 2 });
    ({ id } = await uploadFormA(s, clip));
    await waitForVideo(s, id, (v) => v.status === 'ready');
  });

  it('replays a live video history on the current code (by vid_ id or workflow id)', async () => {
    const uuid = (await s.get(`/v1/videos/${id}`)).body.uuid as string;
    // Both forms in one run (the code is bundled once): each is reported.
    const r = await replay(s, id, `video-${uuid}`);
    assert.equal(r.code, 0, r.out);
    assert.equal(r.out.match(new RegExp(`ok: video-${uuid} replays`, 'g'))?.length, 2, r.out);
  });

  it('reports a non-deterministic change and exits 1', async () => {
    const r = await replay(s, id, '--workflows', path.join(root, 'test', 'replay', 'nondeterministic.ts'));
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /NONDETERMINISM: video-[0-9a-f-]{36} does not replay/);
  });
});
