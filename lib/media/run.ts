// The one place that executes ffmpeg. Callers pass exact argument arrays (see args.ts).
import { spawn } from 'node:child_process';
import { classifyFfmpegError } from './errors';

export { classifyFfmpegError } from './errors';

const STDERR_TAIL_CHARS = 64 * 1024;
const MAX_PROGRESS_LINE = 4096;
const DEFAULT_PROGRESS_INTERVAL_MS = 500;
const PARTIAL_INPUT = /partial file/i;

export class FfmpegError extends Error {
  override readonly name = 'FfmpegError';
  /** 'invalid_media' when stderr shows the input cannot be decoded (do not retry). */
  readonly kind: 'invalid_media' | null;
  constructor(
    message: string,
    /** Last ~64 KiB of ffmpeg's stderr. */
    readonly stderr: string,
    readonly exitCode: number | null,
    readonly signal: NodeJS.Signals | null,
  ) {
    super(message);
    this.kind = classifyFfmpegError(stderr);
  }
}

export type RunFfmpegOptions = {
  ffmpegPath?: string;
  /** Input duration; without it no intermediate progress is reported, only the final 100. */
  durationSeconds?: number | null;
  /** Integer percent, increasing, rate-limited; 100 exactly once, on success. */
  onProgress?: (pct: number) => void;
  signal?: AbortSignal;
  progressIntervalMs?: number;
  onSpawn?: (pid: number) => void;
  /**
   * Default true: a zero exit whose stderr reports "partial file" is rejected as invalid media.
   * ffmpeg conceals a truncated MP4 (moov first, data cut off) and exits 0 with a short output.
   */
  failOnPartialInput?: boolean;
};

function abortError(signal: AbortSignal): Error {
  const err = new Error('ffmpeg was aborted', { cause: signal.reason });
  err.name = 'AbortError';
  return err;
}

function lastLine(text: string): string {
  const lines = text.split(/\r?\n|\r/).map((l) => l.trim()).filter(Boolean);
  return lines[lines.length - 1] ?? '';
}

/**
 * Turns `-progress pipe:1` output (key=value lines, possibly split across chunks) into percent
 * updates. Intermediate values stop at 99 so that 100 always means "ffmpeg exited successfully".
 */
export class ProgressTracker {
  private partial = '';
  private last = -1;
  private lastEmitAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly durationSeconds: number | null | undefined,
    private readonly emit: (pct: number) => void,
    private readonly intervalMs = DEFAULT_PROGRESS_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  push(chunk: string): void {
    const lines = (this.partial + chunk).split('\n');
    this.partial = lines.pop() ?? '';
    if (this.partial.length > MAX_PROGRESS_LINE) this.partial = '';
    for (const line of lines) this.line(line.trim());
  }

  /** Call once ffmpeg has exited with code 0. */
  complete(): void {
    if (this.last < 100) {
      this.last = 100;
      this.emit(100);
    }
  }

  private line(line: string): void {
    const eq = line.indexOf('=');
    if (eq < 0) return;
    const key = line.slice(0, eq);
    // out_time_ms is also in microseconds (a long-standing ffmpeg misnomer).
    if (key !== 'out_time_us' && key !== 'out_time_ms') return;
    const us = Number(line.slice(eq + 1));
    const duration = this.durationSeconds;
    if (!Number.isFinite(us) || us < 0 || !duration || !Number.isFinite(duration) || duration <= 0) return;
    const pct = Math.min(99, Math.max(0, Math.floor((us / (duration * 1e6)) * 100)));
    const now = this.now();
    if (pct > this.last && now - this.lastEmitAt >= this.intervalMs) {
      this.last = pct;
      this.lastEmitAt = now;
      this.emit(pct);
    }
  }
}

/**
 * Runs ffmpeg to completion. Rejects with FfmpegError on a non-zero exit, with an error named
 * 'AbortError' when `signal` aborts (the child is SIGKILLed and reaped first).
 */
export function runFfmpeg(args: readonly string[], options: RunFfmpegOptions = {}): Promise<void> {
  const { signal, onProgress } = options;
  const ffmpegPath = options.ffmpegPath ?? 'ffmpeg';

  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }

    const child = spawn(ffmpegPath, args, { stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    let settled = false;
    let aborted = false;
    let spawnError: Error | undefined;
    let callbackError: unknown;
    let hasCallbackError = false;
    let stderr = '';

    const kill = (): void => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    };
    const onAbort = (): void => {
      aborted = true;
      kill();
    };
    const finish = (err?: unknown): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      if (err === undefined) resolve();
      else reject(err);
    };

    signal?.addEventListener('abort', onAbort, { once: true });

    const tracker = new ProgressTracker(
      options.durationSeconds,
      (pct) => {
        if (!onProgress || hasCallbackError) return;
        try {
          onProgress(pct);
        } catch (err) {
          // A throwing callback must not crash the process from inside a stream handler.
          hasCallbackError = true;
          callbackError = err;
          kill();
        }
      },
      options.progressIntervalMs,
    );

    child.once('spawn', () => {
      if (child.pid !== undefined) options.onSpawn?.(child.pid);
    });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => tracker.push(chunk));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
      if (stderr.length > 2 * STDERR_TAIL_CHARS) stderr = stderr.slice(-STDERR_TAIL_CHARS);
    });

    child.on('error', (err: NodeJS.ErrnoException) => {
      spawnError =
        err.code === 'ENOENT'
          ? new Error(`ffmpeg not found at "${ffmpegPath}" (install it: apt-get install -y ffmpeg)`, { cause: err })
          : err;
      // No pid means nothing was started, so there is no 'close' to wait for.
      if (child.pid === undefined) finish(spawnError);
    });

    child.on('close', (code: number | null, sig: NodeJS.Signals | null) => {
      if (aborted && signal) return finish(abortError(signal));
      if (hasCallbackError) return finish(callbackError);
      if (spawnError) return finish(spawnError);
      const tail = stderr.slice(-STDERR_TAIL_CHARS);
      if (code === 0 && (options.failOnPartialInput ?? true)) {
        const partial = tail.split('\n').find((l) => PARTIAL_INPUT.test(l));
        if (partial) return finish(new FfmpegError(`ffmpeg read a truncated input: ${partial.trim()}`, tail, 0, null));
      }
      if (code === 0) {
        tracker.complete();
        return finish(hasCallbackError ? callbackError : undefined);
      }
      const reason = lastLine(tail);
      const head = code !== null ? `ffmpeg exited with code ${code}` : `ffmpeg was killed by ${sig ?? 'a signal'}`;
      finish(new FfmpegError(reason ? `${head}: ${reason}` : head, tail, code, sig));
    });
  });
}
