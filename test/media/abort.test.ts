import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_LIMITS } from '../../lib/media/limits';
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
});
