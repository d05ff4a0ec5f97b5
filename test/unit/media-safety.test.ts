import assert from 'node:assert/strict';
import { allowedDemuxer, hasSafeInputs, safeInputArgs } from '../../lib/media/input';
import { checkBounds, DEFAULT_LIMITS, jobWallSeconds, rlimitsFor } from '../../lib/media/limits';
import { bwrapArgs, prlimitArgs, sandboxedCommand } from '../../lib/media/sandbox';
import { describeHead } from '../../lib/media/sniff';
import { thumbnailArgs } from '../../lib/media/args';
import { MediaError } from '../../lib/media/errors';

const LIMITS = { cpuSeconds: 600, addressSpaceBytes: 2 ** 33, fileSizeBytes: 2 ** 34 };

describe('media safety: pure builders', () => {
  describe('safeInputArgs', () => {
    it('probe: local file protocol, auto-detection among the allowed demuxers only', () => {
      assert.deepEqual(safeInputArgs(), [
        '-protocol_whitelist', 'file',
        '-format_whitelist', 'mov,matroska,avi,flv,mpegts,mpeg,mxf,ogg,wav,h264,hevc,mpegvideo,mp3,aac,flac',
      ]);
    });
    it('later jobs force the probed demuxer; MOV/MP4 without data references', () => {
      assert.deepEqual(safeInputArgs({ format: 'mov' }), ['-protocol_whitelist', 'file', '-format_whitelist', 'mov', '-f', 'mov', '-enable_drefs', '0']);
      assert.deepEqual(safeInputArgs({ format: 'matroska', remote: true }), [
        '-protocol_whitelist', 'https,http,tcp,tls', '-format_whitelist', 'matroska', '-f', 'matroska',
      ]);
    });
    it('refuses a demuxer that is not allowed', () => {
      for (const f of ['hls', 'concat', 'image2', 'dash', 'tty', 'lavfi']) assert.throws(() => safeInputArgs({ format: f }), RangeError, f);
    });
    it('maps ffprobe format names to the allowed demuxer', () => {
      assert.equal(allowedDemuxer('mov,mp4,m4a,3gp,3g2,mj2'), 'mov');
      assert.equal(allowedDemuxer('matroska,webm'), 'matroska');
      assert.equal(allowedDemuxer('mpegts'), 'mpegts');
      assert.equal(allowedDemuxer('hls'), null);
      assert.equal(allowedDemuxer('concat'), null);
      assert.equal(allowedDemuxer('image2'), null);
      assert.equal(allowedDemuxer(null), null);
    });
  });

  describe('hasSafeInputs (the runner refuses anything else)', () => {
    it('accepts builder output with the input options', () => {
      const inputArgs = safeInputArgs({ format: 'mov' });
      assert.equal(hasSafeInputs(thumbnailArgs({ input: '/in/a.mp4', inputArgs, output: '/o/t.jpg', atSeconds: 1 })), true);
    });
    it('refuses a bare input, a forced bad demuxer, a wide protocol list, and a second unguarded input', () => {
      assert.equal(hasSafeInputs(thumbnailArgs({ input: '/in/a.mp4', output: '/o/t.jpg', atSeconds: 1 })), false);
      assert.equal(hasSafeInputs(['-protocol_whitelist', 'file', '-format_whitelist', 'mov', '-f', 'hls', '-i', 'x']), false);
      assert.equal(hasSafeInputs(['-protocol_whitelist', 'file,http', '-format_whitelist', 'mov', '-i', 'x']), false);
      assert.equal(hasSafeInputs(['-protocol_whitelist', 'file', '-format_whitelist', 'mov,hls', '-i', 'x']), false);
      assert.equal(hasSafeInputs([...safeInputArgs({ format: 'mov' }), '-i', 'a', '-i', 'b', 'out.mp4']), false);
      assert.equal(hasSafeInputs(['-y', 'out.mp4']), false);
    });
  });

  describe('sandbox command', () => {
    it('prlimit sets hard = soft for CPU, address space and file size', () => {
      assert.deepEqual(prlimitArgs(LIMITS), ['--cpu=600:600', '--as=8589934592:8589934592', '--fsize=17179869184:17179869184']);
    });
    it('bwrap: only the input (read-only) and the output dir, no network, no capabilities, nobody', () => {
      assert.deepEqual(bwrapArgs({ tool: '/usr/bin/ffmpeg', input: '/data/storage/originals/w/v/a.mp4', outputDir: '/tmp/vidhost-x' }), [
        '--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--uid', '65534', '--gid', '65534',
        '--ro-bind', '/usr', '/usr', '--symlink', 'usr/bin', '/bin', '--symlink', 'usr/sbin', '/sbin',
        '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64',
        '--ro-bind-try', '/etc/ld.so.cache', '/etc/ld.so.cache', '--ro-bind-try', '/etc/alternatives', '/etc/alternatives',
        '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp',
        '--ro-bind', '/data/storage/originals/w/v/a.mp4', '/data/storage/originals/w/v/a.mp4',
        '--bind', '/tmp/vidhost-x', '/tmp/vidhost-x',
        '--chdir', '/tmp/vidhost-x', '--clearenv', '--setenv', 'PATH', '/usr/bin:/bin', '--setenv', 'LC_ALL', 'C', '--',
      ]);
    });
    it('bwrap: an S3 URL input keeps the network (and DNS/TLS files), binds no file', () => {
      const args = bwrapArgs({ tool: 'ffprobe', input: 'https://s3.example/b/k?X-Amz-Signature=x' });
      assert.deepEqual(args.slice(0, 3), ['--unshare-all', '--share-net', '--die-with-parent']);
      assert.ok(args.includes('/etc/resolv.conf') && args.includes('/etc/ssl'));
      assert.ok(!args.includes('https://s3.example/b/k?X-Amz-Signature=x'));
      assert.ok(!args.includes('--bind'));
      assert.ok(args.includes('--chdir') && args[args.indexOf('--chdir') + 1] === '/');
    });
    it('wraps the tool: prlimit, then bwrap, then the tool and its arguments', () => {
      const spec = { mode: 'bwrap' as const, tool: '/opt/ff/ffmpeg', input: '/in/a.mp4', limits: LIMITS, readOnly: ['/opt/ff/ffmpeg'] };
      const cmd = sandboxedCommand(spec, ['-version']);
      assert.equal(cmd.command, 'prlimit');
      assert.deepEqual(cmd.args.slice(0, 5), [...prlimitArgs(LIMITS), '--', 'bwrap']);
      assert.deepEqual(cmd.args.slice(-2), ['/opt/ff/ffmpeg', '-version']);
      assert.ok(cmd.args.join(' ').includes('--ro-bind /opt/ff/ffmpeg /opt/ff/ffmpeg'));
      assert.deepEqual(sandboxedCommand({ ...spec, mode: 'none' }, ['-version']), { command: 'prlimit', args: [...prlimitArgs(LIMITS), '--', '/opt/ff/ffmpeg', '-version'] });
      assert.deepEqual(sandboxedCommand({ ...spec, mode: 'none', prlimit: false }, ['-version']), { command: '/opt/ff/ffmpeg', args: ['-version'] });
      assert.equal(sandboxedCommand({ ...spec, prlimit: false }, ['-version']).command, 'bwrap');
    });
  });

  describe('bounds', () => {
    const ok = { width: 1920, height: 1080, fps: 30, durationSeconds: 60 };
    it('passes what is within every limit, at the limit too', () => {
      checkBounds(ok, DEFAULT_LIMITS);
      checkBounds({ width: 8192, height: 8192, fps: 240, durationSeconds: 43200 }, DEFAULT_LIMITS);
      checkBounds({ ...ok, fps: null, durationSeconds: null }, DEFAULT_LIMITS);
    });
    it('names the limit it is beyond', () => {
      const cases: Array<[Partial<typeof ok>, RegExp]> = [
        [{ width: 16000 }, /width 16000 px is more than 8192 px/],
        [{ height: 8193 }, /height 8193 px is more than 8192 px/],
        [{ fps: 1000 }, /frame rate 1000 fps is more than 240 fps/],
        [{ durationSeconds: 50_000 }, /duration 50000 s is more than 43200 s/],
      ];
      for (const [over, re] of cases) {
        assert.throws(() => checkBounds({ ...ok, ...over }, DEFAULT_LIMITS), (e: unknown) => e instanceof MediaError && e.code === 'media_too_large' && re.test(e.message));
      }
    });
    it('derives the wall-time bound from the duration and rlimits from it', () => {
      assert.equal(jobWallSeconds(2, DEFAULT_LIMITS), 300);
      assert.equal(jobWallSeconds(60, DEFAULT_LIMITS), 1200);
      assert.equal(jobWallSeconds(null, DEFAULT_LIMITS), 43200 * 20);
      assert.deepEqual(rlimitsFor(300, DEFAULT_LIMITS), { cpuSeconds: 600, addressSpaceBytes: 8 * 1024 ** 3, fileSizeBytes: 16 * 1024 ** 3 });
    });
  });

  describe('describeHead', () => {
    it('names playlists, lists and images', () => {
      assert.equal(describeHead(Buffer.from('#EXTM3U\n#EXTINF:1,\n/etc/passwd\n')), 'an HLS playlist');
      assert.equal(describeHead(Buffer.from('ffconcat version 1.0\nfile /x.mp4\n')), 'a concat list');
      assert.equal(describeHead(Buffer.from("file '/data/x.ts'\n")), 'a concat list');
      assert.equal(describeHead(Buffer.from('<?xml version="1.0"?><MPD>')), 'a DASH manifest');
      assert.equal(describeHead(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0])), 'a still image (PNG)');
      assert.equal(describeHead(Buffer.from('hello\n')), 'a text file');
      assert.equal(describeHead(Buffer.from([0, 0, 0, 0x20, 0x66, 0x74, 0x79, 0x70])), null);
    });
  });
});
