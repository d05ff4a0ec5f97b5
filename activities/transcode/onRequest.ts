// SPEC §23 second round (issue 47): a source the passthrough refuses is `ready` with its rungs up
// to 1080p encoded segment by segment on request (the CDN: lib/playback/jit.ts), and the ladder
// behind it encodes the very same segments (boundaries, timestamps, encoder settings) into the
// same folders, so each rung turns from "encoded on request" into "encoded" segment by segment
// without a player seeing a seam (lib/media/jitEncode.ts, docs/transcoding.md).
import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { fetchMark } from '../../lib/watermarks/local';
import { markOfVideo } from '../../lib/watermarks/store';
import { codecsFor, createMediaTools, crfOffset, measuredBandwidth, STEREO_BITRATE, type AudioStream, type PlaylistRung, type Rung } from '../../lib/media';
import { JIT_PRESETS, jitDurations, jitPlaylist, jitSegmentName, TS_OVERHEAD, type JitEncode, type JitPlan } from '../../lib/media/jit';
import { alignedChunks, alignedLadderArgs, ON_REQUEST_SEGMENT_SECONDS, planEncodeSegments, type AlignedChunk } from '../../lib/media/jitEncode';
import { jitPlanKey, readJitPlan } from '../../lib/playback/jit';
import { keys } from '../../lib/storage';
import { withTempDir } from '../outputs/common';
import type { ActivityDeps } from '../deps';
import { publishAudioPlans } from './jit';
import { keyframeIndex } from './keyframes';
import { toFailure } from './media';
import { ladderProgressReporter, type ChunkProgress } from './progress';

const PLAYLIST_TYPE = 'application/vnd.apple.mpegurl';

/** Where the ladder's aligned segments meet the on-request ones: the plan's timeline. */
export type Timeline = Pick<JitPlan, 'offset' | 'start' | 'durationSeconds'>;

export function onRequestActivities({ config, db, storage, temporal, log }: ActivityDeps) {
  const media = createMediaTools(config.media);

  /** A rung's encoder settings, the same for its on-request segments and the ladder's. */
  const encodeOf = (r: Rung, fps: number | null): JitEncode => {
    const rc = config.media.rateControl;
    return {
      width: r.width, height: r.height, videoBitrate: r.videoBitrate, maxrate: r.maxrate, bufsize: r.bufsize, fps,
      preset: (JIT_PRESETS as readonly string[]).includes(config.media.x264Preset) ? config.media.x264Preset : 'veryfast',
      crf: rc.mode === 'crf' ? Math.max(0, rc.crf - crfOffset(r)) : null,
    };
  };

  return {
    /**
     * Plans and VOD playlists (every segment listed) for each rung of `rungs` under its own name
     * (`hls/720p/`…), segments on the source's keyframes where it has them; one AAC plan per
     * audio track on the same boundaries and the tracks' rows; the ladder's chunks over the same
     * segments. Null when turned off (TRANSCODE_JIT=false) or the duration is unknown: the caller
     * encodes the lowest rung first, as before.
     */
    async prepareOnRequest(p: {
      workspaceId: string;
      videoId: string;
      storageKey: string;
      durationSeconds: number | null;
      fps: number | null;
      audioStreams: AudioStream[];
      /** The rungs offered on request, lowest first. */
      rungs: Rung[];
    }): Promise<{ rungs: PlaylistRung[]; chunks: AlignedChunk[]; timeline: Timeline; segments: number } | null> {
      const duration = p.durationSeconds;
      if (!config.media.jit || duration === null || !(duration > 0) || p.rungs.length === 0) return null;
      const signal = Context.current().cancellationSignal;
      let input;
      let index;
      try {
        input = await media.open(await storage.mediaSource(p.storageKey), signal);
        index = await keyframeIndex(storage, media, p.storageKey, input, signal);
      } catch (err) {
        throw toFailure(err);
      }
      const start = input.info.startTime ?? 0;
      // No usable index: every segment is planned on the grid (each decoded from the keyframe before it).
      const keyframes = index.ok ? index.index.keyframes.map((k) => k.time - start) : [];
      const planned = planEncodeSegments(keyframes, duration, Math.min(config.media.segmentSeconds, ON_REQUEST_SEGMENT_SECONDS));
      if (!planned) return null;
      const base = { version: 1 as const, storageKey: p.storageKey, demuxer: input.demuxer, kind: 'video' as const, offset: 0, start, ...planned, durationSeconds: duration };
      const playlist = jitPlaylist(base);
      const rc = config.media.rateControl;
      const out: PlaylistRung[] = [];
      // SPEC §24: the plan names the video's mark, so every on-request segment carries it.
      const mark = await markOfVideo(db, p.videoId);
      for (const r of p.rungs) {
        const encode: JitEncode = { ...encodeOf(r, p.fps), ...(mark ? { mark } : {}) };
        const prefix = keys.rendition(p.workspaceId, p.videoId, r.name);
        // The plan first, the playlist last: a listed segment can always be made.
        await storage.put(jitPlanKey(prefix), JSON.stringify({ ...base, encode }), { contentType: 'application/json' });
        await storage.put(prefix + 'index.m3u8', playlist, { contentType: PLAYLIST_TYPE });
        // Declared from the rung's cap (its peak, plus the TS overhead) until the ladder measures it.
        const peak = Math.ceil((rc.mode === 'abr' ? r.maxrate : r.videoBitrate) * TS_OVERHEAD);
        out.push({ name: r.name, width: r.width, height: r.height, videoBitrate: Math.ceil(r.videoBitrate * TS_OVERHEAD), maxrate: peak, bufsize: 0, audioBitrate: 0, codecs: codecsFor(encode, { fps: p.fps, hasAudio: false }) });
      }
      const tracks = await publishAudioPlans({ db, storage }, p, base);
      // The variants play with the AUDIO group's stereo rendition: their BANDWIDTH counts it (RFC 8216 §4.3.4.2).
      for (const r of out) r.audioBitrate = tracks ? STEREO_BITRATE : 0;
      log.info({ videoId: p.videoId, segments: base.boundaries.length, midGop: planned.midGop.length, rungs: p.rungs.map((r) => r.name) }, 'on-request rungs planned');
      return {
        rungs: out,
        chunks: alignedChunks(base, config.media.chunkSeconds, config.media.chunkThresholdSeconds),
        timeline: { offset: base.offset, start, durationSeconds: duration },
        segments: base.boundaries.length,
      };
    },

    /**
     * The ladder's encode of one aligned chunk into every rung of `rungs` (one decode), written
     * over whatever was made on request: from here on these segments are the ladder's. Niced
     * behind the on-request encodes (a viewer waits for those). Idempotent.
     */
    async encodeAlignedChunk(p: { workspaceId: string; videoId: string; storageKey: string; rungs: Rung[]; chunk: AlignedChunk; fps: number | null; timeline: Timeline; progress?: ChunkProgress }): Promise<{ segments: number }> {
      const ctx = Context.current();
      const report = ladderProgressReporter(temporal, log, p.rungs.map((r) => r.name), p.progress);
      let progress = 0;
      const beat = setInterval(() => ctx.heartbeat({ progress }), 1000);
      try {
        return await withTempDir(async (dir) => {
          const wm = await fetchMark(storage, await markOfVideo(db, p.videoId));
          try {
            const input = await media.open(await storage.mediaSource(p.storageKey), ctx.cancellationSignal);
            const rungs = p.rungs.map((r) => ({ ...encodeOf(r, p.fps), name: r.name }));
            for (const r of rungs) await fs.mkdir(path.join(dir, r.name));
            const args = alignedLadderArgs({ plan: p.timeline, rungs, chunk: p.chunk, input: input.path, inputArgs: input.inputArgs, outputRoot: dir, mark: wm?.mark });
            const onProgress = (pct: number) => {
              progress = pct;
              ctx.heartbeat({ progress });
              report?.(pct);
            };
            await media.ffmpeg(args, input, { outputDir: dir, durationSeconds: p.chunk.end - p.chunk.boundaries[0], onProgress, signal: ctx.cancellationSignal, background: true, readOnly: wm?.readOnly });
          } catch (err) {
            throw toFailure(err);
          } finally {
            await wm?.dispose();
          }
          let segments = 0;
          for (const r of p.rungs) {
            const prefix = keys.rendition(p.workspaceId, p.videoId, r.name);
            for (let i = p.chunk.first; i <= p.chunk.last; i++) {
              await storage.putFile(prefix + jitSegmentName(i), path.join(dir, r.name, jitSegmentName(i)), { contentType: 'video/mp2t' });
              segments++;
              ctx.heartbeat({ progress, uploading: `${r.name}/${i}` });
            }
          }
          return { segments };
        }, 'vidhost-');
      } finally {
        clearInterval(beat);
      }
    },

    /**
     * After every chunk: each rung's playlist (the on-request rungs have theirs since `ready`;
     * the ones above them get the same), and each rung's measured bandwidth on its row, which the
     * master's BANDWIDTH and AVERAGE-BANDWIDTH come from.
     */
    async finishAligned(p: { workspaceId: string; videoId: string; rungs: string[]; planRung: string }): Promise<void> {
      const plan = await readJitPlan(storage, keys.rendition(p.workspaceId, p.videoId, p.planRung));
      if (!plan) throw new Error(`no on-request plan under ${p.planRung}`);
      const durations = jitDurations(plan);
      for (const name of p.rungs) {
        const prefix = keys.rendition(p.workspaceId, p.videoId, name);
        if (!(await storage.head(prefix + 'index.m3u8'))) await storage.put(prefix + 'index.m3u8', jitPlaylist(plan), { contentType: PLAYLIST_TYPE });
        const sizes: Array<{ seconds: number; bytes: number }> = new Array(durations.length);
        let next = 0;
        const worker = async () => {
          while (next < durations.length) {
            const i = next++;
            const head = await storage.head(prefix + jitSegmentName(i));
            if (!head) throw new Error(`missing ${prefix + jitSegmentName(i)}`);
            sizes[i] = { seconds: durations[i], bytes: head.size };
          }
        };
        await Promise.all(Array.from({ length: Math.min(8, durations.length) }, worker));
        const bw = measuredBandwidth(sizes);
        await db('renditions').where({ video_id: p.videoId, name }).update({ bitrate: bw.average, peak_bitrate: bw.peak });
        Context.current().heartbeat({ measured: name });
      }
    },
  };
}
