import { recentVideoIds, serializeLiveStream } from '../../lib/live/read';
import { videoPublicId } from '../../lib/ids';
import type { ActivityDeps } from '../deps';
import { fanOutEvent } from '../events';

/** `live_stream.connected|active|disconnected|idle` (SPEC §17) and `.warning` (§22): the stream's read shape, the recording's id, why it disconnected, what is wrong with the feed. */
export function liveEventActivities(deps: ActivityDeps) {
  const { config, db } = deps;
  return {
    async emitLiveEvent(p: {
      eventId: string;
      liveStreamId: string;
      workspaceId: string;
      type: string;
      videoId?: string | null;
      reason?: string;
      /** `live_stream.warning` (SPEC §22): what is wrong with the feed. */
      warning?: { code: string; message: string };
    }): Promise<{ deliveries: number }> {
      let event = await db('events').where({ id: p.eventId }).first();
      if (!event) {
        const row = await db('live_streams as l').select('l.*').where('l.id', p.liveStreamId).first();
        if (!row) return { deliveries: 0 };
        const recent = await recentVideoIds(db, [row.id]);
        const data: Record<string, unknown> = { live_stream: serializeLiveStream(config, row, recent.get(row.id) ?? []), video_id: p.videoId ? videoPublicId(p.videoId) : null };
        if (p.reason) data.reason = p.reason;
        if (p.warning) data.warning = p.warning;
        const createdAt = new Date().toISOString();
        const payload = { id: p.eventId, type: p.type, created_at: createdAt, workspace_id: p.workspaceId, data };
        await db('events').insert({ id: p.eventId, workspace_id: p.workspaceId, video_id: p.videoId ?? null, type: p.type, payload, created_at: createdAt }).onConflict('id').ignore();
        event = await db('events').where({ id: p.eventId }).first();
      }
      return fanOutEvent(deps, p.workspaceId, p.type, event.id);
    },
  };
}
