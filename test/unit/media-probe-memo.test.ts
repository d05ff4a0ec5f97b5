import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_LIMITS } from '../../lib/media/limits';
import { runFfmpeg } from '../../lib/media/run';
import { createMediaTools, type MediaPolicy } from '../../lib/media/tools';

/** Every job on a video opens its source again; the second open of the same bytes is not a second ffprobe. */
describe('media/probe memo', function () {
  this.timeout(30_000);
  let dir: string;
  let log: string;
  let policy: MediaPolicy;
  const probes = async () => (await readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
  const clip = async (file: string, size: string) =>
    runFfmpeg(['-nostats', '-y', '-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc=size=${size}:rate=10`, '-t', '0.5', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', file]);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'media-probe-memo-'));
    log = join(dir, 'probes.log');
    // An ffprobe that counts its runs.
    const counting = join(dir, 'ffprobe');
    await writeFile(counting, `#!/bin/sh\necho run >> '${log}'\nexec /usr/bin/ffprobe "$@"\n`);
    await chmod(counting, 0o755);
    policy = { ffmpegPath: 'ffmpeg', ffprobePath: counting, sandbox: 'none', limits: DEFAULT_LIMITS, formatCheck: true };
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('probes a file once for every job of every tools instance, and again once its bytes change', async () => {
    const file = join(dir, 'a.mp4');
    await clip(file, '320x180');
    const a = createMediaTools(policy);
    const first = await a.open(file);
    assert.equal(first.info.width, 320);
    // The caller's copy is its own: changing it does not change what the next job is told.
    first.info.width = 1;
    const second = await createMediaTools(policy).open(file);
    assert.equal(second.info.width, 320);
    assert.deepEqual(second.inputArgs, first.inputArgs);
    assert.equal(await probes(), 1, 'one ffprobe for two opens of the same bytes');

    // New bytes under the same name (storage writes by rename): probed again, and their answer is the new one.
    const next = join(dir, 'next.mp4');
    await clip(next, '640x360');
    await rename(next, file);
    assert.equal((await a.open(file)).info.width, 640);
    assert.equal(await probes(), 2);

    // Allowing an audio-only source changes how ffprobe's answer is read, not the answer.
    assert.equal((await a.open(file, undefined, { allowAudioOnly: true })).info.width, 640);
    assert.equal(await probes(), 2);
  });

  it('does not remember a failure', async () => {
    const bad = join(dir, 'bad.mp4');
    await writeFile(bad, 'not a video at all, just text that is long enough to be probed');
    const tools = createMediaTools(policy);
    await assert.rejects(tools.open(bad));
    await assert.rejects(tools.open(bad));
    assert.equal(await probes(), 4, 'the failing file was probed twice');
  });
});
