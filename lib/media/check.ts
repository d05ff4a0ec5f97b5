import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const INSTALL_HINT = 'install the Debian package: apt-get install -y ffmpeg';
const REQUIRED_ENCODERS = ['libx264', 'aac'] as const;

async function run(path: string, args: string[], what: string): Promise<string> {
  try {
    const { stdout } = await execFileAsync(path, args, { maxBuffer: 8 * 1024 * 1024, timeout: 30_000 });
    return stdout;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const detail = code === 'ENOENT' ? 'not found' : `failed (${(err as Error).message.split('\n')[0]})`;
    throw new Error(`${what} at "${path}" ${detail}; ${INSTALL_HINT}`, { cause: err });
  }
}

/**
 * Verifies that ffmpeg has the encoders the pipeline uses, and that ffprobe runs when its path is given.
 * Meant for worker start-up, so a broken install fails fast instead of on the first job.
 */
export async function checkFfmpeg(options: { ffmpegPath?: string; ffprobePath?: string } = {}): Promise<void> {
  const ffmpegPath = options.ffmpegPath ?? 'ffmpeg';
  const encoders = await run(ffmpegPath, ['-hide_banner', '-encoders'], 'ffmpeg');
  const available = new Set(
    encoders
      .split('\n')
      .map((line) => /^\s*[VAS][A-Z.]{5}\s+(\S+)/.exec(line)?.[1])
      .filter((name): name is string => name !== undefined),
  );
  const missing = REQUIRED_ENCODERS.filter((name) => !available.has(name));
  if (missing.length > 0) {
    throw new Error(`ffmpeg at "${ffmpegPath}" lacks encoder(s) ${missing.join(', ')}; ${INSTALL_HINT}`);
  }
  if (options.ffprobePath) await run(options.ffprobePath, ['-hide_banner', '-version'], 'ffprobe');
}
