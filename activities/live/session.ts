// One broadcast connection on a live worker: probe the feed, check the input bounds, run one
// ffmpeg writing the live ladder, and upload each finished segment through the storage driver
// (recording it in live_segments, which the CDN's live playlists and the recording are made of).
// Heartbeats every second; a worker killed mid-broadcast is retried elsewhere within the
// heartbeat timeout, and the new attempt marks its first segments as a discontinuity.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { edgeHeaderLines, edgeIngestUrl, type EdgeStreamStats, edgeStreamStats, EdgeUnreachable, edgeWebrtcIngestUrl } from '../../lib/live/edge';
import { feedHeaders, feedUrl, probeFeed, startLiveFfmpeg } from '../../lib/live/feed';
import { FeedMeter } from '../../lib/live/health';
import { type FeedInfo, liveFfmpegArgs, outOfBounds, planLiveLadder } from '../../lib/live/ladder';
import { parseLocalPlaylist } from '../../lib/live/playlists';
import { startSimulcast } from '../../lib/live/simulcast';
import { planWebrtcRendition, webrtcRenditionReason } from '../../lib/live/webrtc';
import { keys } from '../../lib/storage';
import { fetchMark, type LocalMark } from '../../lib/watermarks/local';
import { markOfLiveStream } from '../../lib/watermarks/store';
import { liveWorkflowId, playableSignal, type SessionResult } from '../../workflows/live/defs';
import type { ActivityDeps } from '../deps';
import { startHealthReports } from './health';

const SEG_RE = /^seg_(\d{6})\.ts$/;

export function liveSessionActivities(deps: ActivityDeps) {
  const { config, db, storage, temporal, log } = deps;

  /** The WebRTC rendition of this broadcast, or undefined when WHEP can forward the source as is. */
  const webrtcRenditionFor = async (info: FeedInfo, marked: boolean, liveStreamId: string) => {
    let e: EdgeStreamStats | null;
    try {
      e = await edgeStreamStats(config, liveStreamId);
    } catch (err) {
      // No edge answers: nothing would serve the rendition (WHEP goes through the edge too).
      if (err instanceof EdgeUnreachable) return undefined;
      e = null;
    }
    const edge = e ? { protocol: e.protocol, videoCodec: e.video?.codec ?? null, audioCodec: e.audio?.codec ?? null } : null;
    const why = webrtcRenditionReason({ marked, feed: info, edge });
    if (!why) return undefined;
    log.info({ liveStreamId, why }, 'live: WHEP served from a WebRTC rendition');
    return planWebrtcRendition(info, edgeWebrtcIngestUrl(config, liveStreamId));
  };

  return {
    async runLiveSession(p: { liveStreamId: string; workspaceId: string; videoId: string; discontinuity: boolean }): Promise<SessionResult> {
      const ctx = Context.current();
      const signal = ctx.cancellationSignal;
      // A retry means the previous attempt died (worker killed): its segments end where it stopped.
      const discontinuity = p.discontinuity || ctx.info.attempt > 1;
      ctx.heartbeat();
      const beat = setInterval(() => ctx.heartbeat(), 1000);
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vidhost-live-'));
      let uploaded = 0;
      let local: LocalMark | null = null;
      try {
        const ls = await db('live_streams').where({ id: p.liveStreamId }).first('latency_mode', 'simulcast_targets');
        const url = feedUrl(config, p.liveStreamId);
        let info;
        try {
          info = await probeFeed(config, url, signal);
        } catch (err) {
          if (signal.aborted) return { ended: 'cancelled', reason: 'stopped', segments: 0 };
          log.info({ err, liveStreamId: p.liveStreamId }, 'live: no feed to read');
          return { ended: 'feed_ended', reason: 'encoder disconnected', segments: 0 };
        }
        const refused = outOfBounds(info);
        if (refused) return { ended: 'input_out_of_bounds', reason: `input out of bounds: ${refused}`, segments: 0 };

        // SPEC §24: the stream's mark (its own watermark_id, else the workspace default it took at
        // creation) is fetched beside the job and bound read-only into ffmpeg's sandbox.
        local = await fetchMark(storage, await markOfLiveStream(db, p.liveStreamId));
        const rungs = planLiveLadder(info, { passthrough: config.media.passthrough, marked: !!local });
        for (const r of rungs) {
          await db('renditions')
            .insert({ video_id: p.videoId, name: r.name, ordinal: 0, width: r.width, height: r.height, bitrate: r.bitrate || 1, status: 'processing', progress: 0 })
            .onConflict(['video_id', 'name'])
            .merge(['width', 'height', 'bitrate']);
          await fs.mkdir(path.join(dir, r.name));
        }
        const next: Record<string, number> = {};
        for (const r of rungs) {
          const m = await db('live_segments').where({ video_id: p.videoId, rung: r.name }).max('seq as max').first();
          next[r.name] = m?.max === null || m?.max === undefined ? 0 : Number(m.max) + 1;
        }
        const low = ls?.latency_mode === 'low';
        const segmentSeconds = low ? config.live.lowLatencySegmentSeconds : config.live.segmentSeconds;
        // SPEC §22: a low-latency broadcast is also packaged as LL-HLS by the live edge, except an
        // aes-128 one (docs/live.md: its key encrypts whole segments; LL-HLS parts are not offered).
        const encrypted = (await db('videos').where({ id: p.videoId }).first('encryption'))?.encryption === 'aes-128';
        const llhls = low && config.live.llhls && !encrypted ? (rung: string) => edgeIngestUrl(config, p.liveStreamId, rung) : undefined;
        // SPEC §22: WHEP viewers get the source's own packets where WebRTC can carry them, else a
        // rendition made for them (lib/live/webrtc.ts) that the edge serves instead.
        const webrtc = config.live.webrtcRendition ? await webrtcRenditionFor(info, !!local, p.liveStreamId) : undefined;
        const args = liveFfmpegArgs({
          input: url, dir, rungs, startNumbers: next, segmentSeconds, gopSeconds: low ? config.live.lowLatencyGopSeconds : segmentSeconds,
          preset: config.live.x264Preset, hasAudio: info.audioCodec !== null, llhls, llhlsHeaders: edgeHeaderLines(config), meter: true, inputHeaders: feedHeaders(config),
          mark: local?.mark, webrtc, fps: info.fps,
        });
        const meter = new FeedMeter();
        const ff = await startLiveFfmpeg(config, args, url, dir, (c) => meter.push(c), local?.readOnly);
        const health = startHealthReports(deps, p, meter);
        const simulcast = ls?.simulcast_targets?.length ? startSimulcast(deps, p.liveStreamId, url, ls.simulcast_targets, undefined, undefined, info.audioCodec) : undefined;
        const onAbort = () => ff.stop();
        signal.addEventListener('abort', onAbort, { once: true });

        const done = new Set<string>();
        const firstOfRung = new Set<string>();
        let playable = false;
        const upload = async () => {
          for (const r of rungs) {
            const text = await fs.readFile(path.join(dir, r.name, 'index.m3u8'), 'utf8').catch(() => '');
            for (const s of parseLocalPlaylist(text)) {
              const m = SEG_RE.exec(s.file);
              const id = `${r.name}/${s.file}`;
              if (!m || done.has(id)) continue;
              const file = path.join(dir, r.name, s.file);
              const stat = await fs.stat(file).catch(() => null);
              if (!stat) continue;
              await storage.putFile(`${keys.rendition(p.workspaceId, p.videoId, r.name)}${s.file}`, file, { contentType: 'video/mp2t' });
              const disc = discontinuity && !firstOfRung.has(r.name);
              firstOfRung.add(r.name);
              await db('live_segments')
                .insert({
                  video_id: p.videoId,
                  rung: r.name,
                  seq: Number(m[1]),
                  duration: s.duration,
                  bytes: stat.size,
                  discontinuity: disc,
                  program_date_time: s.programDateTime ? new Date(s.programDateTime) : new Date(Date.now() - s.duration * 1000),
                })
                .onConflict(['video_id', 'rung', 'seq'])
                .ignore();
              done.add(id);
              uploaded++;
              await fs.rm(file, { force: true });
            }
          }
          if (!playable && rungs.every((r) => firstOfRung.has(r.name))) {
            playable = true;
            await temporal.workflow.getHandle(liveWorkflowId(p.liveStreamId)).signal(playableSignal, { videoId: p.videoId });
          }
        };

        let exited = false;
        void ff.exited.then(() => {
          exited = true;
        });
        while (!exited) {
          await upload();
          await new Promise((r) => setTimeout(r, 250));
        }
        const { code, stderr } = await ff.exited;
        health.stop();
        signal.removeEventListener('abort', onAbort);
        await simulcast?.stop();
        // ffmpeg's last playlist write lists the segment it flushed on the way out.
        await upload();
        if (signal.aborted) return { ended: 'cancelled', reason: 'stopped', segments: uploaded };
        if (code !== 0) log.info({ code, stderr: stderr.slice(-2000), liveStreamId: p.liveStreamId }, 'live ffmpeg ended');
        return { ended: 'feed_ended', reason: 'encoder disconnected', segments: uploaded };
      } finally {
        clearInterval(beat);
        await local?.dispose();
        await fs.rm(dir, { recursive: true, force: true });
      }
    },
  };
}
