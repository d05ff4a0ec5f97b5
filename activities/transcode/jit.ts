// Just-in-time packaging (SPEC §23, docs/transcoding.md): the playlists of a passthrough-eligible
// source from its keyframe index, published at once with every segment listed; the CDN cuts each
// segment on first request (lib/playback/jit.ts), and `materializeJit` cuts the rest behind
// `ready` so every later job (images, MP4, storyboard) finds a complete rendition.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { codecsFor, createMediaTools, crfOffset, measuredBandwidth, type Rung, planAudioTracks, safeInputArgs, isRemoteInput, STEREO_BITRATE, type AudioStream, type PlaylistRung } from '../../lib/media';
import { MAX_KEYFRAME_SPACING_SEGMENTS } from '../../lib/media/passthrough';
import { gridJitSegments, JIT_ENCODE_MIN_OFFSET, JIT_ENCODE_SEGMENT_SECONDS, JIT_PRESETS, jitBandwidth, jitDurations, jitPlaylist, jitSegmentName, jitWholeArgs, planJitSegments, TS_OVERHEAD, type JitPlan } from '../../lib/media/jit';
import { jitAudioRendition, jitPlanKey, readJitPlan } from '../../lib/playback/jit';
import { keys } from '../../lib/storage';
import { withTempDir } from '../outputs/common';
import type { ActivityDeps } from '../deps';
import { audioKey } from '../audio/tracks';
import { nameOfLanguage } from '../audio';
import { keyframeIndex } from './keyframes';
import { toFailure } from './media';

const PLAYLIST_TYPE = 'application/vnd.apple.mpegurl';

export function jitActivities({ config, db, storage, log }: ActivityDeps) {
  const media = createMediaTools(config.media);
  const segmentSeconds = config.media.segmentSeconds;

  type PrepareParams = { workspaceId: string; videoId: string; storageKey: string; demuxer: string | null; name: string; width: number; height: number; audioStreams: AudioStream[] };

  /** The video plan and playlist, then one AAC plan per audio track on the same boundaries, and the tracks' rows. */
  async function publishPlans(p: PrepareParams, video: JitPlan, bw: { peak: number; average: number }, codecs: string): Promise<PlaylistRung & { segments: number }> {
    const prefix = keys.rendition(p.workspaceId, p.videoId, p.name);
    const playlist = jitPlaylist(video);
    // The plan first, the playlist last: a listed segment can always be cut.
    await storage.put(jitPlanKey(prefix), JSON.stringify(video), { contentType: 'application/json' });
    await storage.put(prefix + 'index.m3u8', playlist, { contentType: PLAYLIST_TYPE });
    const tracks = await publishAudioPlans({ db, storage }, p, video);
    if (p.name !== 'source') await db('renditions').where({ video_id: p.videoId, name: p.name }).update({ bitrate: bw.average, peak_bitrate: bw.peak });
    return {
      name: p.name, width: p.width, height: p.height, videoBitrate: bw.average, maxrate: bw.peak, bufsize: 0,
      // The variant plays with the AUDIO group's stereo rendition: its BANDWIDTH counts it (RFC 8216 §4.3.4.2).
      audioBitrate: tracks ? STEREO_BITRATE : 0,
      codecs, segments: video.boundaries.length,
    };
  }

  return {
    /**
     * The video rendition `name` (`source`, or the top rung's name when the source is that rung)
     * and one AAC rendition per audio track, as plans and VOD playlists listing every segment;
     * the audio tracks' rows are written `ready` so the master names them. With `encode` (a
     * source the passthrough cannot take) the video segments are that rung, encoded on request,
     * on a fixed grid. Null when the index cannot make a sane plan (the caller takes the old
     * path), or when turned off (TRANSCODE_JIT=false).
     */
    async prepareJit(p: PrepareParams & {
      /** RFC 6381 CODECS of the passthrough; for an encoded rung, built from the rung. */
      codecs?: string;
      durationSeconds: number | null;
      encode?: Rung & { fps: number | null };
    }): Promise<(PlaylistRung & { segments: number }) | null> {
      if (!config.media.jit) return null;
      const duration = p.durationSeconds;
      if (duration === null || !(duration > 0)) return null;
      if (p.encode) {
        const e = p.encode;
        const boundaries = gridJitSegments(duration, Math.min(segmentSeconds, JIT_ENCODE_SEGMENT_SECONDS));
        if (!boundaries) return null;
        const rc = config.media.rateControl;
        const encode = {
          width: e.width, height: e.height, videoBitrate: e.videoBitrate, maxrate: e.maxrate, bufsize: e.bufsize, fps: e.fps,
          preset: (JIT_PRESETS as readonly string[]).includes(config.media.x264Preset) ? config.media.x264Preset : 'veryfast',
          crf: rc.mode === 'crf' ? Math.max(0, rc.crf - crfOffset(e)) : null,
        };
        const video: JitPlan = { version: 1, storageKey: p.storageKey, demuxer: p.demuxer, kind: 'video', encode, offset: JIT_ENCODE_MIN_OFFSET, boundaries, durationSeconds: duration };
        // Capped: the rung's cap is its peak, plus the TS overhead.
        const peak = Math.ceil((rc.mode === 'abr' ? e.maxrate : e.videoBitrate) * TS_OVERHEAD);
        return publishPlans(p, video, { peak, average: Math.ceil(e.videoBitrate * TS_OVERHEAD) }, codecsFor(e, { fps: e.fps, hasAudio: false }));
      }
      let index;
      try {
        const source = await storage.mediaSource(p.storageKey);
        const input = { path: source, demuxer: p.demuxer, inputArgs: config.media.formatCheck ? safeInputArgs({ format: p.demuxer, remote: isRemoteInput(source) }) : [] };
        index = await keyframeIndex(storage, media, p.storageKey, input, Context.current().cancellationSignal);
      } catch (err) {
        throw toFailure(err);
      }
      if (!index.ok) {
        log.info({ videoId: p.videoId, reason: index.reason }, 'no just-in-time packaging: the keyframe index was refused');
        return null;
      }
      const boundaries = planJitSegments(index.index.keyframes.map((k) => k.time), duration, segmentSeconds, MAX_KEYFRAME_SPACING_SEGMENTS * segmentSeconds);
      if (!boundaries) {
        log.info({ videoId: p.videoId }, 'no just-in-time packaging: the keyframes make no sane segment plan');
        return null;
      }
      const offset = Math.ceil(Math.max(0, -index.index.firstDts) * 1e6) / 1e6;
      const video: JitPlan = { version: 1, storageKey: p.storageKey, demuxer: p.demuxer, kind: 'video', offset, boundaries, durationSeconds: duration };
      return publishPlans(p, video, jitBandwidth(index.index.keyframes, index.index.totalBytes, video), p.codecs ?? '');
    },

    /**
     * Every segment of a just-in-time rendition not cut yet, from one pass over the source (the
     * same bytes as the CDN's cuts), then its measured bandwidth. Idempotent.
     */
    async materializeJit(p: { workspaceId: string; videoId: string; name: string }): Promise<{ peak: number; average: number; written: number }> {
      const ctx = Context.current();
      const prefix = keys.rendition(p.workspaceId, p.videoId, p.name);
      const plan = await readJitPlan(storage, prefix);
      if (!plan) throw new Error(`no just-in-time plan under ${prefix}`);
      const beat = setInterval(() => ctx.heartbeat(), 1000);
      try {
        return await withTempDir(async (dir) => {
          const source = await storage.mediaSource(plan.storageKey);
          const input = { path: source, demuxer: plan.demuxer, inputArgs: config.media.formatCheck ? safeInputArgs({ format: plan.demuxer, remote: isRemoteInput(source) }) : [] };
          try {
            await media.ffmpeg(jitWholeArgs({ plan, input: source, inputArgs: input.inputArgs, outputDir: dir }), input, { outputDir: dir, durationSeconds: plan.durationSeconds, signal: ctx.cancellationSignal, background: true });
          } catch (err) {
            throw toFailure(err);
          }
          const durations = jitDurations(plan);
          const sizes: Array<{ seconds: number; bytes: number }> = [];
          let written = 0;
          for (let i = 0; i < plan.boundaries.length; i++) {
            const name = jitSegmentName(i);
            const file = path.join(dir, name);
            const stat = await fs.stat(file).catch(() => null);
            if (!stat) throw new Error(`the whole pass made no ${name}`);
            sizes.push({ seconds: durations[i], bytes: stat.size });
            // A segment the CDN already cut is the same bytes: never stored twice.
            if (!(await storage.head(prefix + name))) {
              await storage.putFile(prefix + name, file, { contentType: 'video/mp2t' });
              written++;
            }
            ctx.heartbeat({ segment: i });
          }
          const bw = measuredBandwidth(sizes);
          if (p.name !== 'source') await db('renditions').where({ video_id: p.videoId, name: p.name }).update({ bitrate: bw.average, peak_bitrate: bw.peak });
          return { ...bw, written };
        }, 'vidhost-jit-');
      } finally {
        clearInterval(beat);
      }
    },
  };
}

/**
 * One AAC plan and playlist per audio track of the source, on the video plan's boundaries and
 * timeline, and the tracks' rows written `ready` (so the master names them); the video's audio
 * layout becomes the AUDIO group. Returns how many tracks.
 */
export async function publishAudioPlans(deps: Pick<ActivityDeps, 'db' | 'storage'>, p: { workspaceId: string; videoId: string; audioStreams: AudioStream[] }, video: JitPlan): Promise<number> {
  const { db, storage } = deps;
  const playlist = jitPlaylist(video);
  const { encode: _encode, midGop: _midGop, ...base } = video;
  const rows: Array<Record<string, unknown>> = [];
  for (const t of planAudioTracks(p.audioStreams, nameOfLanguage)) {
    const rendition = jitAudioRendition(t.rendition);
    const plan: JitPlan = { ...base, kind: 'audio', stream: t.stream, channels: t.channels, bitrate: t.bitrate };
    const at = audioKey(p.workspaceId, p.videoId, rendition);
    await storage.put(jitPlanKey(at), JSON.stringify(plan), { contentType: 'application/json' });
    await storage.put(at + 'index.m3u8', playlist, { contentType: PLAYLIST_TYPE });
    rows.push({
      video_id: p.videoId, rendition, ordinal: rows.length, language: t.language, name: t.name, is_default: t.isDefault,
      channels: t.channels, bitrate: t.bitrate, status: 'ready', origin: 'source', loudness_lufs: null, error_message: null,
    });
  }
  await db.transaction(async (tx) => {
    await tx('audio_tracks').where({ video_id: p.videoId, origin: 'source' }).delete();
    if (rows.length) await tx('audio_tracks').insert(rows).onConflict(['video_id', 'rendition']).merge();
    await tx('videos').where({ id: p.videoId }).update({ audio_layout: 'group', updated_at: tx.fn.now() });
  });
  return rows.length;
}
