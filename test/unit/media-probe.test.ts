import assert from 'node:assert/strict';
import net from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkFfmpeg, MediaError, probe } from '../../lib/media/probe';
import { runFfmpeg } from '../../lib/media/run';

const QUIET = ['-nostats', '-y', '-hide_banner', '-loglevel', 'error'];

async function rejectsWith(promise: Promise<unknown>, code: MediaError['code'], message: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof MediaError, `expected MediaError, got ${String(err)}`);
    assert.equal(err.code, code);
    assert.match(err.message, message);
    return true;
  });
}

describe('media/probe', function () {
  this.timeout(30_000);
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'media-probe-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads a clip with audio', async () => {
    const file = join(dir, 'av.mp4');
    await runFfmpeg([
      ...QUIET, '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=25', '-f', 'lavfi', '-i', 'sine=sample_rate=48000', '-t', '1',
      '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', file,
    ]);
    const info = await probe(file, { ffprobePath: '/usr/bin/ffprobe' });
    assert.equal(info.width, 320);
    assert.equal(info.height, 180);
    assert.equal(info.rotation, 0);
    assert.equal(info.fps, 25);
    assert.equal(info.videoCodec, 'h264');
    assert.equal(info.hasAudio, true);
    assert.match(info.formatName ?? '', /mp4/);
    assert.ok(info.durationSeconds !== null && Math.abs(info.durationSeconds - 1) < 0.2, String(info.durationSeconds));
    assert.ok(info.sizeBytes !== null && info.sizeBytes > 0);
  });

  it('reports rotation and no audio for a video-only phone-style clip', async () => {
    const plain = join(dir, 'plain.mp4');
    const rotated = join(dir, 'rotated.mp4');
    await runFfmpeg([...QUIET, '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=30', '-t', '1', '-c:v', 'libx264', '-preset', 'ultrafast', plain]);
    await runFfmpeg([...QUIET, '-i', plain, '-c', 'copy', '-metadata:s:v:0', 'rotate=90', rotated]);
    const info = await probe(rotated);
    assert.equal(info.hasAudio, false);
    assert.equal(info.width, 320);
    assert.equal(info.height, 180);
    assert.ok(info.rotation === 90 || info.rotation === 270, String(info.rotation));
  });

  it('rejects a text file as invalid_media', async () => {
    const file = join(dir, 'notes.txt');
    await writeFile(file, 'this is not a video\n');
    await rejectsWith(probe(file), 'invalid_media', /^The file could not be decoded as video \(ffprobe: Invalid data found when processing input\)$/);
  });

  it('rejects a long text file that ffprobe reads as "tty"', async () => {
    const file = join(dir, 'long.txt');
    await writeFile(file, 'some line of text\n'.repeat(3000));
    await rejectsWith(probe(file), 'invalid_media', /text file/);
  });

  it('rejects an audio-only file as no_video_stream, even with cover art', async () => {
    const audio = join(dir, 'tone.m4a');
    await runFfmpeg([...QUIET, '-f', 'lavfi', '-i', 'sine', '-t', '1', '-c:a', 'aac', audio]);
    await rejectsWith(probe(audio), 'no_video_stream', /^The file has no video stream$/);

    const cover = join(dir, 'cover.png');
    const withCover = join(dir, 'tone-cover.mp3');
    await runFfmpeg([...QUIET, '-f', 'lavfi', '-i', 'testsrc=size=64x64', '-frames:v', '1', cover]);
    await runFfmpeg([
      ...QUIET, '-f', 'lavfi', '-i', 'sine', '-i', cover, '-t', '1', '-map', '0:a', '-map', '1:v',
      '-c:a', 'libmp3lame', '-c:v', 'png', '-disposition:v', 'attached_pic', withCover,
    ]);
    await rejectsWith(probe(withCover), 'no_video_stream', /no video stream/);
  });

  it('rejects still images', async () => {
    const png = join(dir, 'still.png');
    await runFfmpeg([...QUIET, '-f', 'lavfi', '-i', 'testsrc=size=64x64', '-frames:v', '1', png]);
    await rejectsWith(probe(png), 'invalid_media', /still image/);
  });

  it('rejects a zero-byte file as invalid_media', async () => {
    const file = join(dir, 'empty.mp4');
    await writeFile(file, '');
    await rejectsWith(probe(file), 'invalid_media', /empty/);
  });

  it('rejects a truncated MP4 whose moov atom was cut off', async () => {
    const full = join(dir, 'moov-last.mp4');
    await runFfmpeg([...QUIET, '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=30', '-t', '2', '-c:v', 'libx264', '-preset', 'ultrafast', full]);
    const { readFile } = await import('node:fs/promises');
    const bytes = await readFile(full);
    const cut = join(dir, 'moov-cut.mp4');
    await writeFile(cut, bytes.subarray(0, Math.floor(bytes.length / 2)));
    await rejectsWith(probe(cut), 'invalid_media', /could not be decoded/);
  });

  it('propagates a missing file as a plain error', async () => {
    await assert.rejects(probe(join(dir, 'nope.mp4')), (err: unknown) => !(err instanceof MediaError) && (err as NodeJS.ErrnoException).code === 'ENOENT');
  });

  it('an unreachable remote input (storage down) is a plain, retryable error, not invalid_media', async () => {
    // A port that was just free: nothing listens, so ffprobe's connection is refused.
    const srv = net.createServer();
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const { port } = srv.address() as net.AddressInfo;
    await new Promise((resolve) => srv.close(resolve));
    await assert.rejects(probe(`http://127.0.0.1:${port}/original.mp4`), (err: unknown) => {
      assert.ok(!(err instanceof MediaError), `expected a plain error, got ${String(err)}`);
      assert.match((err as Error).message, /storage unreachable while probing/);
      return true;
    });
  });

  describe('checkFfmpeg', () => {
    it('accepts the installed ffmpeg', async () => {
      await checkFfmpeg({ ffmpegPath: '/usr/bin/ffmpeg', ffprobePath: '/usr/bin/ffprobe' });
    });

    it('names the Debian package when ffmpeg is missing', async () => {
      await assert.rejects(checkFfmpeg({ ffmpegPath: join(dir, 'no-ffmpeg') }), /not found; install the Debian package: apt-get install -y ffmpeg/);
    });

    it('names the Debian package when an encoder is missing', async () => {
      const fake = join(dir, 'fake-ffmpeg');
      await writeFile(fake, '#!/bin/sh\necho " V....D libx264              libx264 H.264"\n', { mode: 0o755 });
      await assert.rejects(checkFfmpeg({ ffmpegPath: fake }), /lacks encoder\(s\) aac; .*apt-get install -y ffmpeg/);
    });
  });
});
