import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stoppedOrGone } from '../../lib/media/autogroup';
import { DEFAULT_LIMITS } from '../../lib/media/limits';
import { runFfmpeg } from '../../lib/media/run';
import { createMediaTools } from '../../lib/media/tools';
import { makeClip } from '../support/media';

/** bwrap processes whose command line names `marker`. */
function bwrapsNaming(marker: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        return fs.readFileSync(`/proc/${n}/comm`, 'utf8').trim() === 'bwrap' && fs.readFileSync(`/proc/${n}/cmdline`, 'utf8').includes(marker);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/**
 * A sandboxed ffmpeg aborted right after its spawn (a just-in-time look-ahead cancelled by a seek,
 * a cut's time limit): the run settles, and no part of the sandbox is left. Before, killing only
 * the spawned process during bwrap's setup left bwrap's inner process sleeping forever with our
 * stdout/stderr, so the run never settled (11 of 30 runs here) and its segment stayed blocked.
 */
describe('an aborted sandboxed ffmpeg leaves nothing running', function () {
  this.timeout(180_000);

  it('settles every run aborted during the sandbox setup and leaves no bwrap', async function () {
    const tools = createMediaTools({ ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe', sandbox: 'auto', formatCheck: true, limits: DEFAULT_LIMITS, nice: 10 });
    if ((await tools.sandboxMode()) !== 'bwrap') this.skip();
    // A copy of its own: bwraps are found by the file they name, and the cached clip is also what
    // other tests (another shard's, at the same moment) sandbox; counting and killing theirs
    // failed this test and killed theirs.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-abort-'));
    const clip = path.join(dir, 'own.mp4');
    fs.copyFileSync(await makeClip({ width: 320, height: 240, seconds: 4 }), clip);
    const input = await tools.open(clip);
    let hung = 0;
    for (let i = 0; i < 30; i++) {
      const stop = new AbortController();
      const delay = i % 10;
      const job = tools
        .ffmpeg(['-re', ...input.inputArgs, '-i', input.path, '-f', 'null', '-'], input, {
          durationSeconds: 4,
          signal: stop.signal,
          onSpawn: () => (delay === 0 ? stop.abort() : setTimeout(() => stop.abort(), delay)),
        })
        .then(
          () => 'finished',
          () => 'aborted',
        );
      // A run that never settles hangs for good; 10 s tells it from a slow one on a loaded machine.
      const outcome = await Promise.race([job, new Promise((r) => setTimeout(() => r('hung'), 10_000))]);
      if (outcome === 'hung') hung++;
    }
    const left = bwrapsNaming(clip);
    for (const pid of left) process.kill(pid, 'SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
    assert.deepEqual({ hung, left: left.length }, { hung: 0, left: 0 });
  });

  it('settles a killed run even when a process it started still holds its pipes', async () => {
    // A stand-in for a sandbox part the kill could not reach (a bwrap inner process orphaned
    // mid-setup, as one was under three shards' load): a background child keeps stdout and
    // stderr open after the tool itself is killed, so 'close' never comes on its own.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-holder-'));
    const marker = `${60 + Math.random()}`.slice(0, 10);
    const tool = path.join(dir, 'holder.sh');
    fs.writeFileSync(tool, `#!/bin/sh\nsleep ${marker} &\nexec sleep ${marker}\n`, { mode: 0o755 });
    const started = Date.now();
    try {
      await assert.rejects(runFfmpeg([], { ffmpegPath: tool, timeoutMs: 300 }), /wall-time limit/);
      assert.ok(Date.now() - started < 15_000, `settled after ${Date.now() - started} ms`);
    } finally {
      for (const n of fs.readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
        try {
          if (fs.readFileSync(`/proc/${n}/cmdline`, 'utf8').includes(marker)) process.kill(Number(n), 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('tells a stopped process from a running one (the tree is listed only once the stop holds)', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn('sleep', ['30']);
    try {
      await new Promise((r) => child.once('spawn', r));
      assert.equal(stoppedOrGone(child.pid!), false, 'running');
      process.kill(child.pid!, 'SIGSTOP');
      const deadline = Date.now() + 2000;
      while (!stoppedOrGone(child.pid!) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      assert.equal(stoppedOrGone(child.pid!), true, 'stopped');
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
    assert.equal(stoppedOrGone(child.pid!), true, 'gone');
  });
});
