// ffmpeg and hostile media (issue 9, SPEC §12), the transcode room (issue 11) and encoding (issue 28, SPEC §21).
import os from 'node:os';
import { z } from 'zod';
import type { RateControl } from '../media/args';
import type { MediaLimits } from '../media/limits';
import type { MediaPolicy } from '../media/tools';
import { bool, type EnvOf } from './env';

export const mediaEnv = {
  FFMPEG_PATH: z.string().default('ffmpeg'),
  FFPROBE_PATH: z.string().default('ffprobe'),
  X264_PRESET: z.string().default('veryfast'),
  HLS_SEGMENT_SECONDS: z.coerce.number().int().min(1).max(20).default(6),

  // media room (issue 9): hostile media — sandbox, bounds, rlimits (SPEC §12)
  MEDIA_SANDBOX: z.enum(['bwrap', 'none', 'auto']).default('auto'),
  MEDIA_MAX_WIDTH: z.coerce.number().int().min(16).default(8192),
  MEDIA_MAX_HEIGHT: z.coerce.number().int().min(16).default(8192),
  MEDIA_MAX_FPS: z.coerce.number().min(1).default(240),
  MEDIA_MAX_DURATION_SECONDS: z.coerce.number().min(1).default(12 * 3600),
  MEDIA_WALL_TIME_FACTOR: z.coerce.number().min(0.1).default(20),
  MEDIA_MIN_WALL_SECONDS: z.coerce.number().int().min(1).default(300),
  MEDIA_MAX_MEMORY_MB: z.coerce.number().int().min(64).default(8192),
  MEDIA_MAX_OUTPUT_FILE_MB: z.coerce.number().int().min(1).default(16384),
  MEDIA_CPU_PER_WALL_SECOND: z.coerce.number().min(0.1).optional(),
  /** Scheduling niceness of VOD ffmpeg runs (0–19); live encodes keep 0, so they come first on a shared machine (SPEC §17). */
  MEDIA_FFMPEG_NICE: z.coerce.number().int().min(0).max(19).default(10),
  /**
   * SPEC §25: niceness of ffmpeg runs someone waits for (the way to `ready`, an alignment), below
   * MEDIA_FFMPEG_NICE so the encodes behind `ready` yield to them. Capped at MEDIA_FFMPEG_NICE.
   */
  MEDIA_CRITICAL_NICE: z.coerce.number().int().min(0).max(19).default(2),
  /** Test-only: turns the input allow-lists off to prove the sandbox holds alone. Refused outside NODE_ENV=test. */
  MEDIA_TEST_DISABLE_FORMAT_CHECK: bool.default(false),

  // transcode room (issue 11): passthrough rendition and chunked encodes (docs/transcoding.md)
  TRANSCODE_PASSTHROUGH: bool.default(true),
  /** SPEC §23: playlists from the keyframe index at once, segments cut on first request (docs/transcoding.md). */
  TRANSCODE_JIT: bool.default(true),
  /** Concurrent just-in-time cuts per API process, and how many may wait; a cut's time limit (ms). */
  JIT_CUT_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  JIT_CUT_QUEUE_MAX: z.coerce.number().int().min(1).max(10_000).default(64),
  JIT_CUT_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(20_000),
  /**
   * Niceness of a just-in-time cut (a viewer is waiting for it): below MEDIA_FFMPEG_NICE, so the
   * ladder encoding behind `ready` on the same machine does not starve it (SPEC §23: the playhead
   * never waits more than 2 s). Capped at MEDIA_FFMPEG_NICE.
   */
  JIT_CUT_NICE: z.coerce.number().int().min(0).max(19).default(2),
  TRANSCODE_CHUNK_THRESHOLD_SECONDS: z.coerce.number().min(1).default(120),
  TRANSCODE_CHUNK_SECONDS: z.coerce.number().min(1).default(30),
  // encoding efficiency (issue 28, SPEC §21): capped CRF, quality floor (docs/transcoding.md)
  TRANSCODE_RATE_CONTROL: z.enum(['crf', 'abr']).default('crf'),
  TRANSCODE_CRF: z.coerce.number().int().min(0).max(51).default(23),
  /** SSIM (dB) under which a rendition is reported as below the quality floor. */
  QUALITY_FLOOR_SSIM_DB: z.coerce.number().min(0).max(100).default(12),
};

export interface MediaConfig {
  ffmpegPath: string;
  ffprobePath: string;
  x264Preset: string;
  segmentSeconds: number;
  sandbox: MediaPolicy['sandbox'];
  limits: MediaLimits;
  formatCheck: boolean;
  passthrough: boolean;
  jit: boolean;
  jitCuts: { concurrency: number; queueMax: number; timeoutMs: number; nice: number };
  chunkThresholdSeconds: number;
  chunkSeconds: number;
  rateControl: RateControl;
  qualityFloorSsimDb: number;
  nice: number;
  criticalNice: number;
}

export function mediaConfig(e: EnvOf<typeof mediaEnv>, nodeEnv: string): MediaConfig {
  if (e.MEDIA_TEST_DISABLE_FORMAT_CHECK && nodeEnv !== 'test') throw new Error('MEDIA_TEST_DISABLE_FORMAT_CHECK is only allowed with NODE_ENV=test');
  return {
    ffmpegPath: e.FFMPEG_PATH,
    ffprobePath: e.FFPROBE_PATH,
    x264Preset: e.X264_PRESET,
    segmentSeconds: e.HLS_SEGMENT_SECONDS,
    sandbox: e.MEDIA_SANDBOX,
    limits: {
      maxWidth: e.MEDIA_MAX_WIDTH,
      maxHeight: e.MEDIA_MAX_HEIGHT,
      maxFps: e.MEDIA_MAX_FPS,
      maxDurationSeconds: e.MEDIA_MAX_DURATION_SECONDS,
      wallTimeFactor: e.MEDIA_WALL_TIME_FACTOR,
      minWallSeconds: e.MEDIA_MIN_WALL_SECONDS,
      maxMemoryBytes: e.MEDIA_MAX_MEMORY_MB * 1024 * 1024,
      maxOutputFileBytes: e.MEDIA_MAX_OUTPUT_FILE_MB * 1024 * 1024,
      cpuPerWallSecond: e.MEDIA_CPU_PER_WALL_SECOND ?? Math.max(1, os.availableParallelism()),
    },
    formatCheck: !e.MEDIA_TEST_DISABLE_FORMAT_CHECK,

    passthrough: e.TRANSCODE_PASSTHROUGH,
    jit: e.TRANSCODE_JIT,
    jitCuts: { concurrency: e.JIT_CUT_CONCURRENCY, queueMax: e.JIT_CUT_QUEUE_MAX, timeoutMs: e.JIT_CUT_TIMEOUT_MS, nice: Math.min(e.JIT_CUT_NICE, e.MEDIA_FFMPEG_NICE) },
    chunkThresholdSeconds: e.TRANSCODE_CHUNK_THRESHOLD_SECONDS,
    chunkSeconds: e.TRANSCODE_CHUNK_SECONDS,
    rateControl: e.TRANSCODE_RATE_CONTROL === 'abr' ? { mode: 'abr' } : { mode: 'crf', crf: e.TRANSCODE_CRF },
    qualityFloorSsimDb: e.QUALITY_FLOOR_SSIM_DB,
    nice: e.MEDIA_FFMPEG_NICE,
    criticalNice: Math.min(e.MEDIA_CRITICAL_NICE, e.MEDIA_FFMPEG_NICE),
  };
}
