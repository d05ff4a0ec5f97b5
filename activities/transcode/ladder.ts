// The transcode room's activities (issue 11): plan, passthrough remux, chunk encodes, stitching.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { fetchMark } from '../../lib/watermarks/local';
import { markOfVideo } from '../../lib/watermarks/store';
import {
  createMediaTools,
  chunkLadderArgs,
  chunkPlaylistName,
  keyframeScanArgs,
  measuredBandwidth,
  parseKeyframes,
  parseMediaPlaylist,
  passthroughEligibility,
  planChunks,
  remuxArgs,
  stitchPlaylists,
  type Chunk,
  type Eligibility,
  type PlaylistRung,
  type Rung,
  STEREO_BITRATE,
} from '../../lib/media';
import { PASSTHROUGH_RENDITION } from '../../lib/outputs/passthrough';
import { readText as readStoredText } from '../../lib/outputs/segments';
import { keys } from '../../lib/storage';
import { withTempDir } from '../outputs/common';
import { renditionProgressSignal } from '../../workflows/video/defs';
import type { ActivityDeps } from '../deps';
import { toFailure } from './media';
import { keyframeIndex } from './keyframes';
import { ladderProgressReporter, type ChunkProgress } from './progress';

const PLAYLIST_TYPE = 'application/vnd.apple.mpegurl';
/** The passthrough rendition's folder next to the rungs' (`hls/source/`). */
export const PASSTHROUGH_NAME = PASSTHROUGH_RENDITION;

/** Heartbeats every second (so cancellation reaches ffmpeg) with the latest progress. */
function heartbeating<T>(fn: (progress: (pct: number) => void) => Promise<T>): Promise<T> {
  const ctx = Context.current();
  let progress = 0;
  const beat = setInterval(() => ctx.heartbeat({ progress }), 1000);
  return fn((pct) => {
    progress = pct;
    ctx.heartbeat({ progress });
  }).finally(() => clearInterval(beat));
}

export function ladderActivities({ config, db, storage, temporal, log }: ActivityDeps) {
  // Every ffmpeg/ffprobe on user media goes through the media policy: allow-lists, sandbox, bounds.
  const media = createMediaTools(config.media);
  const segmentSeconds = config.media.segmentSeconds;

  async function uploadDir(dir: string, prefix: string): Promise<string[]> {
    const files = (await fs.readdir(dir)).sort();
    const ctx = Context.current();
    // Segments first, playlists last: a playlist never names a segment that is not there yet.
    for (const f of [...files.filter((x) => x.endsWith('.ts')), ...files.filter((x) => x.endsWith('.m3u8'))]) {
      await storage.putFile(prefix + f, path.join(dir, f), { contentType: f.endsWith('.ts') ? 'video/mp2t' : PLAYLIST_TYPE });
      ctx.heartbeat({ uploading: f });
    }
    return files;
  }

  /** Sizes of a playlist's segments in storage, a few HEADs at a time. */
  async function segmentSizes(prefix: string, segments: ReadonlyArray<{ seconds: number; uri: string }>): Promise<Array<{ seconds: number; bytes: number }>> {
    const out: Array<{ seconds: number; bytes: number }> = new Array(segments.length);
    let next = 0;
    const worker = async () => {
      while (next < segments.length) {
        const i = next++;
        const head = await storage.head(prefix + segments[i].uri);
        if (!head) throw new Error(`missing ${prefix + segments[i].uri}`);
        out[i] = { seconds: segments[i].seconds, bytes: head.size };
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, segments.length) }, worker));
    return out;
  }

  async function readText(key: string): Promise<string> {
    const text = await readStoredText(storage, key);
    if (text === null) throw new Error(`missing ${key}`);
    return text;
  }

  return {
    /** Probe, keyframe scan, passthrough eligibility and the chunk plan, from config. */
    async planTranscode(p: { storageKey: string; /** SPEC §19 (audio-v1): audio-only sources are accepted, and the passthrough is video only. */ audioRenditions?: boolean }) {
      try {
        const signal = Context.current().cancellationSignal;
        const input = await media.open(await storage.mediaSource(p.storageKey), signal, { allowAudioOnly: p.audioRenditions });
        const info = input.info;
        const head = await storage.head(p.storageKey);
        if (!info.hasVideo) {
          const none: Eligibility = { eligible: false, reason: 'audio only' };
          return { info: { ...info, sizeBytes: head?.size ?? info.sizeBytes }, passthrough: none, chunks: [{ index: 0, start: 0, end: null }] };
        }
        // SPEC §23: an MP4's keyframes come from its sample tables (moov only, whatever the
        // length); other containers, or tables that were refused, take the packet scan.
        const indexed = input.demuxer === 'mov' ? await keyframeIndex(storage, media, p.storageKey, input, signal) : null;
        const keyframes = indexed?.ok
          ? [...new Set(indexed.index.keyframes.map((k) => Math.round(k.time * 1e6) / 1e6))].sort((a, b) => a - b)
          : parseKeyframes(await media.ffprobe(keyframeScanArgs(input.path, input.inputArgs), input, signal));
        const audio = p.audioRenditions ? null : info.streams.audio;
        const passthrough: Eligibility = config.media.passthrough
          ? passthroughEligibility({ ...info, ...info.streams, audio, keyframes }, segmentSeconds)
          : { eligible: false, reason: 'disabled (TRANSCODE_PASSTHROUGH=false)' };
        const chunks = planChunks({
          keyframes,
          durationSeconds: info.durationSeconds,
          chunkSeconds: config.media.chunkSeconds,
          thresholdSeconds: config.media.chunkThresholdSeconds,
        });
        return { info: { ...info, sizeBytes: head?.size ?? info.sizeBytes }, passthrough, chunks };
      } catch (err) {
        throw toFailure(err);
      }
    },

    /** The source copied (no re-encode) into `hls/source/`; returns its master playlist entry. */
    async remuxPassthrough(p: {
      workspaceId: string;
      videoId: string;
      storageKey: string;
      hasAudio: boolean;
      width: number;
      height: number;
      codecs: string;
      /** The top rung's name when the source IS that rung (SPEC §21); else the `source` folder. */
      name?: string;
    }): Promise<PlaylistRung> {
      const name = p.name ?? PASSTHROUGH_NAME;
      return heartbeating(() =>
        withTempDir(async (dir) => {
          const signal = Context.current().cancellationSignal;
          let groupAudio = false;
          try {
            const input = await media.open(await storage.mediaSource(p.storageKey), signal);
            groupAudio = !p.hasAudio && input.info.hasAudio;
            const args = remuxArgs({ input: input.path, inputArgs: input.inputArgs, outputDir: dir, hasAudio: p.hasAudio, segmentSeconds });
            await media.ffmpeg(args, input, { outputDir: dir, signal, durationSeconds: input.info.durationSeconds });
          } catch (err) {
            throw toFailure(err);
          }
          const segments = parseMediaPlaylist(await fs.readFile(path.join(dir, 'index.m3u8'), 'utf8'));
          const sizes = await Promise.all(segments.map(async (s) => ({ seconds: s.seconds, bytes: (await fs.stat(path.join(dir, s.uri))).size })));
          const bw = measuredBandwidth(sizes);
          await uploadDir(dir, keys.rendition(p.workspaceId, p.videoId, name));
          if (name !== PASSTHROUGH_NAME) await db('renditions').where({ video_id: p.videoId, name }).update({ bitrate: bw.average, peak_bitrate: bw.peak });
          // Measured, so BANDWIDTH is the true peak of the segments. Video-only segments play with
          // the AUDIO group's stereo rendition: its bitrate is added (SPEC §23, RFC 8216 §4.3.4.2).
          return { name, width: p.width, height: p.height, videoBitrate: bw.average, maxrate: bw.peak, bufsize: 0, audioBitrate: groupAudio ? STEREO_BITRATE : 0, codecs: p.codecs };
        }, 'vidhost-'),
      );
    },

    /**
     * One chunk into every rung of the group with a single decode; uploads each rung's segments
     * and chunk playlist. Idempotent: a retry rewrites the same keys.
     */
    async encodeChunk(p: {
      workspaceId: string;
      videoId: string;
      storageKey: string;
      rungs: Rung[];
      chunk: Chunk;
      hasAudio: boolean;
      fps: number | null;
      durationSeconds: number | null;
      /** Report progress to the workflow (worth it only when the chunk is the whole source). */
      signalProgress?: boolean;
      /** Since issue 47: report this chunk's progress as its share of the group (ladderProgressSignal). */
      progress?: ChunkProgress;
    }): Promise<{ segments: number }> {
      const ctx = Context.current();
      const workflowId = ctx.info.workflowExecution?.workflowId;
      const handle = p.signalProgress && workflowId ? temporal.workflow.getHandle(workflowId) : undefined;
      const seconds = p.chunk.end !== null ? p.chunk.end - p.chunk.start : p.durationSeconds !== null ? p.durationSeconds - p.chunk.start : null;
      let lastSignal = 0;
      let lastPct = 0;
      const report = ladderProgressReporter(temporal, log, p.rungs.map((r) => r.name), p.progress);
      return heartbeating((beat) =>
        withTempDir(async (dir) => {
          for (const r of p.rungs) await fs.mkdir(path.join(dir, r.name));
          let input: Awaited<ReturnType<typeof media.open>>;
          try {
            input = await media.open(await storage.mediaSource(p.storageKey), ctx.cancellationSignal);
          } catch (err) {
            throw toFailure(err);
          }
          // SPEC §24: the video's mark, burnt into every rung of the chunk.
          const wm = await fetchMark(storage, await markOfVideo(db, p.videoId));
          const args = chunkLadderArgs({ input: input.path, inputArgs: input.inputArgs, outputRoot: dir, rungs: p.rungs, chunk: p.chunk, hasAudio: p.hasAudio, segmentSeconds, fps: p.fps, preset: config.media.x264Preset, rateControl: config.media.rateControl, mark: wm?.mark });
          const onProgress = (pct: number) => {
            beat(pct);
            report?.(pct);
            const now = Date.now();
            // ≤ 50 signals a rung, as transcodeRendition: they land in the workflow's history.
            if (handle && now - lastSignal >= 2000 && pct - lastPct >= 2 && pct < 100) {
              lastSignal = now;
              lastPct = pct;
              for (const r of p.rungs) handle.signal(renditionProgressSignal, { name: r.name, progress: pct }).catch((err) => log.debug({ err }, 'progress signal failed'));
            }
          };
          try {
            await media.ffmpeg(args, input, { outputDir: dir, durationSeconds: seconds, onProgress, signal: ctx.cancellationSignal, background: true, readOnly: wm?.readOnly });
          } catch (err) {
            throw toFailure(err);
          } finally {
            await wm?.dispose();
          }
          let segments = 0;
          for (const r of p.rungs) {
            const files = await uploadDir(path.join(dir, r.name), keys.rendition(p.workspaceId, p.videoId, r.name));
            segments += files.filter((f) => f.endsWith('.ts')).length;
          }
          return { segments };
        }, 'vidhost-'),
      );
    },

    /**
     * Each rung's `index.m3u8` from its chunk playlists, in order; then its real bitrate, from the
     * segments' sizes and durations, recorded on the rendition's row (the master playlist's
     * BANDWIDTH and AVERAGE-BANDWIDTH come from there: SPEC §21).
     */
    async stitchRenditions(p: { workspaceId: string; videoId: string; rungs: string[]; chunks: number }): Promise<void> {
      for (const name of p.rungs) {
        const prefix = keys.rendition(p.workspaceId, p.videoId, name);
        const texts: string[] = [];
        for (let i = 0; i < p.chunks; i++) texts.push(await readText(prefix + chunkPlaylistName(i)));
        const text = stitchPlaylists(texts);
        await storage.put(prefix + 'index.m3u8', text, { contentType: PLAYLIST_TYPE });
        const bw = measuredBandwidth(await segmentSizes(prefix, parseMediaPlaylist(text)));
        await db('renditions').where({ video_id: p.videoId, name }).update({ bitrate: bw.average, peak_bitrate: bw.peak });
        Context.current().heartbeat({ stitched: name });
      }
    },
  };
}
