import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { singlePassLadderArgs, transcodeArgs } from '../../lib/media/args';
import { classifyFfmpegError } from '../../lib/media/errors';
import { planLadder } from '../../lib/media/ladder';
import { FfmpegError, ProgressTracker, runFfmpeg } from '../../lib/media/run';

const QUIET = ['-nostats', '-y', '-hide_banner', '-loglevel', 'error'];

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

function assertProgress(values: number[]): void {
  assert.ok(values.length > 0, 'expected progress callbacks');
  values.forEach((v, i) => {
    assert.ok(Number.isInteger(v) && v >= 0 && v <= 100, `out of range: ${v}`);
    if (i > 0) assert.ok(v > values[i - 1], `not increasing: ${values.join(',')}`);
  });
  assert.equal(values[values.length - 1], 100);
}

describe('media/run', function () {
  this.timeout(30_000);
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'media-run-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  describe('ProgressTracker', () => {
    it('parses split chunks, clamps, rate-limits and reserves 100 for completion', () => {
      let now = 0;
      const seen: number[] = [];
      const t = new ProgressTracker(10, (p) => seen.push(p), 500, () => now);
      t.push('frame=1\nout_time_us=-9223372036854775807\nout_time_us=N/A\nout_time_');
      t.push('us=1000000\nprogress=continue\n');
      now = 100;
      t.push('out_time_us=2000000\n'); // rate-limited
      now = 600;
      t.push('out_time_us=2000000\n');
      now = 1200;
      t.push('out_time_ms=1500000\n'); // never goes backwards
      now = 1800;
      t.push('out_time_us=12000000\nprogress=end\n'); // past the end: held at 99
      t.complete();
      t.complete();
      assert.deepEqual(seen, [10, 20, 99, 100]);
    });

    it('reports only completion when the duration is unknown', () => {
      const seen: number[] = [];
      const t = new ProgressTracker(null, (p) => seen.push(p));
      t.push('out_time_us=5000000\n');
      t.complete();
      assert.deepEqual(seen, [100]);
    });
  });

  it('generates a 2 s clip with monotonic progress ending at 100', async () => {
    const out = join(dir, 'clip.mp4');
    const seen: number[] = [];
    await runFfmpeg(
      [
        '-progress', 'pipe:1', ...QUIET,
        '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=30',
        '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000',
        '-t', '2', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', out,
      ],
      { durationSeconds: 2, onProgress: (p) => seen.push(p) },
    );
    assertProgress(seen);
    assert.ok((await readFile(out)).length > 1000);
  });

  it('reports intermediate progress on a slower (real-time) encode', async () => {
    const seen: number[] = [];
    await runFfmpeg(
      ['-progress', 'pipe:1', '-stats_period', '0.1', ...QUIET, '-re', '-f', 'lavfi', '-i', 'testsrc=size=160x90:rate=30', '-t', '1.2', '-f', 'null', '-'],
      { durationSeconds: 1.2, onProgress: (p) => seen.push(p), progressIntervalMs: 0 },
    );
    assertProgress(seen);
    assert.ok(seen.length >= 3, `expected intermediate values, got ${seen.join(',')}`);
  });

  it('abort kills ffmpeg with SIGKILL and rejects with AbortError', async () => {
    const ac = new AbortController();
    let pid: number | undefined;
    const started = Date.now();
    const run = runFfmpeg(
      [...QUIET, '-f', 'lavfi', '-i', 'testsrc', '-t', '600', '-c:v', 'libx264', '-preset', 'ultrafast', '-f', 'null', '-'],
      { signal: ac.signal, onSpawn: (p) => (pid = p) },
    );
    setTimeout(() => ac.abort(), 300);
    await assert.rejects(run, (err: Error) => err.name === 'AbortError');
    assert.ok(Date.now() - started < 5000);
    assert.ok(pid !== undefined);
    assert.equal(isAlive(pid), false, 'ffmpeg is still running');
  });

  it('does not spawn when already aborted', async () => {
    const ac = new AbortController();
    ac.abort();
    let spawned = false;
    await assert.rejects(runFfmpeg(['-version'], { signal: ac.signal, onSpawn: () => (spawned = true) }), { name: 'AbortError' });
    assert.equal(spawned, false);
  });

  it('rejects a bad input with FfmpegError carrying stderr', async () => {
    const bad = join(dir, 'notes.txt');
    await writeFile(bad, 'definitely not a video\n');
    const err = await runFfmpeg([...QUIET, '-i', bad, '-f', 'null', '-']).then(
      () => assert.fail('expected a failure'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof FfmpegError);
    assert.equal(err.exitCode, 1);
    assert.equal(err.signal, null);
    assert.match(err.stderr, /Invalid data found when processing input/);
    assert.match(err.message, /^ffmpeg exited with code 1: .*Invalid data found when processing input$/);
    assert.equal(err.kind, 'invalid_media');
  });

  it('does not classify usage errors as invalid media', async () => {
    const err = await runFfmpeg([...QUIET, '-no_such_option', '1']).catch((e: unknown) => e);
    assert.ok(err instanceof FfmpegError);
    assert.equal(err.kind, null);
  });

  it('rejects with an install hint when ffmpeg is missing', async () => {
    await assert.rejects(runFfmpeg(['-version'], { ffmpegPath: join(dir, 'no-ffmpeg') }), /not found.*apt-get install -y ffmpeg/);
  });

  it('rejects a truncated MP4 (moov first) that ffmpeg would otherwise "succeed" on', async () => {
    const full = join(dir, 'faststart.mp4');
    await runFfmpeg([
      ...QUIET, '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=30', '-t', '3',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-movflags', '+faststart', full,
    ]);
    const bytes = await readFile(full);
    const truncated = join(dir, 'truncated.mp4');
    await writeFile(truncated, bytes.subarray(0, Math.floor(bytes.length / 3)));
    const err = await runFfmpeg([...QUIET, '-i', truncated, '-c:v', 'libx264', '-preset', 'ultrafast', '-f', 'null', '-']).catch((e: unknown) => e);
    assert.ok(err instanceof FfmpegError, String(err));
    assert.equal(err.kind, 'invalid_media');
    assert.equal(classifyFfmpegError(err.stderr), 'invalid_media');
  });

  it('transcodeArgs produces aligned HLS segments', async () => {
    const src = join(dir, 'src5.mp4');
    await runFfmpeg([
      ...QUIET, '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=30', '-f', 'lavfi', '-i', 'sine', '-t', '5',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', src,
    ]);
    const [rung] = planLadder({ width: 320, height: 180 });
    const outputDir = join(dir, 'hls', rung.name);
    const { mkdir } = await import('node:fs/promises');
    await mkdir(outputDir, { recursive: true });
    const seen: number[] = [];
    await runFfmpeg(transcodeArgs({ input: src, outputDir, rung, hasAudio: true, fps: 30, segmentSeconds: 2, preset: 'ultrafast' }), {
      durationSeconds: 5,
      onProgress: (p) => seen.push(p),
    });
    assertProgress(seen);
    const playlist = await readFile(join(outputDir, 'index.m3u8'), 'utf8');
    assert.match(playlist, /#EXT-X-PLAYLIST-TYPE:VOD/);
    assert.deepEqual(
      [...playlist.matchAll(/#EXTINF:([\d.]+),/g)].map((m) => Math.round(Number(m[1]))),
      [2, 2, 1],
    );
    assert.deepEqual((await readdir(outputDir)).sort(), ['index.m3u8', 'seg_00000.ts', 'seg_00001.ts', 'seg_00002.ts']);
  });

  it('singlePassLadderArgs writes every rung and a master playlist', async () => {
    const src = join(dir, 'src360.mp4');
    await runFfmpeg([
      ...QUIET, '-f', 'lavfi', '-i', 'testsrc=size=640x360:rate=30', '-f', 'lavfi', '-i', 'sine', '-t', '2',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', src,
    ]);
    const rungs = planLadder({ width: 640, height: 360 });
    const outputRoot = join(dir, 'single');
    await runFfmpeg(singlePassLadderArgs({ input: src, outputRoot, rungs, hasAudio: true, fps: 30, segmentSeconds: 1, preset: 'ultrafast' }));
    const master = await readFile(join(outputRoot, 'master.m3u8'), 'utf8');
    assert.match(master, /240p\/index\.m3u8/);
    assert.match(master, /360p\/index\.m3u8/);
    for (const r of rungs) assert.match(await readFile(join(outputRoot, r.name, 'index.m3u8'), 'utf8'), /#EXT-X-ENDLIST/);
  });
});

describe('runFfmpeg niceness (live before VOD, SPEC §17)', () => {
  const niceOf = async (pid: number) => Number((await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ')[16]);

  it('runs ffmpeg under the niceness asked for, and at our own without it', async () => {
    const seen: number[] = [];
    const probe = (nice?: number) =>
      runFfmpeg([...QUIET, '-re', '-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=10:duration=1', '-f', 'null', '-'], {
        nice,
        // nice(1) execs ffmpeg in place: read the process once it is ffmpeg.
        onSpawn: (pid) => void new Promise((r) => setTimeout(r, 400)).then(() => niceOf(pid)).then((n) => seen.push(n)),
      });
    await probe(7);
    await probe(undefined);
    await new Promise((r) => setTimeout(r, 100));
    const own = await niceOf(process.pid);
    assert.deepEqual(seen, [Math.min(19, own + 7), own]);
  });
});
