import assert from 'node:assert/strict';
import fs from 'node:fs';
import { DEFAULT_LIMITS } from '../../lib/media/limits';
import { withMediaClass } from '../../lib/media/schedule';
import { createMediaTools } from '../../lib/media/tools';
import { makeClip } from '../support/media';

/** ffmpeg processes below `root`, from /proc (`children` lists, breadth first). */
function ffmpegsBelow(root: number): number[] {
  const out: number[] = [];
  const queue = [root];
  while (queue.length) {
    const p = queue.shift()!;
    let kids: number[] = [];
    try {
      kids = fs.readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
    } catch {
      /* gone */
    }
    for (const c of kids) {
      queue.push(c);
      try {
        if (fs.readFileSync(`/proc/${c}/comm`, 'utf8').trim() === 'ffmpeg') out.push(c);
      } catch {
        /* gone */
      }
    }
  }
  return out;
}

/**
 * MEDIA_FFMPEG_NICE must hold for the long encodes behind `ready` where the kernel schedules by
 * autogroup: bwrap's --new-session gives each sandboxed ffmpeg an autogroup of its own at nice 0,
 * where a plain `nice -n 10` weighs nothing against other sessions (a seek's just-in-time cut
 * then shared the CPU equally with every chunk encode of the ladder).
 */
describe('ffmpeg niceness under autogroup scheduling (bwrap sandbox)', function () {
  this.timeout(120_000);

  it("a background encode's sandbox autogroup carries the run's niceness; a cut's stays at 0", async function () {
    const on = fs.existsSync('/proc/sys/kernel/sched_autogroup_enabled') && fs.readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim() === '1';
    const tools = createMediaTools({ ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe', sandbox: 'auto', formatCheck: true, limits: DEFAULT_LIMITS, nice: 10 });
    if (!on || (await tools.sandboxMode()) !== 'bwrap') this.skip();
    const clip = await makeClip({ width: 320, height: 240, seconds: 4 });
    const input = await tools.open(clip);
    let spawned = 0;
    const seen: string[] = [];
    // -re: four seconds of wall time, long enough to look at the running process.
    const job = tools.ffmpeg(['-re', ...input.inputArgs, '-i', input.path, '-f', 'null', '-'], input, { durationSeconds: 4, background: true, onSpawn: (pid) => (spawned = pid) });
    const deadline = Date.now() + 3000;
    while (Date.now() < deadline && seen.length === 0) {
      await new Promise((r) => setTimeout(r, 50));
      if (!spawned) continue;
      for (const pid of ffmpegsBelow(spawned)) {
        const group = fs.readFileSync(`/proc/${pid}/autogroup`, 'utf8').trim();
        // Set a moment after the spawn: read until it is (or the deadline).
        if (/ nice 10$/.test(group)) seen.push(group);
      }
    }
    await job;
    assert.equal(seen.length > 0, true, 'the sandboxed ffmpeg ran in an autogroup at nice 10');
    const mine = fs.readFileSync('/proc/self/autogroup', 'utf8').trim();
    assert.notEqual(seen[0].split(' ')[0], mine.split(' ')[0], 'its own autogroup (bwrap --new-session), not the test\'s');

    // A just-in-time cut (lib/playback/jit.ts), or any short job on the way to `ready`: plain nice
    // (2 for a cut: below the VOD work where nice weighs), its autogroup left at 0 (above 0 it
    // would weigh less than every other session on the machine).
    const states = await sampleNiceness((onSpawn) => tools.ffmpeg(['-re', ...input.inputArgs, '-i', input.path, '-f', 'null', '-'], input, { durationSeconds: 4, nice: 2, onSpawn }));
    assert.ok(states.length > 0 && states.every((x) => x === '2 nice 0'), JSON.stringify(states));
  });
  /** "<process nice> nice <autogroup nice>" of the ffmpeg below a run, sampled while it runs. */
  async function sampleNiceness(run: (onSpawn: (pid: number) => void) => Promise<void>): Promise<string[]> {
    let root = 0;
    const states: string[] = [];
    const job = run((pid) => (root = pid));
    for (const until = Date.now() + 2500; Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 100));
      for (const pid of root ? ffmpegsBelow(root) : []) {
        try {
          const ni = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[16];
          states.push(`${ni} ${fs.readFileSync(`/proc/${pid}/autogroup`, 'utf8').trim().split(' ').slice(1).join(' ')}`);
        } catch {
          /* exited */
        }
      }
    }
    await job;
    return states;
  }

  it("SPEC §25: the class the worker sets from the activity's priority wins over the run's own flag", async function () {
    const on = fs.existsSync('/proc/sys/kernel/sched_autogroup_enabled') && fs.readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim() === '1';
    const tools = createMediaTools({ ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe', sandbox: 'auto', formatCheck: true, limits: DEFAULT_LIMITS, nice: 10, criticalNice: 2 });
    if (!on || (await tools.sandboxMode()) !== 'bwrap') this.skip();
    const clip = await makeClip({ width: 320, height: 240, seconds: 4 });
    const input = await tools.open(clip);
    const args = ['-re', ...input.inputArgs, '-i', input.path, '-f', 'null', '-'];
    // A chunk encode (flagged background) made on the way to `ready`: critical priority, foreground.
    const critical = await withMediaClass('foreground', () => sampleNiceness((onSpawn) => tools.ffmpeg(args, input, { durationSeconds: 4, background: true, onSpawn })));
    assert.ok(critical.length > 0 && critical.every((x) => x === '2 nice 0'), `foreground: ${JSON.stringify(critical)}`);
    // A storyboard or MP4 (no flag) behind `ready`: bulk priority, niced, its autogroup too.
    const bulk = await withMediaClass('background', () => sampleNiceness((onSpawn) => tools.ffmpeg(args, input, { durationSeconds: 4, onSpawn })));
    // The autogroup's nice is written a moment after the spawn: the later samples carry it.
    assert.ok(bulk.length > 0 && bulk.every((x) => x.startsWith('10 ')) && bulk[bulk.length - 1] === '10 nice 10', `background: ${JSON.stringify(bulk)}`);
  });
});
