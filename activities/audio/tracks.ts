// Added audio tracks (SPEC §19, api/audio/routes.ts → workflows/audio/track.ts): the file
// arrives by its single-use upload URL or from a URL (address guard), is opened under the
// hostile-media rules like any upload, and is encoded on the video's timeline.
import fs from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createWriteStream } from 'node:fs';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { alignedTrackArgs, createMediaTools, STEREO_BITRATE } from '../../lib/media';
import { UrlNotAllowedError } from '../../lib/net/guard';
import { safeRequest } from '../../lib/net/request';
import { writeMaster } from '../../lib/outputs/publish';
import { keys } from '../../lib/storage';
import type { ActivityDeps } from '../deps';
import { sniffNotVideo } from '../upload/import';
import { toFailure } from '../transcode/media';
import { removeIfDeleted, withTempDir } from '../outputs/common';

const POLL_MS = 1000;
const importFailed = (message: string) => ApplicationFailure.nonRetryable(message, 'import_failed');

/** Where an audio rendition lives: `hls/audio/<rendition>/` beside the rungs. */
export const audioKey = (ws: string, vid: string, rendition: string) => `${keys.videoPrefix(ws, vid)}hls/audio/${rendition}/`;

/** Where an added track's file is kept once received (under the video's originals: deleted with it). */
export const addedTrackKey = (ws: string, vid: string, rendition: string) => `${keys.originalsPrefix(ws, vid)}audio-${rendition}`;

export function addedTrackActivities({ config, db, storage, log }: ActivityDeps) {
  const media = createMediaTools(config.media);

  async function row(videoId: string, rendition: string) {
    return db('audio_tracks').where({ video_id: videoId, rendition }).first();
  }

  return {
    /** The upload (polled until its URL's deadline; then it is closed) or the URL's bytes, to the track's key. */
    async receiveAddedTrack(p: { videoId: string; workspaceId: string; rendition: string; url?: string; uploadDeadline?: number }): Promise<{ size: number }> {
      const ctx = Context.current();
      const target = addedTrackKey(p.workspaceId, p.videoId, p.rendition);
      const done = await storage.head(target);
      if (done) return { size: done.size };
      if (p.url) {
        return withTempDir(async (dir) => {
          const file = path.join(dir, 'track');
          let res;
          try {
            res = await safeRequest(p.url!, { maxRedirects: 5, allowLoopback: config.allowLoopbackUrls, timeoutMs: 30_000, signal: ctx.cancellationSignal, headers: { 'user-agent': 'vidhost-import/1' } });
          } catch (err) {
            if (err instanceof UrlNotAllowedError) throw importFailed(`The URL is not allowed: ${err.message}`);
            throw err;
          }
          if (res.status < 200 || res.status >= 300) {
            res.body.resume();
            throw importFailed(`The URL answered ${res.status}`);
          }
          let bytes = 0;
          const max = config.upload.maxBytes;
          res.body.on('data', (c: Buffer) => {
            bytes += c.length;
            if (bytes > max) res.body.destroy(importFailed(`The URL returned more than ${max} bytes, the size limit`));
          });
          await pipeline(res.body, createWriteStream(file));
          const head = Buffer.alloc(512);
          const fh = await fs.open(file, 'r');
          const { bytesRead } = await fh.read(head, 0, head.length, 0);
          await fh.close();
          const why = sniffNotVideo(head.subarray(0, bytesRead));
          if (why) throw importFailed(`The URL did not return audio: ${why}`);
          await storage.putFile(target, file);
          await db('audio_tracks').where({ video_id: p.videoId, rendition: p.rendition }).update({ status: 'processing', updated_at: db.fn.now() });
          return { size: bytes };
        });
      }
      const r = await row(p.videoId, p.rendition);
      if (!r?.upload_key) throw ApplicationFailure.nonRetryable('The track has no upload URL', 'upload_missing');
      for (;;) {
        const head = await storage.head(r.upload_key);
        if (head) {
          // Closing first: the upload URL answers 409 from here on (api/storage/routes.ts), then the object moves.
          await db('audio_tracks').where({ video_id: p.videoId, rendition: p.rendition }).update({ status: 'processing', updated_at: db.fn.now() });
          await storage.move(r.upload_key, target, { onProgress: () => ctx.heartbeat() });
          return { size: head.size };
        }
        if (Date.now() > (p.uploadDeadline ?? 0)) throw ApplicationFailure.nonRetryable('No file was uploaded to the track\'s upload URL before it expired', 'upload_missing');
        ctx.heartbeat();
        await new Promise((res) => setTimeout(res, POLL_MS));
        if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
      }
    },

    /** The received file on the video's timeline (padded with silence or cut to its duration), published in the AUDIO group. */
    async encodeAddedTrack(p: { videoId: string; workspaceId: string; rendition: string }): Promise<void> {
      const ctx = Context.current();
      const video = await db('videos').where({ id: p.videoId }).first('duration_seconds', 'normalize_audio');
      if (!video) return;
      const beat = setInterval(() => ctx.heartbeat(), 1000);
      try {
        await withTempDir(async (dir) => {
          const out = path.join(dir, 'hls');
          await fs.mkdir(out);
          try {
            const input = await media.open(await storage.mediaSource(addedTrackKey(p.workspaceId, p.videoId, p.rendition)), ctx.cancellationSignal, { allowAudioOnly: true });
            if (!input.info.hasAudio) throw ApplicationFailure.nonRetryable('The file has no audio stream', 'invalid_media');
            const duration = Number(video.duration_seconds ?? input.info.durationSeconds ?? 0);
            const args = alignedTrackArgs({ input: input.path, inputArgs: input.inputArgs, outputDir: out, durationSeconds: duration, bitrate: STEREO_BITRATE, segmentSeconds: config.media.segmentSeconds });
            await media.ffmpeg(args, input, { outputDir: dir, durationSeconds: duration, signal: ctx.cancellationSignal, background: true });
          } catch (err) {
            throw toFailure(err);
          }
          const prefix = audioKey(p.workspaceId, p.videoId, p.rendition);
          const files = (await fs.readdir(out)).sort();
          for (const f of [...files.filter((x) => x.endsWith('.ts')), ...files.filter((x) => x.endsWith('.m3u8'))]) {
            await storage.putFile(prefix + f, path.join(out, f), { contentType: f.endsWith('.ts') ? 'video/mp2t' : 'application/vnd.apple.mpegurl' });
          }
        });
      } finally {
        clearInterval(beat);
      }
      // Ready and published in one transaction under the master's lock: the row says `ready` (and
      // the CDN's caches are told) only once the master names the track.
      await db.transaction(async (tx) => {
        await tx.raw('select pg_advisory_xact_lock(hashtext(?))', [`master:${p.videoId}`]);
        const r = await tx('audio_tracks').where({ video_id: p.videoId, rendition: p.rendition }).first('is_default');
        if (r?.is_default) await tx('audio_tracks').where({ video_id: p.videoId }).whereNot({ rendition: p.rendition }).update({ is_default: false });
        await tx('audio_tracks').where({ video_id: p.videoId, rendition: p.rendition }).update({ status: 'ready', error_message: null, updated_at: tx.fn.now() });
        const master = await storage.get(keys.master(p.workspaceId, p.videoId));
        if (!master) return;
        const chunks: Buffer[] = [];
        for await (const c of master.body) chunks.push(c as Buffer);
        await writeMaster(tx, storage, { workspaceId: p.workspaceId, videoId: p.videoId, text: Buffer.concat(chunks).toString('utf8') });
      });
      if (await removeIfDeleted(db, storage, p.workspaceId, p.videoId)) log.info({ videoId: p.videoId }, 'added track of a deleted video removed');
    },

    async markAudioTrackFailed(p: { videoId: string; rendition: string; message: string }): Promise<void> {
      await db('audio_tracks').where({ video_id: p.videoId, rendition: p.rendition }).update({ status: 'failed', error_message: p.message.slice(0, 1000), updated_at: db.fn.now() });
    },
  };
}
