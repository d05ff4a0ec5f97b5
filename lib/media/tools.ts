// ffmpeg/ffprobe on USER media, bound to the media policy: input allow-lists, the sandbox,
// rlimits and bounds (SPEC §12). Activities (and every later job: MP4, storyboard, clips) run
// user media only through these functions.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { MediaError } from './errors';
import { hasSafeInputs, isRemoteInput, safeInputArgs } from './input';
import { checkBounds, DEFAULT_LIMITS, jobWallSeconds, rlimitsFor, type MediaLimits } from './limits';
import { probe, type MediaInfo } from './probe';
import { ProbeMemo } from './probe-memo';
import { runFfmpeg, runFfprobe, type RunFfmpegOptions } from './run';
import { mediaClass } from './schedule';
import { bwrapArgs, type SandboxMode, type SandboxSpec } from './sandbox';

const execFileAsync = promisify(execFile);

export type MediaPolicy = {
  ffmpegPath: string;
  ffprobePath: string;
  /** 'auto': bwrap when it works on this host, else none (with a warning at boot). */
  sandbox: SandboxMode | 'auto';
  limits: MediaLimits;
  /** Test-only: false turns the input allow-lists off (the sandbox must then hold alone). */
  formatCheck: boolean;
  /** Niceness of ffmpeg runs (VOD work yields the CPU to live encodes, which run at 0). */
  nice?: number;
  /** Niceness of foreground runs (someone waits: the way to `ready`), below `nice` (SPEC §25). */
  criticalNice?: number;
};

/** An input opened under the policy: pass `inputArgs` right before `-i path` in the builders. */
export type SafeInput = {
  path: string;
  /** The allowed demuxer, from the probe (null only when the format check is off). */
  demuxer: string | null;
  inputArgs: string[];
};

/** A bare name is found on PATH (inside bwrap: /usr/bin:/bin); a path is made absolute so it can be bound. */
const resolveTool = (name: string): string => (name.includes('/') ? path.resolve(name) : name);

const SYSTEM_PREFIXES = ['/usr/'];
const outsideSystem = (p: string): boolean => path.isAbsolute(p) && !SYSTEM_PREFIXES.some((s) => p.startsWith(s));

let detected: Promise<{ mode: SandboxMode; reason?: string }> | undefined;

/** Whether bubblewrap can run a process here (it needs namespaces: root, or unprivileged user namespaces). */
export function detectBwrap(): Promise<{ mode: SandboxMode; reason?: string }> {
  detected ??= execFileAsync('bwrap', [...bwrapArgs({ tool: '/usr/bin/true', input: '/usr/bin/true' }), '/usr/bin/true'], { timeout: 10_000 })
    .then(() => ({ mode: 'bwrap' as const }))
    .catch((err: NodeJS.ErrnoException & { stderr?: string }) => ({
      mode: 'none' as const,
      reason: err.code === 'ENOENT' ? 'bwrap is not installed (apt-get install bubblewrap)' : `bwrap does not work here: ${String(err.stderr ?? err.message).trim().split('\n')[0]}`,
    }));
  return detected;
}

let prlimitFound: Promise<boolean> | undefined;

/** Whether prlimit(1) (util-linux) is here to set the rlimits. */
export function detectPrlimit(): Promise<boolean> {
  prlimitFound ??= execFileAsync('prlimit', ['--version'], { timeout: 10_000 }).then(
    () => true,
    () => false,
  );
  return prlimitFound;
}

/** The sandbox in force for a configured mode; an explicit `bwrap` that cannot run is an error. */
export async function resolveSandbox(configured: MediaPolicy['sandbox']): Promise<{ mode: SandboxMode; reason?: string }> {
  if (configured === 'none') return { mode: 'none', reason: 'MEDIA_SANDBOX=none' };
  const found = await detectBwrap();
  if (configured === 'bwrap' && found.mode !== 'bwrap') throw new Error(`MEDIA_SANDBOX=bwrap but ${found.reason}`);
  return found;
}

export type RunOptions = Pick<RunFfmpegOptions, 'onProgress' | 'signal' | 'onSpawn' | 'failOnPartialInput' | 'onStderrTail' | 'nice'> & {
  /**
   * A long encode behind `ready` (the ladder's chunks, the full audio encode, the one-pass cut of
   * every segment, the extra codecs): where the kernel schedules by autogroup, its sandbox's
   * autogroup takes the niceness too, so it yields to what a viewer waits for (lib/media/autogroup.ts).
   */
  background?: boolean;
  /** The only directory the process may write. */
  outputDir?: string;
  /** Files the process may also read (a watermark's image: SPEC §24), bound read-only in the sandbox. */
  readOnly?: readonly string[];
  /** Sets the wall-time and CPU bounds; unknown = the longest allowed. */
  durationSeconds?: number | null;
};

/** One per process: every activity's tools open the same sources (lib/media/probe-memo.ts). */
const probeMemo = new ProbeMemo();

export function createMediaTools(policy: MediaPolicy) {
  const limits = policy.limits ?? DEFAULT_LIMITS;
  const ffmpegPath = resolveTool(policy.ffmpegPath);
  const ffprobePath = resolveTool(policy.ffprobePath);
  let mode: Promise<SandboxMode> | undefined;
  const sandboxMode = (): Promise<SandboxMode> => (mode ??= resolveSandbox(policy.sandbox).then((r) => r.mode));

  const spec = async (tool: string, input: string, wallSeconds: number, outputDir?: string, extra: readonly string[] = []): Promise<SandboxSpec> => ({
    mode: await sandboxMode(),
    prlimit: await detectPrlimit(),
    tool,
    input,
    outputDir,
    limits: rlimitsFor(wallSeconds, limits),
    readOnly: outsideSystem(tool) ? [tool] : [],
    inputs: extra,
  });

  async function probeMedia(input: string, signal?: AbortSignal, opts: { allowAudioOnly?: boolean } = {}): Promise<MediaInfo> {
    const wall = limits.minWallSeconds;
    const info = await probe(input, {
      ffprobePath,
      sandbox: await spec(ffprobePath, input, wall),
      timeoutMs: wall * 1000,
      signal,
      formatCheck: policy.formatCheck,
      allowAudioOnly: opts.allowAudioOnly,
      memo: probeMemo,
    });
    checkBounds(info, limits);
    return info;
  }

  return {
    ffmpegPath,
    ffprobePath,
    limits,
    sandboxMode,

    /** Probe + bounds (SPEC §12): MediaError invalid_media / no_video_stream / media_too_large. */
    probe: probeMedia,

    /** Opens an input for a later job: re-probes it under the allow-lists and returns its input options. */
    async open(input: string, signal?: AbortSignal, opts: { allowAudioOnly?: boolean } = {}): Promise<SafeInput & { info: MediaInfo }> {
      const info = await probeMedia(input, signal, opts);
      const inputArgs = policy.formatCheck ? safeInputArgs({ format: info.demuxer, remote: isRemoteInput(input) }) : [];
      return { path: input, demuxer: info.demuxer, inputArgs, info };
    },

    /** Runs ffprobe with exact arguments on an opened input, sandboxed like the probe; resolves with stdout. */
    async ffprobe(args: readonly string[], input: SafeInput, signal?: AbortSignal): Promise<string> {
      const wall = limits.minWallSeconds;
      return runFfprobe(args, { ffprobePath, sandbox: await spec(ffprobePath, input.path, wall), timeoutMs: wall * 1000, signal });
    },

    /**
     * Runs ffmpeg on user media: refuses arguments whose inputs lack the allow-lists, then runs it
     * sandboxed, under rlimits and a wall-time bound relative to the duration.
     */
    async ffmpeg(args: readonly string[], input: SafeInput, options: RunOptions = {}): Promise<void> {
      if (policy.formatCheck && !hasSafeInputs(args)) {
        throw new Error('refusing to run ffmpeg: an input lacks -protocol_whitelist/-format_whitelist (use SafeInput.inputArgs)');
      }
      const wall = jobWallSeconds(options.durationSeconds, limits);
      // SPEC §25: the class the worker set from the activity's priority wins over the call's own
      // flag: a first rung encoded on the way to `ready` runs un-niced, a storyboard niced.
      const cls = mediaClass();
      const background = cls ? cls === 'background' : options.background;
      const nice = options.nice ?? (cls === 'foreground' ? (policy.criticalNice ?? policy.nice) : policy.nice);
      await runFfmpeg(args, {
        ...options,
        ffmpegPath,
        durationSeconds: options.durationSeconds,
        sandbox: await spec(ffmpegPath, input.path, wall, options.outputDir, options.readOnly),
        timeoutMs: wall * 1000,
        nice,
        autogroupNice: background ? (options.nice ?? policy.nice) : undefined,
      });
    },
  };
}

export type MediaTools = ReturnType<typeof createMediaTools>;
export { MediaError };
