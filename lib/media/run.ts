// The one place that executes ffmpeg. Callers pass exact argument arrays (see args.ts).
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { below, niceAutogroups, stoppedOrGone } from './autogroup';
import { classifyFfmpegError, limitInStderr } from './errors';
import { sandboxedCommand, type SandboxSpec } from './sandbox';

export { classifyFfmpegError } from './errors';

const STDERR_TAIL_CHARS = 64 * 1024;
const MAX_PROGRESS_LINE = 4096;
const DEFAULT_PROGRESS_INTERVAL_MS = 500;
const PARTIAL_INPUT = /partial file/i;

export type ResourceLimit = 'wall time' | 'CPU time' | 'memory' | 'output file size';

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
    /** Set when the process hit one of its resource limits (the job's media is too large). */
    readonly limit: ResourceLimit | null = null,
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
  /** Runs the process under `nice -n <nice>` (1–19; 0/undefined: as this process). */
  nice?: number;
  /**
   * The niceness of a bwrap sandbox's autogroup (lib/media/autogroup.ts); unset: left at 0. Only
   * long encodes nobody waits for take it: an autogroup above 0 weighs less than every other
   * session on the machine (a thumbnail on the way to `ready` at 10 took 19 s under outside load).
   */
  autogroupNice?: number;
  /**
   * Default true: a zero exit whose stderr reports "partial file" is rejected as invalid media.
   * ffmpeg conceals a truncated MP4 (moov first, data cut off) and exits 0 with a short output.
   */
  failOnPartialInput?: boolean;
  /** Run under prlimit (and bubblewrap when its mode says so); `tool` in it is what runs. */
  sandbox?: SandboxSpec;
  /** Wall-clock bound: the process is killed and the run rejects with `limit: 'wall time'`. */
  timeoutMs?: number;
  /** On success, the last ~64 KiB of stderr (filters such as loudnorm report their measures there). */
  onStderrTail?: (tail: string) => void;
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

/** A process killed by a signal inside bwrap shows as bwrap exiting with 128 + the signal number. */
function effectiveSignal(code: number | null, sig: NodeJS.Signals | null, wrapped: boolean): NodeJS.Signals | null {
  if (sig || !wrapped || code === null || code <= 128) return sig;
  const name = Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0];
  return (name as NodeJS.Signals | undefined) ?? null;
}

type ToolOptions = RunFfmpegOptions & { toolName: string; defaultPath: string; captureStdout?: number };

/**
 * Runs ffmpeg to completion. Rejects with FfmpegError on a non-zero exit, with an error named
 * 'AbortError' when `signal` aborts (the child is SIGKILLed and reaped first).
 */
export function runFfmpeg(args: readonly string[], options: RunFfmpegOptions = {}): Promise<void> {
  return runTool(args, { ...options, toolName: 'ffmpeg', defaultPath: options.ffmpegPath ?? 'ffmpeg' }).then(() => undefined);
}

export type RunFfprobeOptions = Omit<RunFfmpegOptions, 'onProgress' | 'durationSeconds' | 'failOnPartialInput' | 'progressIntervalMs'> & {
  ffprobePath?: string;
  /** Largest stdout accepted, bytes (a hostile file can describe thousands of streams). */
  maxStdout?: number;
};

/** Runs ffprobe and resolves with its stdout; rejects like runFfmpeg. */
export function runFfprobe(args: readonly string[], options: RunFfprobeOptions = {}): Promise<string> {
  return runTool(args, {
    ...options,
    toolName: 'ffprobe',
    defaultPath: options.ffprobePath ?? 'ffprobe',
    captureStdout: options.maxStdout ?? 16 * 1024 * 1024,
    failOnPartialInput: false,
  });
}

function runTool(args: readonly string[], options: ToolOptions): Promise<string> {
  const { signal, onProgress, sandbox, toolName } = options;
  const toolPath = sandbox?.tool ?? options.defaultPath;
  const plain = sandbox ? sandboxedCommand(sandbox, args) : { command: toolPath, args: [...args] };
  // nice(1) execs the command in its own process (same pid): the sandbox and the tool inherit it.
  const { command, args: argv } = options.nice ? { command: 'nice', args: ['-n', String(options.nice), plain.command, ...plain.args] } : plain;

  return new Promise<string>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }

    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    let settled = false;
    let aborted = false;
    let timedOut = false;
    let spawnError: Error | undefined;
    let callbackError: unknown;
    let hasCallbackError = false;
    let stderr = '';
    let stdout = '';
    let stdoutOverflow = false;

    let killing = false;
    const kill = (): void => {
      if (killing || child.exitCode !== null || child.signalCode !== null) return;
      killing = true;
      // The whole tree, not only the process spawned: killed during its setup, bwrap's inner
      // process (the sandbox's pid 1) is not yet bound to die with it and was left sleeping
      // forever, holding our stdout/stderr, so 'close' never came and the run never settled
      // (an aborted just-in-time cut then blocked its segment for good). Stopped first, so it
      // cannot fork while its tree is listed — and listed only once the stop has taken hold: a
      // SIGSTOP lands when bwrap leaves the clone() it may be in, so a list taken at once could
      // miss the inner process being made (it was left, orphaned, under three shards' load).
      if (child.pid !== undefined && sandbox?.mode === 'bwrap') {
        const pid = child.pid;
        const signalTo = (p: number, sig: NodeJS.Signals) => {
          try {
            process.kill(p, sig);
          } catch {
            /* gone already */
          }
        };
        signalTo(pid, 'SIGSTOP');
        const deadline = Date.now() + 500;
        const killTree = () => {
          if (!stoppedOrGone(pid) && Date.now() < deadline) return void setTimeout(killTree, 1);
          // Killing the sandbox's pid 1 kills everything else in its pid namespace.
          for (const p of below(pid)) signalTo(p, 'SIGKILL');
          child.kill('SIGKILL');
        };
        killTree();
        return;
      }
      child.kill('SIGKILL');
    };
    const onAbort = (): void => {
      aborted = true;
      kill();
    };
    const timer =
      options.timeoutMs !== undefined
        ? setTimeout(() => {
            timedOut = true;
            kill();
          }, options.timeoutMs)
        : undefined;
    const finish = (err?: unknown): void => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (err === undefined) resolve(stdout);
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

    // A backstop: once the process we killed has exited, its pipes close within 5 s or are
    // closed here, so the run settles even if some process of its tree still held them.
    child.once('exit', () => {
      if (!killing) return;
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, 5000).unref();
    });

    child.once('spawn', () => {
      if (child.pid === undefined) return;
      options.onSpawn?.(child.pid);
      // bwrap gives the tool a session (an autogroup) of its own: its niceness goes there too.
      if (options.autogroupNice && sandbox?.mode === 'bwrap') void niceAutogroups(child.pid, options.autogroupNice);
    });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      if (options.captureStdout === undefined) return tracker.push(chunk);
      if (stdout.length + chunk.length > options.captureStdout) {
        stdoutOverflow = true;
        kill();
        return;
      }
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
      if (stderr.length > 2 * STDERR_TAIL_CHARS) stderr = stderr.slice(-STDERR_TAIL_CHARS);
    });
    // Pipes can fail on their own (EPIPE after a kill); an 'error' without a listener would crash the process.
    child.stdout.on('error', () => undefined);
    child.stderr.on('error', () => undefined);

    child.on('error', (err: NodeJS.ErrnoException) => {
      spawnError =
        err.code === 'ENOENT'
          ? new Error(`${err.path ?? command} not found (install it: apt-get install -y ${sandbox ? 'ffmpeg bubblewrap util-linux' : 'ffmpeg'})`, { cause: err })
          : err;
      // No pid means nothing was started, so there is no 'close' to wait for.
      if (child.pid === undefined) finish(spawnError);
    });

    child.on('close', (code: number | null, rawSig: NodeJS.Signals | null) => {
      if (aborted && signal) return finish(abortError(signal));
      if (hasCallbackError) return finish(callbackError);
      if (spawnError) return finish(spawnError);
      const tail = stderr.slice(-STDERR_TAIL_CHARS);
      if (timedOut) {
        return finish(new FfmpegError(`${toolName} ran longer than its ${Math.round((options.timeoutMs ?? 0) / 1000)} s wall-time limit`, tail, code, rawSig, 'wall time'));
      }
      if (stdoutOverflow) {
        return finish(new FfmpegError(`${toolName} wrote more than ${options.captureStdout} bytes of output`, tail, code, rawSig, 'memory'));
      }
      if (code === 0 && (options.failOnPartialInput ?? true)) {
        const partial = tail.split('\n').find((l) => PARTIAL_INPUT.test(l));
        if (partial) return finish(new FfmpegError(`${toolName} read a truncated input: ${partial.trim()}`, tail, 0, null));
      }
      if (code === 0) {
        tracker.complete();
        options.onStderrTail?.(tail);
        return finish(hasCallbackError ? callbackError : undefined);
      }
      const sig = effectiveSignal(code, rawSig, sandbox?.mode === 'bwrap');
      // Under prlimit, a SIGKILL we did not send is the CPU-time limit; SIGXFSZ the file-size limit.
      const limit: ResourceLimit | null = sandbox
        ? sig === 'SIGKILL' || sig === 'SIGXCPU'
          ? 'CPU time'
          : sig === 'SIGXFSZ'
            ? 'output file size'
            : limitInStderr(tail)
        : null;
      const reason = lastLine(tail);
      const head = sig ? `${toolName} was killed by ${sig}` : `${toolName} exited with code ${code}`;
      finish(new FfmpegError(reason ? `${head}: ${reason}` : head, tail, sig ? null : code, sig, limit));
    });
  });
}
