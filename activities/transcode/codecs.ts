// Issue 28 (SPEC §21): renditions in HEVC (libx265) and AV1 (SVT-AV1) next to the H.264 ladder,
// as CMAF (fMP4) HLS renditions in `hls/<rung>-<codec>/`, and the DASH manifest over the same
// segments (`hls/manifest.mpd`, served at {cdn_url}/v/<id|token>/manifest.mpd). Every encode
// and probe runs through the media policy (allow-lists, sandbox, limits) like the H.264 ladder.
import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { fetchMark } from '../../lib/watermarks/local';
import { markOfVideo } from '../../lib/watermarks/store';
import { createMediaTools, measuredBandwidth, type PlaylistRung, type Rung } from '../../lib/media';
import { parseMediaPlaylist } from '../../lib/media/chunks';
import { cmafAudioArgs, cmafAudioRendition, cmafCodecString, cmafRungArgs, codecRenditionName, type VideoCodec } from '../../lib/media/cmaf';
import { dashManifest, type DashAudioRepresentation } from '../../lib/media/dash';
import { republishMaster } from '../../lib/outputs/publish';
import { readText as readStoredText } from '../../lib/outputs/segments';
import { keys } from '../../lib/storage';
import { audioKey } from '../audio/tracks';
import type { ActivityDeps } from '../deps';
import { toFailure } from './media';
import { withTempDir } from '../outputs/common';

const TYPES: Record<string, string> = { '.m3u8': 'application/vnd.apple.mpegurl', '.m4s': 'video/mp4', '.mp4': 'video/mp4' };

type AudioTrackRow = { rendition: string; language: string; channels: number; is_default: boolean; cmaf: boolean };

export function codecActivities({ config, db, storage }: ActivityDeps) {
  const media = createMediaTools(config.media);
  const segmentSeconds = config.media.segmentSeconds;

  async function readText(key: string): Promise<string> {
    const text = await readStoredText(storage, key);
    if (text === null) throw new Error(`missing ${key}`);
    return text;
  }

  /** Uploads a rendition's files, init and segments first, the playlist last: it never names a file that is not there. */
  async function uploadRendition(dir: string, prefix: string, onFile: (f: string) => void): Promise<void> {
    const files = (await fs.readdir(dir)).sort();
    for (const f of [...files.filter((x) => !x.endsWith('.m3u8')), ...files.filter((x) => x.endsWith('.m3u8'))]) {
      await storage.putFile(prefix + f, path.join(dir, f), { contentType: TYPES[path.extname(f)] ?? 'application/octet-stream' });
      onFile(f);
    }
  }

  /**
   * Issue 28 "audio once": an AAC audio rendition's TS segments repackaged as CMAF by stream copy
   * (no re-encode) into `hls/audio/<rendition>-cmaf/`, once per track (the row's `cmaf` says it is
   * there). Returns its segment durations and measured peak for the DASH manifest.
   */
  async function cmafAudio(p: { workspaceId: string; videoId: string; track: AudioTrackRow; signal: AbortSignal; beat: (f: string) => void }): Promise<DashAudioRepresentation> {
    const source = audioKey(p.workspaceId, p.videoId, p.track.rendition);
    const target = audioKey(p.workspaceId, p.videoId, cmafAudioRendition(p.track.rendition));
    const represent = async (playlist: string, size: (uri: string) => Promise<number>): Promise<DashAudioRepresentation> => {
      const segments = parseMediaPlaylist(playlist);
      if (segments.length === 0 || segments.some((s) => !/^seg_[0-9]{5}\.m4s$/.test(s.uri))) throw new Error(`unexpected ${target} playlist`);
      const sizes = await Promise.all(segments.map(async (s) => ({ seconds: s.seconds, bytes: await size(s.uri) })));
      return {
        id: `audio/${cmafAudioRendition(p.track.rendition)}`,
        language: p.track.language,
        channels: p.track.channels,
        isDefault: p.track.is_default,
        bandwidth: measuredBandwidth(sizes).peak,
        segments: segments.map((s) => s.seconds),
      };
    };
    if (p.track.cmaf) return represent(await readText(target + 'index.m3u8'), async (uri) => (await storage.head(target + uri))?.size ?? 0);
    return withTempDir(async (dir) => {
      // The TS segments end to end are one MPEG-TS stream (that is how HLS defines them).
      const ts = path.join(dir, 'audio.ts');
      const segments = parseMediaPlaylist(await readText(source + 'index.m3u8'));
      if (segments.length === 0 || segments.some((s) => !/^seg_[0-9]{5,6}\.ts$/.test(s.uri))) throw new Error(`unexpected ${source} playlist`);
      for (const s of segments) {
        const part = path.join(dir, s.uri);
        await storage.download(source + s.uri, part);
        await fs.appendFile(ts, await fs.readFile(part));
        await fs.rm(part);
      }
      const out = path.join(dir, 'cmaf');
      await fs.mkdir(out);
      const input = await media.open(ts, p.signal, { allowAudioOnly: true });
      await media.ffmpeg(cmafAudioArgs({ input: input.path, inputArgs: input.inputArgs, outputDir: out, segmentSeconds }), input, { outputDir: out, signal: p.signal, background: true });
      const rep = await represent(await fs.readFile(path.join(out, 'index.m3u8'), 'utf8'), async (uri) => (await fs.stat(path.join(out, uri))).size);
      await uploadRendition(out, target, p.beat);
      await db('audio_tracks').where({ video_id: p.videoId, rendition: p.track.rendition }).update({ cmaf: true, updated_at: db.fn.now() });
      return rep;
    });
  }

  return {
    /** One rung in HEVC or AV1 as a CMAF rendition; returns its master playlist entry (measured, probed CODECS). Idempotent. */
    async encodeCmafRendition(p: { workspaceId: string; videoId: string; storageKey: string; rung: Rung; codec: VideoCodec; fps: number | null; durationSeconds: number | null }): Promise<PlaylistRung> {
      const ctx = Context.current();
      let progress = 0;
      const beat = setInterval(() => ctx.heartbeat({ progress }), 1000);
      const name = codecRenditionName(p.rung.name, p.codec);
      try {
        return await withTempDir(async (dir) => {
          const input = await media.open(await storage.mediaSource(p.storageKey), ctx.cancellationSignal);
          const wm = await fetchMark(storage, await markOfVideo(db, p.videoId));
          try {
            const args = cmafRungArgs({ input: input.path, inputArgs: input.inputArgs, outputDir: dir, rung: p.rung, codec: p.codec, segmentSeconds, fps: p.fps, mark: wm?.mark });
            await media.ffmpeg(args, input, { outputDir: dir, durationSeconds: p.durationSeconds, signal: ctx.cancellationSignal, onProgress: (pct) => (progress = pct), background: true, readOnly: wm?.readOnly });
          } finally {
            await wm?.dispose();
          }
          const segments = parseMediaPlaylist(await fs.readFile(path.join(dir, 'index.m3u8'), 'utf8'));
          if (segments.length === 0 || segments.some((s) => !/^seg_[0-9]{5}\.m4s$/.test(s.uri))) throw new Error(`unexpected ${name} playlist`);
          const sizes = await Promise.all(segments.map(async (s) => ({ seconds: s.seconds, bytes: (await fs.stat(path.join(dir, s.uri))).size })));
          const bw = measuredBandwidth(sizes);
          // CODECS from what was written: init + first fragment is a self-contained file to probe.
          const first = path.join(dir, 'first.mp4');
          await fs.writeFile(first, Buffer.concat([await fs.readFile(path.join(dir, 'init.mp4')), await fs.readFile(path.join(dir, segments[0].uri))]));
          const probed = (await media.open(first, ctx.cancellationSignal)).info.streams.video;
          await fs.rm(first);
          await uploadRendition(dir, keys.rendition(p.workspaceId, p.videoId, name), (f) => ctx.heartbeat({ uploading: f }));
          return { ...p.rung, name, codecs: cmafCodecString(p.codec, { profile: probed.profile, level: probed.level }), videoBitrate: bw.average, maxrate: bw.peak, audioBitrate: 0 };
        });
      } catch (err) {
        throw toFailure(err);
      } finally {
        clearInterval(beat);
      }
    },

    /**
     * `hls/manifest.mpd` over the CMAF renditions, from their stored playlists, with the audio
     * tracks as CMAF (packaged here, once: issue 28), which the master's CMAF variants then take
     * as their audio group. A silent video has no tracks and no audio set. Idempotent.
     */
    async publishDash(p: { workspaceId: string; videoId: string; durationSeconds: number | null; renditions: PlaylistRung[] }): Promise<void> {
      const ctx = Context.current();
      const tracks: AudioTrackRow[] = await db('audio_tracks')
        .where({ video_id: p.videoId, status: 'ready' })
        .orderBy(['ordinal', 'rendition'])
        .select('rendition', 'language', 'channels', 'is_default', 'cmaf');
      const audio: DashAudioRepresentation[] = [];
      const beat = setInterval(() => ctx.heartbeat(), 1000);
      try {
        for (const track of tracks) audio.push(await cmafAudio({ ...p, track, signal: ctx.cancellationSignal, beat: (f) => ctx.heartbeat({ uploading: f }) }));
      } catch (err) {
        throw toFailure(err);
      } finally {
        clearInterval(beat);
      }
      // The master's CMAF variants move to the CMAF audio group (lib/outputs/audio.ts) now that it exists.
      if (tracks.some((t) => !t.cmaf)) await republishMaster(db, storage, { workspaceId: p.workspaceId, videoId: p.videoId });
      const reps = [];
      let duration = p.durationSeconds ?? 0;
      for (const r of p.renditions) {
        const segments = parseMediaPlaylist(await readText(keys.rendition(p.workspaceId, p.videoId, r.name) + 'index.m3u8')).map((s) => s.seconds);
        duration = Math.max(duration, segments.reduce((a, b) => a + b, 0));
        reps.push({ id: r.name, codecs: r.codecs ?? '', bandwidth: r.maxrate, width: r.width, height: r.height, segments });
      }
      await storage.put(keys.dashManifest(p.workspaceId, p.videoId), dashManifest(duration, reps, audio), { contentType: 'application/dash+xml' });
      // SPEC §23: reads show `dash_url` from now on, not before the manifest exists.
      await db('videos').where({ id: p.videoId }).update({ dash_ready: true });
    },
  };
}
