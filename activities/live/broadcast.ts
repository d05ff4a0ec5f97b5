// A broadcast's bookkeeping: its recording (a video) begins and ends here. Every write is
// idempotent: a retried activity finds its own earlier work and returns it.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { workspaceFairness } from '../../lib/fairness';
import { newVideoUuid } from '../../lib/ids';
import { dropEncoder } from '../../lib/live/control';
import { edgeRequest } from '../../lib/live/edge';
import { masterPlaylist, measuredBandwidth, type SegmentRow, vodPlaylist } from '../../lib/live/playlists';
import type { LiveStreamRow } from '../../lib/live/read';
import { createMediaTools, thumbnailArgs } from '../../lib/media';
import { requestOutputJobs } from '../../lib/outputs/start';
import { keys } from '../../lib/storage';
import { setVideoTags } from '../../lib/tags';
import { videoWorkflowOptions } from '../../lib/videos/workflow';
import type { LiveStatus } from '../../workflows/live/defs';
import type { ActivityDeps } from '../deps';

const PLAYLIST = 'application/vnd.apple.mpegurl';

export function broadcastActivities(deps: ActivityDeps) {
  const { config, db, storage, temporal, log } = deps;
  const media = createMediaTools(config.media);

  /** The poster frame, from the recording's first segment of its top rung; a broadcast without one still turns ready. */
  async function thumbnail(workspaceId: string, videoId: string, rung: string, seq: number): Promise<boolean> {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vidhost-live-thumb-'));
    try {
      const seg = path.join(dir, 'seg.ts');
      await storage.download(`${keys.rendition(workspaceId, videoId, rung)}seg_${String(seq).padStart(6, '0')}.ts`, seg);
      const input = await media.open(seg);
      const output = path.join(dir, 'thumbnail.jpg');
      await media.ffmpeg(thumbnailArgs({ input: input.path, inputArgs: input.inputArgs, output, atSeconds: 0 }), input, { outputDir: dir, durationSeconds: 10 });
      await storage.putFile(keys.thumbnail(workspaceId, videoId), output, { contentType: 'image/jpeg' });
      return true;
    } catch (err) {
      log.warn({ err, videoId }, 'live recording: no thumbnail');
      return false;
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  }

  return {
    /** Creates the broadcast's recording (a video, `is_live`, `processing`) with new_video_settings applied. */
    async startBroadcast(p: { liveStreamId: string; workspaceId: string }): Promise<{ videoId: string; reconnectWindowSeconds: number }> {
      return db.transaction(async (tx) => {
        const ls: LiveStreamRow | undefined = await tx('live_streams').where({ id: p.liveStreamId }).forUpdate().first();
        if (!ls) throw new Error(`live stream ${p.liveStreamId} is gone`);
        if (ls.active_video_id) {
          const open = await tx('videos').where({ id: ls.active_video_id, is_live: true }).first('id');
          if (open) return { videoId: ls.active_video_id, reconnectWindowSeconds: ls.reconnect_window };
        }
        const s = ls.new_video_settings ?? {};
        const videoId = newVideoUuid();
        const folder = s.folder_id ? await tx('folders').where({ id: s.folder_id, workspace_id: ls.workspace_id }).first('id') : undefined;
        await tx('videos').insert({
          id: videoId,
          workspace_id: ls.workspace_id,
          title: ls.title || `Live ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
          visibility: s.visibility ?? ls.visibility,
          status: 'processing',
          filename: 'live.m3u8',
          content_type: 'application/vnd.apple.mpegurl',
          storage_key: keys.master(ls.workspace_id, videoId),
          folder_id: folder ? s.folder_id : null,
          mp4_support: s.mp4_support ?? 'none',
          passthrough: s.passthrough ?? ls.passthrough ?? null,
          live_stream_id: ls.id,
          is_live: true,
          // SPEC §20: the recording keeps the stream's restriction (null: the workspace's default).
          playback_restriction_id: ls.playback_restriction_id ?? null,
          // Null (a stream older than the column): the videos trigger applies the workspace default.
          encryption: ls.encryption ?? null,
        });
        if (s.tags?.length) await setVideoTags(tx, ls.workspace_id, videoId, s.tags);
        await tx('live_streams').where({ id: ls.id }).update({ active_video_id: videoId, updated_at: tx.fn.now() });
        return { videoId, reconnectWindowSeconds: ls.reconnect_window };
      });
    },

    async recordLiveStatus(p: { liveStreamId: string; status: LiveStatus; videoId: string | null; reason?: string }): Promise<void> {
      const patch: Record<string, unknown> = { status: p.status, updated_at: db.fn.now() };
      if (p.reason !== undefined && p.status !== 'active') patch.last_disconnect_reason = p.reason;
      // The broadcast is over: the plan's slot (lib/live/key-check.ts) is free again.
      if (p.status === 'idle') Object.assign(patch, { active_video_id: null, broadcast_reserved_at: null, health: null });
      await db('live_streams').where({ id: p.liveStreamId }).update(patch);
    },

    async dropLiveEncoder(p: { liveStreamId: string; reason: string }): Promise<void> {
      await dropEncoder(config, p.liveStreamId, p.reason);
    },

    /**
     * The broadcast is over: VOD playlists from the live segments' rows (no re-encode), a poster
     * frame, and the video turns ready; then its storyboard and static MP4 are requested. A stream with `record: false`, or a broadcast that never
     * produced a segment, leaves no video behind.
     */
    async finishBroadcast(p: { liveStreamId: string; workspaceId: string; videoId: string }): Promise<{ videoId: string | null }> {
      // The broadcast is over: the edge drops its LL-HLS muxers (best effort; it also lets idle ones go).
      await edgeRequest(config, 'DELETE', `/hls/${p.liveStreamId}`, { timeoutMs: 2000 }).catch(() => undefined);
      const video = await db('videos').where({ id: p.videoId }).first();
      if (!video) return { videoId: null };
      if (video.status === 'ready') return { videoId: p.videoId };
      const ls = await db('live_streams').where({ id: p.liveStreamId }).first('record');
      const rows: Array<SegmentRow & { rung: string }> = await db('live_segments').where({ video_id: p.videoId }).orderBy([{ column: 'rung' }, { column: 'seq' }]);
      if (!rows.length || ls?.record === false) {
        await storage.deletePrefix(keys.videoPrefix(p.workspaceId, p.videoId));
        await db('videos').where({ id: p.videoId }).delete();
        return { videoId: null };
      }
      const byRung = new Map<string, SegmentRow[]>();
      for (const r of rows) byRung.set(r.rung, [...(byRung.get(r.rung) ?? []), r]);
      const renditions: Array<{ name: string; width: number; height: number; bitrate: number }> = await db('renditions').where({ video_id: p.videoId }).whereIn('name', [...byRung.keys()]);
      for (const [rung, segs] of byRung) await storage.put(`${keys.rendition(p.workspaceId, p.videoId, rung)}index.m3u8`, vodPlaylist(segs), { contentType: PLAYLIST });
      await storage.put(keys.master(p.workspaceId, p.videoId), masterPlaylist(renditions.map((r) => ({ ...r, bandwidth: measuredBandwidth(byRung.get(r.name)!) ?? r.bitrate }))), { contentType: PLAYLIST });
      const top = [...renditions].sort((a, b) => b.height - a.height)[0];
      const topSegs = byRung.get(top.name)!;
      const duration = topSegs.reduce((s, r) => s + r.duration, 0);
      const size = rows.reduce((s, r) => s + Number(r.bytes ?? 0), 0);
      const thumb = await thumbnail(p.workspaceId, p.videoId, top.name, topSegs[0].seq);
      await db.transaction(async (tx) => {
        await tx('renditions').where({ video_id: p.videoId }).whereNotIn('name', [...byRung.keys()]).delete();
        await tx('renditions').where({ video_id: p.videoId }).update({ status: 'ready', progress: 100, updated_at: tx.fn.now() });
        await tx('videos').where({ id: p.videoId }).update({
          status: 'ready',
          is_live: false,
          progress: 100,
          duration_seconds: Math.round(duration * 1000) / 1000,
          width: top.width,
          height: top.height,
          size_bytes: size,
          thumbnail_ready: thumb,
          ready_at: tx.raw('coalesce(ready_at, now())'),
          updated_at: tx.fn.now(),
        });
      });
      // From here the recording is a video like any other: its own idle workflow answers delete.
      const fair = await workspaceFairness(db, p.workspaceId);
      const opts = videoWorkflowOptions(config.temporal, { videoId: p.videoId, workspaceId: p.workspaceId, storageKey: video.storage_key, source: { kind: 'url', url: `live:${p.liveStreamId}` } }, 'ready', fair);
      opts.args[0].resume = { status: 'ready', progress: 100, renditions: [], deleting: false };
      try {
        await temporal.workflow.start('videoWorkflow', opts);
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
      // As for an upload (SPEC §14): seek previews and the MP4 its mp4_support asks for, made from
      // the recording's segments in their own workflow, after ready.
      await requestOutputJobs(temporal, config, { videoId: p.videoId, workspaceId: p.workspaceId, jobs: ['static', 'storyboard'], fair });
      return { videoId: p.videoId };
    },
  };
}
