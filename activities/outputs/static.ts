import fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { audioOnlyArgs, remuxMp4Args, remuxMp4WithAudioArgs } from '../../lib/media/outputs';
import { createMediaTools } from '../../lib/media/tools';
import { outputKeys } from '../../lib/outputs/keys';
import { type Mp4Support, STATIC_NAMES, staticSourceRung } from '../../lib/outputs/options';
import { joinSegments, renditionSegments } from '../../lib/outputs/segments';
import type { ActivityDeps } from '../deps';
import { toFailure } from '../transcode/media';
import { loadJobVideo, removeIfDeleted, withTempDir } from './common';

export function wantedNames(mp4Support: string): string[] {
  return mp4Support === 'none' ? [] : [STATIC_NAMES[mp4Support as Exclude<Mp4Support, 'none'>]];
}

/**
 * Static downloads (SPEC §14) from the published ladder, without a new encode: the chosen
 * rung's MPEG-TS segments are joined and remuxed (-c copy) into MP4 with faststart, or their
 * AAC copied into an M4A. Seconds of I/O instead of an encode of the whole video.
 */
export function staticActivities({ db, storage, config }: ActivityDeps) {
  const media = createMediaTools(config.media);

  /** The default audio rendition of a video in the SPEC §19 layout (its rungs carry no audio), if any. */
  async function defaultAudio(videoId: string): Promise<string | undefined> {
    const v = await db('videos').where({ id: videoId }).first('audio_layout');
    if (v?.audio_layout !== 'group') return undefined;
    const t = await db('audio_tracks').where({ video_id: videoId, status: 'ready' }).orderBy([{ column: 'is_default', order: 'desc' }, 'ordinal']).first('rendition');
    return t ? `audio/${t.rendition}` : undefined;
  }

  async function join(video: { id: string; workspace_id: string }, rung: string, file: string): Promise<void> {
    const ctx = Context.current();
    const segments = await renditionSegments(storage, video.workspace_id, video.id, rung);
    await joinSegments(storage, video.workspace_id, video.id, rung, segments, file, () => ctx.heartbeat({ joining: rung }));
  }

  async function produce(video: { id: string; workspace_id: string; duration_seconds: number | null }, rung: string, name: string): Promise<number> {
    const ctx = Context.current();
    return withTempDir(async (dir) => {
      const audioRung = await defaultAudio(video.id);
      const isM4a = name === STATIC_NAMES.audio_only;
      const joined = path.join(dir, 'joined.ts');
      await join(video, isM4a && audioRung ? audioRung : rung, joined);
      const joinedAudio = path.join(dir, 'joined-audio.ts');
      if (audioRung && !isM4a) await join(video, audioRung, joinedAudio);
      const output = path.join(dir, name);
      try {
        // The joined segments are opened like any user media: probed under the allow-lists, run sandboxed.
        const input = await media.open(joined, ctx.cancellationSignal, { allowAudioOnly: true });
        if (isM4a && !input.info.hasAudio) throw new Error('The video has no audio track');
        const io = { input: joined, inputArgs: input.inputArgs, output };
        let args: string[];
        if (isM4a) args = audioOnlyArgs(io);
        else if (audioRung) {
          const audio = await media.open(joinedAudio, ctx.cancellationSignal, { allowAudioOnly: true });
          args = remuxMp4WithAudioArgs({ ...io, audio: joinedAudio, audioArgs: audio.inputArgs });
        } else args = remuxMp4Args({ ...io, hasAudio: input.info.hasAudio });
        await media.ffmpeg(args, input, { outputDir: dir, durationSeconds: video.duration_seconds, onProgress: (pct) => ctx.heartbeat({ pct }), signal: ctx.cancellationSignal });
      } catch (err) {
        throw toFailure(err);
      }
      await storage.putFile(outputKeys.staticFile(video.workspace_id, video.id, name), output, { contentType: name.endsWith('.m4a') ? 'audio/mp4' : 'video/mp4' });
      return (await fs.stat(output)).size;
    });
  }

  return {
    /** Makes the files mp4_support asks for and removes the others; runs again while the setting changes under it. */
    async reconcileStaticRenditions(p: { videoId: string; workspaceId: string }): Promise<{ produced: string[]; removed: string[] }> {
      const produced: string[] = [];
      const removed: string[] = [];
      for (let round = 0; round < 5; round++) {
        const loaded = await loadJobVideo(db, p.videoId);
        if (!loaded) return { produced, removed };
        const { video, renditions, growing } = loaded;
        const wanted = wantedNames(video.mp4_support);
        const have: Array<{ name: string; status: string }> = await db('static_renditions').where({ video_id: video.id });
        for (const h of have.filter((x) => !wanted.includes(x.name))) {
          await db('static_renditions').where({ video_id: video.id, name: h.name }).delete();
          await storage.deletePrefix(outputKeys.staticFile(video.workspace_id, video.id, h.name));
          removed.push(h.name);
        }
        const todo = wanted.filter((n) => have.find((h) => h.name === n)?.status !== 'ready');
        for (const name of todo) {
          await db('static_renditions').insert({ video_id: video.id, name, status: 'processing', size_bytes: null }).onConflict(['video_id', 'name']).merge(['status', 'size_bytes']);
        }
        // Made from the finished ladder: the pipeline asks again once its last rung is done.
        if (growing || video.status !== 'ready' || todo.length === 0) {
          if (todo.length === 0) break;
          return { produced, removed };
        }
        for (const name of todo) {
          const rung = staticSourceRung(renditions, name);
          if (!rung) throw new Error('The video has no ready rendition');
          const size = await produce(video, rung.name, name);
          await db('static_renditions').where({ video_id: video.id, name }).update({ status: 'ready', size_bytes: size, updated_at: db.fn.now() });
          produced.push(name);
        }
        const now = await db('videos').where({ id: video.id }).first('mp4_support');
        if (now?.mp4_support === video.mp4_support) break;
      }
      await removeIfDeleted(db, storage, p.workspaceId, p.videoId);
      return { produced, removed };
    },
  };
}
