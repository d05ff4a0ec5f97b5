import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { CONCURRENT_WINDOW_SECONDS, concurrentViewers, liveFigures } from '../../lib/analytics/live';
import { breakdownsOf, type Granularity, retentionOf, seriesOf, totalsOf } from '../../lib/analytics/math';
import { hourAligned, readBuckets, type Window } from '../../lib/analytics/read';
import { parseId, parseVideoId, videoPublicId } from '../../lib/ids';
import type { Deps } from '../deps';
import { badRequest, notFound } from '../errors';
import { auth } from '../middleware/auth';
import { parseQuery } from '../middleware/validate';
import { analyticsQuery } from './schema';

const DAY = 86400_000;
/** Entries in each top list of the workspace overview. */
const TOP = 10;
const MAX_DAYS: Record<Granularity, number> = { hour: 31, day: 400 };

/** Validated range: default the last 7 days; `from` < `to`; at most 31 days hourly, 400 days daily. */
function rangeOf(ctx: ParameterizedContext): Window & { granularity: Granularity } {
  const q = parseQuery(ctx, analyticsQuery);
  const to = q.to ? new Date(q.to) : new Date();
  const from = q.from ? new Date(q.from) : new Date(to.getTime() - 7 * DAY);
  if (!(from < to)) throw badRequest('invalid_range', '`from` must be before `to`');
  const granularity: Granularity = q.granularity ?? (to.getTime() - from.getTime() <= 2 * DAY ? 'hour' : 'day');
  if (to.getTime() - from.getTime() > MAX_DAYS[granularity] * DAY) {
    throw badRequest('invalid_range', `A range is at most ${MAX_DAYS[granularity]} days with granularity=${granularity}`);
  }
  return { ...hourAligned({ from, to }), granularity };
}

/** SPEC §18 reads: per video, per live stream (with concurrent viewers) and per workspace (with top videos). */
export function analyticsRoutes(r: Router, deps: Deps): void {
  const { db } = deps;
  const rollup = { rawDays: deps.config.analytics.rawDays, lookbackHours: deps.config.analytics.lookbackHours };

  r.get('/videos/:id/analytics', async (ctx) => {
    const { workspaceId } = auth(ctx);
    const uuid = parseVideoId(ctx.params.id);
    if (!uuid) throw notFound('Video');
    let w: ReturnType<typeof rangeOf>;
    try {
      w = rangeOf(ctx);
    } catch (err) {
      // Another workspace's or an unknown video is 404 before its range is judged.
      const exists = await db('videos').where({ id: uuid, workspace_id: workspaceId }).whereNull('deleted_at').first('id');
      throw exists ? err : notFound('Video');
    }
    // The video (this workspace's, not deleted) comes in the buckets' round trip: one query a read.
    const { hours, retention, breakdowns, video, asOf } = await readBuckets(db, { kind: 'subject', subjectId: uuid }, w, rollup, w.granularity, workspaceId);
    if (!video) throw notFound('Video');
    ctx.body = {
      video_id: videoPublicId(uuid),
      from: w.from.toISOString(),
      to: w.to.toISOString(),
      granularity: w.granularity,
      as_of: asOf?.toISOString() ?? null,
      totals: totalsOf(hours),
      series: seriesOf(hours, w.from, w.to, w.granularity),
      retention: retentionOf([{ retention_hist: retention }], video.duration_seconds === null ? null : Number(video.duration_seconds)),
      breakdowns: breakdownsOf(breakdowns),
    };
  });

  r.get('/live-streams/:id/analytics', async (ctx) => {
    const { workspaceId } = auth(ctx);
    const id = parseId('ls', ctx.params.id);
    const stream = id ? await db('live_streams').where({ id, workspace_id: workspaceId }).whereNull('deleted_at').first('id') : undefined;
    if (!stream) throw notFound('Live stream');
    const w = rangeOf(ctx);
    const [{ hours, breakdowns, asOf }, concurrent, figures] = await Promise.all([
      readBuckets(db, { kind: 'subject', subjectId: stream.id }, w, rollup, w.granularity),
      concurrentViewers(db, stream.id),
      liveFigures(db, stream.id, w.from, w.to),
    ]);
    ctx.body = {
      live_stream_id: stream.id,
      from: w.from.toISOString(),
      to: w.to.toISOString(),
      granularity: w.granularity,
      as_of: asOf?.toISOString() ?? null,
      concurrent_viewers: concurrent,
      concurrent_window_seconds: CONCURRENT_WINDOW_SECONDS,
      ...figures,
      totals: totalsOf(hours),
      series: seriesOf(hours, w.from, w.to, w.granularity),
      breakdowns: breakdownsOf(breakdowns),
    };
  });

  r.get('/analytics', async (ctx) => {
    const { workspaceId } = auth(ctx);
    const w = rangeOf(ctx);
    // As of the rollup's last run (every ANALYTICS_ROLLUP_EVERY_SECONDS, default 60), like a video's.
    const { hours: own, breakdowns, perSubject, asOf } = await readBuckets(db, { kind: 'workspace', workspaceId }, w, rollup, w.granularity);
    // Every subject with views in the range: videos (recordings included) and live streams on
    // air. The two top lists and `others` add up to the totals (issue 49: 706 views in the totals,
    // three videos of one view in the list — the live streams' views were left out).
    const order = (a: [string, { views: number; watch_ms: number }], b: [string, { views: number; watch_ms: number }]) => b[1].views - a[1].views || b[1].watch_ms - a[1].watch_ms;
    const perVideo = [...perSubject.entries()].filter(([id]) => !id.startsWith('ls_')).sort(order);
    const perStream = [...perSubject.entries()].filter(([id]) => id.startsWith('ls_')).sort(order);
    const top = perVideo.slice(0, TOP);
    const topStreams = perStream.slice(0, TOP);
    const [videoTitles, streamTitles] = await Promise.all([
      top.length ? db('videos').whereIn('id', top.map(([id]) => id)).select('id', 'title') : [],
      topStreams.length ? db('live_streams').whereIn('id', topStreams.map(([id]) => id)).select('id', 'title') : [],
    ]);
    const titles = new Map<string, string>([...videoTitles, ...streamTitles].map((v: { id: string; title: string }) => [v.id, v.title]));
    const rest = [...perVideo.slice(TOP), ...perStream.slice(TOP)];
    const seconds = (ms: number) => Math.round(ms) / 1000;
    ctx.body = {
      workspace_id: workspaceId,
      from: w.from.toISOString(),
      to: w.to.toISOString(),
      granularity: w.granularity,
      as_of: asOf?.toISOString() ?? null,
      totals: totalsOf(own),
      series: seriesOf(own, w.from, w.to, w.granularity),
      breakdowns: breakdownsOf(breakdowns),
      top_videos: top.map(([id, v]) => ({ video_id: videoPublicId(id), title: titles.get(id) ?? null, views: v.views, watch_time_seconds: seconds(v.watch_ms) })),
      top_live_streams: topStreams.map(([id, v]) => ({ live_stream_id: id, title: titles.get(id) || null, views: v.views, watch_time_seconds: seconds(v.watch_ms) })),
      others: {
        videos: Math.max(0, perVideo.length - TOP),
        live_streams: Math.max(0, perStream.length - TOP),
        views: rest.reduce((a, [, v]) => a + v.views, 0),
        watch_time_seconds: seconds(rest.reduce((a, [, v]) => a + v.watch_ms, 0)),
      },
    };
  });
}
