// The live worker's side of a broadcast: reading the feed from the live edge with ffprobe and
// ffmpeg, both in the media sandbox (bubblewrap + rlimits) with the protocol and format
// allow-lists. The one exception to the sandbox's "no network": the input is the edge's
// `GET /feed/{ls}` (MPEG-TS over chunked HTTP, with the edge's credential; ingest/feed), so the
// sandbox keeps the network namespace (as for an S3 input); the allow-lists limit ffmpeg to http
// over tcp and the MPEG-TS demuxer.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import type { Config } from '../config';
import { detectPrlimit, resolveSandbox, rlimitsFor, runFfprobe, sandboxedCommand, type SandboxSpec } from '../media';
import { edgeHeaderLines } from './edge';
import { type FeedInfo, feedInputArgs } from './ladder';

const tool = (name: string) => (name.includes('/') ? path.resolve(name) : name);

/** Where a live worker reads a broadcast (by stream id, whatever protocol it arrived by); it takes the edge's credential (feedHeaders). */
export function feedUrl(config: Config, liveStreamId: string): string {
  return `${config.live.edgeInternalUrl}/feed/${encodeURIComponent(liveStreamId)}`;
}

/** The feed's request headers, for ffmpeg's `-headers`. */
export const feedHeaders = (config: Config): string => edgeHeaderLines(config);

async function spec(config: Config, toolPath: string, input: string, wallSeconds: number, outputDir?: string): Promise<SandboxSpec> {
  const sandbox = await resolveSandbox(config.media.sandbox);
  return {
    mode: sandbox.mode,
    prlimit: await detectPrlimit(),
    tool: toolPath,
    input,
    outputDir,
    limits: rlimitsFor(wallSeconds, config.media.limits),
    readOnly: toolPath.startsWith('/') && !toolPath.startsWith('/usr/') ? [toolPath] : [],
  };
}

/** What the encoder sends, from a few seconds of the feed; throws when nothing arrives. */
export async function probeFeed(config: Config, url: string, signal?: AbortSignal): Promise<FeedInfo> {
  const ffprobe = tool(config.media.ffprobePath);
  const out = await runFfprobe(
    ['-v', 'error', ...feedInputArgs(feedHeaders(config)), '-analyzeduration', '1500000', '-probesize', '2000000', '-print_format', 'json', '-show_format', '-show_streams', url],
    { ffprobePath: ffprobe, sandbox: await spec(config, ffprobe, url, 30), timeoutMs: 20_000, signal, maxStdout: 1024 * 1024 },
  );
  const j = JSON.parse(out) as { streams?: Array<Record<string, string | number>>; format?: Record<string, string> };
  const v = j.streams?.find((s) => s.codec_type === 'video');
  const a = j.streams?.find((s) => s.codec_type === 'audio');
  const rate = String(v?.avg_frame_rate ?? v?.r_frame_rate ?? '0/1').split('/').map(Number);
  const fps = rate[1] ? rate[0] / rate[1] : null;
  const bitrate = Number(j.format?.bit_rate ?? 0) || null;
  return {
    videoCodec: v ? String(v.codec_name) : null,
    audioCodec: a ? String(a.codec_name) : null,
    width: Number(v?.width ?? 0),
    height: Number(v?.height ?? 0),
    fps: fps && Number.isFinite(fps) ? fps : null,
    bitrate,
    bFrames: Number(v?.has_b_frames ?? 0) > 0,
  };
}

/** Starts the live ffmpeg; `stop()` asks it to finish (q on stdin: the last segment is flushed); `onStdout` reads its stdout (the health meter). */
export async function startLiveFfmpeg(
  config: Config,
  args: string[],
  url: string,
  dir?: string,
  onStdout?: (chunk: string) => void,
  /** Files ffmpeg reads besides the feed (the watermark image, SPEC §24): bound read-only into the sandbox. */
  inputs: string[] = [],
): Promise<{ child: ChildProcess; exited: Promise<{ code: number | null; stderr: string }>; stop: () => void }> {
  const ffmpeg = tool(config.media.ffmpegPath);
  const { command, args: argv } = sandboxedCommand({ ...(await spec(config, ffmpeg, url, 13 * 3600, dir)), inputs }, args);
  // Niceness 0 (unlike VOD runs, MEDIA_FFMPEG_NICE): a live encode comes first on a shared machine.
  const child = spawn(command, argv, { stdio: ['pipe', onStdout ? 'pipe' : 'ignore', 'pipe'] });
  if (onStdout) {
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', onStdout);
  }
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (c: string) => {
    stderr = (stderr + c).slice(-16_384);
  });
  child.stdin!.on('error', () => undefined);
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => {
    child.once('error', () => resolve({ code: -1, stderr }));
    child.once('close', (code) => resolve({ code, stderr }));
  });
  let stopping: NodeJS.Timeout | undefined;
  const stop = () => {
    if (stopping || child.exitCode !== null) return;
    child.stdin!.write('q');
    stopping = setTimeout(() => child.kill('SIGKILL'), 5000);
    void exited.then(() => clearTimeout(stopping));
  };
  return { child, exited, stop };
}
