// Stream health of the broadcast going on (SPEC §22), from the live session: every 2 s the feed's
// measure (lib/live/health.ts) goes to live_streams.health (the media server wrote the protocol
// there at admission), and each warning that appears is sent once per session as a
// `live_stream.warning` event.
import { newId } from '../../lib/ids';
import type { FeedMeter, HealthWarning } from '../../lib/live/health';
import type { ActivityDeps } from '../deps';
import { liveEventActivities } from './events';

export function startHealthReports(deps: ActivityDeps, p: { liveStreamId: string; workspaceId: string; videoId: string }, meter: FeedMeter): { stop(): void } {
  const { db, log } = deps;
  const events = liveEventActivities(deps);
  const sent = new Set<HealthWarning>();
  let busy = false;
  const report = async () => {
    const h = meter.health('rtmp');
    // Nothing measured yet (the first packets): keep what is there.
    if (!h.video && h.bitrate_kbps === null) return;
    const { protocol: _, ...measured } = h;
    await db('live_streams')
      .where({ id: p.liveStreamId })
      .update({ health: db.raw(`coalesce(health, '{}'::jsonb) || ?::jsonb || jsonb_build_object('measured_at', now())`, [JSON.stringify(measured)]) });
    for (const w of h.warnings) {
      if (sent.has(w.code)) continue;
      sent.add(w.code);
      await events.emitLiveEvent({ eventId: newId('evt'), liveStreamId: p.liveStreamId, workspaceId: p.workspaceId, type: 'live_stream.warning', videoId: p.videoId, warning: w });
    }
  };
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    report()
      .catch((err) => log.warn({ err, liveStreamId: p.liveStreamId }, 'live: health report failed'))
      .finally(() => {
        busy = false;
      });
  }, 2000);
  return { stop: () => clearInterval(timer) };
}
