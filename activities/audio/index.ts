// SPEC §19 audio activities (docs/audio.md). The video pipeline (workflows/video/pipeline/ladder.ts,
// behind the `audio-v1` marker) calls encodeAudioTracks beside the video rungs; audio-only
// sources take workflows/video/pipeline/audio-only.ts: encodeAudioLadder, makeAudioPoster,
// publishAudioOnlyMaster. Every write is by key (rows upserted, files overwritten): idempotent.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import {
  AUDIO_ONLY_LADDER,
  audioLadderArgs,
  audioOnlyMaster,
  audioRenditionArgs,
  coverArtArgs,
  createMediaTools,
  loudnessArgs,
  type LoudnessMeasure,
  parseLoudness,
  planAudioTracks,
  type SafeInput,
  waveformArgs,
} from '../../lib/media';
import { withMasterLock, writeMaster } from '../../lib/outputs/publish';
import { keys } from '../../lib/storage';
import { withTempDir } from '../outputs/common';
import type { ActivityDeps } from '../deps';
import { toFailure } from '../transcode/media';
import { addedTrackActivities, audioKey } from './tracks';

const PLAYLIST_TYPE = 'application/vnd.apple.mpegurl';
const languageNames = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'code' });
export const nameOfLanguage = (l: string): string => languageNames.of(l) ?? l;

/** Heartbeats every second, so a cancellation reaches ffmpeg while it runs. */
async function heartbeating<T>(fn: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const beat = setInterval(() => ctx.heartbeat(), 1000);
  try {
    return await fn();
  } finally {
    clearInterval(beat);
  }
}

export function audioActivities(deps: ActivityDeps) {
  const { config, db, storage } = deps;
  const media = createMediaTools(config.media);
  const segmentSeconds = config.media.segmentSeconds;

  /** EBU R128 integrated loudness and the rest of loudnorm's pass 1; null for silence. */
  async function measure(input: SafeInput, stream: number, durationSeconds: number | null, dir: string): Promise<LoudnessMeasure | null> {
    let tail = '';
    await media.ffmpeg(loudnessArgs({ input: input.path, inputArgs: input.inputArgs, stream }), input, {
      outputDir: dir,
      durationSeconds,
      signal: Context.current().cancellationSignal,
      onStderrTail: (t) => (tail = t),
      background: true,
    });
    return parseLoudness(tail);
  }

  async function uploadDir(dir: string, prefix: string): Promise<void> {
    const files = (await fs.readdir(dir)).sort();
    // Segments first, the playlist last: it never names a segment that is not there yet.
    for (const f of [...files.filter((x) => x.endsWith('.ts')), ...files.filter((x) => x.endsWith('.m3u8'))]) {
      await storage.putFile(prefix + f, path.join(dir, f), { contentType: f.endsWith('.ts') ? 'video/mp2t' : PLAYLIST_TYPE });
      Context.current().heartbeat();
    }
  }

  const normalizeOf = async (videoId: string): Promise<boolean> => Boolean((await db('videos').where({ id: videoId }).first('normalize_audio'))?.normalize_audio);

  return {
    ...addedTrackActivities(deps),

    /**
     * Every audio stream of the source as its own rendition (stereo AAC; a surround stream also
     * as 5.1), measured (EBU R128) and, with normalize_audio, normalised to −16 LUFS. Rows are
     * written `ready`; the master names them from the next publication on (lib/outputs/audio.ts).
     */
    async encodeAudioTracks(p: { workspaceId: string; videoId: string; storageKey: string }): Promise<{ tracks: number; loudnessLufs: number | null }> {
      return heartbeating(() =>
        withTempDir(async (dir) => {
          const signal = Context.current().cancellationSignal;
          const normalize = await normalizeOf(p.videoId);
          const rows: Array<Record<string, unknown>> = [];
          let loudness: number | null = null;
          try {
            const input = await media.open(await storage.mediaSource(p.storageKey), signal);
            const duration = input.info.durationSeconds;
            const plan = planAudioTracks(input.info.audioStreams, nameOfLanguage);
            const measures = new Map<number, LoudnessMeasure | null>();
            for (const t of plan) {
              if (!measures.has(t.stream)) measures.set(t.stream, await measure(input, t.stream, duration, dir));
              const m = measures.get(t.stream) ?? null;
              if (t.isDefault) loudness = m ? m.inputI : null;
              const out = path.join(dir, t.rendition);
              await fs.mkdir(out);
              const args = audioRenditionArgs({ input: input.path, inputArgs: input.inputArgs, outputDir: out, stream: t.stream, channels: t.channels, bitrate: t.bitrate, segmentSeconds, loudnorm: normalize ? m : null });
              await media.ffmpeg(args, input, { outputDir: dir, durationSeconds: duration, signal, background: true });
              await uploadDir(out, audioKey(p.workspaceId, p.videoId, t.rendition));
              rows.push({
                video_id: p.videoId, rendition: t.rendition, ordinal: rows.length, language: t.language, name: t.name, is_default: t.isDefault,
                channels: t.channels, bitrate: t.bitrate, status: 'ready', origin: 'source', loudness_lufs: m ? m.inputI : null, error_message: null,
              });
            }
          } catch (err) {
            throw toFailure(err);
          }
          await db.transaction(async (tx) => {
            // A retry (or a re-run after `retry`) replaces the source's rows; added tracks stay.
            await tx('audio_tracks').where({ video_id: p.videoId, origin: 'source' }).delete();
            if (rows.length) await tx('audio_tracks').insert(rows).onConflict(['video_id', 'rendition']).merge();
            await tx('videos').where({ id: p.videoId }).update({ loudness_lufs: loudness, audio_layout: 'group', updated_at: tx.fn.now() });
          });
          return { tracks: rows.length, loudnessLufs: loudness };
        }, 'vidhost-audio-'),
      );
    },

    /** The audio-only ladder (64 and 128 kb/s AAC) from one decode, measured and optionally normalised. */
    async encodeAudioLadder(p: { workspaceId: string; videoId: string; storageKey: string }): Promise<{ loudnessLufs: number | null }> {
      return heartbeating(() =>
        withTempDir(async (dir) => {
          const signal = Context.current().cancellationSignal;
          const normalize = await normalizeOf(p.videoId);
          let loudness: number | null;
          try {
            const input = await media.open(await storage.mediaSource(p.storageKey), signal, { allowAudioOnly: true });
            const duration = input.info.durationSeconds;
            const m = await measure(input, 0, duration, dir);
            loudness = m ? m.inputI : null;
            for (const r of AUDIO_ONLY_LADDER) await fs.mkdir(path.join(dir, r.name));
            await media.ffmpeg(audioLadderArgs({ input: input.path, inputArgs: input.inputArgs, outputRoot: dir, segmentSeconds, loudnorm: normalize ? m : null }), input, { outputDir: dir, durationSeconds: duration, signal });
          } catch (err) {
            throw toFailure(err);
          }
          for (const r of AUDIO_ONLY_LADDER) await uploadDir(path.join(dir, r.name), keys.rendition(p.workspaceId, p.videoId, r.name));
          await db('videos').where({ id: p.videoId }).update({ loudness_lufs: loudness, audio_layout: 'audio_only', width: null, height: null, updated_at: db.fn.now() });
          return { loudnessLufs: loudness };
        }, 'vidhost-audio-'),
      );
    },

    /** An audio-only video's poster: its cover art when it has one, else its waveform. */
    async makeAudioPoster(p: { workspaceId: string; videoId: string; storageKey: string; durationSeconds: number | null; coverArt: boolean }): Promise<void> {
      await withTempDir(async (dir) => {
        const output = path.join(dir, 'thumbnail.jpg');
        const signal = Context.current().cancellationSignal;
        try {
          const input = await media.open(await storage.mediaSource(p.storageKey), signal, { allowAudioOnly: true });
          const run = { outputDir: dir, signal, durationSeconds: p.durationSeconds };
          if (p.coverArt) await media.ffmpeg(coverArtArgs({ input: input.path, inputArgs: input.inputArgs, output }), input, run).catch(() => undefined);
          if (!(await fs.stat(output).catch(() => null))) await media.ffmpeg(waveformArgs({ input: input.path, inputArgs: input.inputArgs, output }), input, run);
        } catch (err) {
          throw toFailure(err);
        }
        await storage.putFile(keys.thumbnail(p.workspaceId, p.videoId), output, { contentType: 'image/jpeg' });
      }, 'vidhost-audio-');
    },

    /** The audio-only master: one variant per ready rung (with the captions, under the master lock). */
    async publishAudioOnlyMaster(p: { workspaceId: string; videoId: string; rungs: string[] }): Promise<void> {
      const text = audioOnlyMaster(AUDIO_ONLY_LADDER.filter((r) => p.rungs.includes(r.name)));
      await withMasterLock(db, p.videoId, () => writeMaster(db, storage, { workspaceId: p.workspaceId, videoId: p.videoId, text }));
    },
  };
}
