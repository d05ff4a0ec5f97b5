import fs from 'node:fs';
import path from 'node:path';
import { die, say, warn } from './log';
import { run, tail, which } from './proc';

/**
 * Debian packages the stack needs (ffmpeg, bubblewrap, chromium, docker-compose): found on the
 * machine, else installed with apt-get when we are root, else a clear message.
 */

export const isRoot = (): boolean => process.getuid?.() === 0;

/** apt-get install as root; false when this machine can't (not root, no apt-get). */
export async function aptInstall(packages: string[], logFile: string): Promise<boolean> {
  if (!isRoot() || !which('apt-get')) return false;
  say(`installing ${packages.join(' ')} with apt-get (first run only; log: ${logFile})...`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const lock = ['-o', 'DPkg::Lock::Timeout=300'];
  const update = async () => {
    if ((await run('apt-get', [...lock, 'update'], { env, logFile })).code !== 0) die(`${tail(logFile)}\napt-get update failed`);
  };
  const install = () => run('apt-get', [...lock, '-y', '--no-install-recommends', 'install', ...packages], { env, logFile });
  const lists = fs.existsSync('/var/lib/apt/lists') ? fs.readdirSync('/var/lib/apt/lists').filter((f) => f.includes('_Packages')) : [];
  if (lists.length === 0) await update();
  if ((await install()).code === 0) return true;
  // Stale package lists are the usual cause: refresh and retry once.
  await update();
  if ((await install()).code !== 0) die(`${tail(logFile)}\napt-get install ${packages.join(' ')} failed`);
  return true;
}

/** `ffmpeg -encoders` output lists libx264 (video) and aac (audio). */
export function hasEncoders(encoders: string): boolean {
  return /^ *V\S* +libx264 /m.test(encoders) && /^ *A\S* +aac /m.test(encoders);
}

async function ffmpegOk(): Promise<boolean> {
  if (!which('ffmpeg') || !which('ffprobe')) return false;
  const r = await run('ffmpeg', ['-hide_banner', '-encoders']);
  return r.code === 0 && hasEncoders(r.stdout);
}

export async function ensureFfmpeg(dataDir: string): Promise<void> {
  if (await ffmpegOk()) return;
  if (which('ffmpeg') && which('ffprobe')) warn(`ffmpeg at ${which('ffmpeg')} lacks the libx264 or aac encoder`);
  if (!(await aptInstall(['ffmpeg'], aptLog(dataDir)))) {
    die('ffmpeg + ffprobe with libx264 and aac are required.\n  Debian/Ubuntu: sudo apt-get install ffmpeg   (macOS: brew install ffmpeg)');
  }
  if (!(await ffmpegOk())) die('ffmpeg was installed but still lacks libx264/aac (check: ffmpeg -encoders)');
}

/** bubblewrap sandboxes every ffmpeg run on uploads (docs/security.md); without it the worker says so at boot. */
export async function ensureBwrap(dataDir: string): Promise<void> {
  if (which('bwrap') && which('prlimit')) return;
  if (await aptInstall(['bubblewrap', 'util-linux'], aptLog(dataDir))) return;
  warn("bubblewrap not found and can't be installed here (needs root + apt-get: apt-get install bubblewrap);\n  ffmpeg will run without the sandbox (MEDIA_SANDBOX=none)");
}

export const chromiumCandidates = ['/usr/bin/chromium', 'chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome'];

/** The browser the dashboard tests drive: CHROMIUM_PATH, one on PATH, or Debian's. */
export async function ensureChromium(dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  if (env.CHROMIUM_PATH) {
    if (!which(env.CHROMIUM_PATH)) die(`CHROMIUM_PATH=${env.CHROMIUM_PATH} is not executable`);
    return env.CHROMIUM_PATH;
  }
  for (const c of chromiumCandidates) {
    const found = which(c, env.PATH);
    if (found) return found;
  }
  if ((await aptInstall(['chromium', 'fonts-liberation'], aptLog(dataDir))) && which('/usr/bin/chromium')) return '/usr/bin/chromium';
  warn("chromium not found and can't be installed here (needs root + apt-get: apt-get install chromium);\n  browser tests will fail. Install chromium or set CHROMIUM_PATH.");
  return undefined;
}

/** Debian's docker-compose validates docker-compose.yml without an engine (the compose test uses it). */
export async function ensureComposeValidator(dataDir: string): Promise<void> {
  if (which('docker-compose')) return;
  if (await aptInstall(['docker-compose'], aptLog(dataDir))) return;
  warn("docker-compose not found and can't be installed here (apt-get install docker-compose);\n  the docker-compose.yml validation test will fail.");
}

/**
 * Speech nobody here recorded, for the forced-alignment tests (issue 37): Festival with the
 * us-slt HTS voice reads our sentences and reports its word times; pocketsphinx-testdata holds
 * LibriVox read speech with transcripts; espeak-ng reads French.
 */
export const SPEECH_PACKAGES = ['festival', 'festvox-us-slt-hts', 'pocketsphinx-testdata', 'espeak-ng'];
const speechReady = () => Boolean(which('festival')) && Boolean(which('espeak-ng')) && fs.existsSync('/usr/share/festival/voices/us/cmu_us_slt_arctic_hts') && fs.existsSync('/usr/share/pocketsphinx/test/data/librivox/transcription');

export async function ensureSpeechFixtures(dataDir: string): Promise<void> {
  if (speechReady()) return;
  if ((await aptInstall(SPEECH_PACKAGES, aptLog(dataDir))) && speechReady()) return;
  warn(`${SPEECH_PACKAGES.join(', ')} not found and can't be installed here (apt-get install ${SPEECH_PACKAGES.join(' ')});\n  the caption alignment tests will fail.`);
}

const aptLog = (dataDir: string) => path.join(dataDir, 'logs', 'apt.log');
