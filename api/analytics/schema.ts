import { z } from 'zod';
import { EVENT_NAMES, MAX_BEACON_EVENTS } from '../../lib/analytics/events';

const datetime = z.iso.datetime({ offset: true });

/** `from`/`to` (ISO 8601; default the last 7 days) and `granularity` (default hour up to 2 days, else day). */
export const analyticsQuery = z
  .object({
    from: datetime.optional().meta({ example: '2026-11-18T00:00:00Z' }),
    to: datetime.optional().meta({ example: '2026-11-25T00:00:00Z' }),
    granularity: z.enum(['hour', 'day']).optional(),
  })
  .strict();

const n = z.number();
const totalsShape = {
  views: n.int(),
  unique_viewers: n.int().meta({ description: 'Distinct viewers per UTC day, added up over the days (hashes change daily by design)' }),
  watch_time_seconds: n,
  average_view_seconds: n,
  startup_time_p50_ms: n.nullable(),
  startup_time_p95_ms: n.nullable(),
  rebuffer_percentage: n.meta({ description: 'Time stalled / (time playing + time stalled), in %' }),
  rebuffer_count: n.int(),
  rebuffer_seconds: n,
  error_rate: n.meta({ description: 'Share of views with an error (0–1)' }),
  exits_before_start: n.int(),
  average_bitrate: n.nullable(),
  viewer_experience_score: n
    .nullable()
    .meta({ description: 'Mean per-view score 0–100: 0 for a failed view, else the mean of startup, smoothness and video-quality scores (docs/analytics.md); null when no view has one' }),
  startup_failures: n.int().meta({ description: 'Views whose play intent never reached a first frame because of an error (exits_before_start have no error)' }),
  playback_failures: n.int().meta({ description: 'Views that failed with an error after their first frame' }),
  rebuffer_frequency_per_minute: n.meta({ description: 'Stalls per minute of playback' }),
  time_weighted_bitrate_kbps: n.nullable().meta({ description: 'Bitrate weighted by the time each rendition played, in kb/s' }),
  upscale_percentage: n.nullable().meta({ description: 'Share of the playback time (with the player\'s and the rendition\'s heights known) during which the picture was shown larger than the rendition, in % (0–100); null when players sent no height' }),
  downscale_percentage: n.nullable().meta({ description: 'Share of that playback time during which the picture was shown smaller than the rendition, in % (0–100)' }),
  upscale_amount_percentage: n.nullable().meta({ description: 'Time-weighted mean, over the playback time with both heights known, of (player height / rendition height − 1) where > 0, in % (may pass 100: 240p shown 720 pixels high is 200); what the experience score\'s quality part uses' }),
  downscale_amount_percentage: n.nullable().meta({ description: 'Time-weighted mean of (1 − player height / rendition height) where > 0, in % (0–100)' }),
};
export const analyticsTotals = z.object(totalsShape).meta({ id: 'AnalyticsTotals' });
const point = z.object({ t: z.iso.datetime(), ...totalsShape }).meta({ id: 'AnalyticsPoint' });
const entry = z.object({ value: z.string(), views: n.int(), watch_time_seconds: n });
const breakdowns = z
  .object({
    browser: z.array(entry),
    os: z.array(entry),
    device: z.array(entry),
    rendition: z.array(entry),
    country: z.array(entry).meta({ description: 'ISO 3166-1 alpha-2 from the viewer\'s address at ingest (offline database; IPv4 only), `Unknown` otherwise; the address is not stored' }),
  })
  .meta({ id: 'AnalyticsBreakdowns' });
const common = {
  from: z.iso.datetime(),
  to: z.iso.datetime(),
  granularity: z.enum(['hour', 'day']),
  as_of: z.iso.datetime().nullable().meta({
    description:
      'The figures are as of the rollup\'s last run (every ANALYTICS_ROLLUP_EVERY_SECONDS): every view that started before this time, with the events it had sent by that run; views since, and the rest of views still going on, come with the next run. null: computed from raw events (the rollup has not run yet)',
  }),
  totals: analyticsTotals,
  series: z.array(point),
  breakdowns,
};

export const videoAnalytics = z
  .object({
    video_id: z.string(),
    ...common,
    retention: z.array(z.object({ second: n, viewers: n.int() })).meta({ description: 'Viewers whose furthest position reached each 1 % of the video' }),
  })
  .meta({ id: 'VideoAnalytics' });

export const liveStreamAnalytics = z
  .object({
    live_stream_id: z.string(),
    concurrent_viewers: n.int().meta({ description: 'Views with an event in the last `concurrent_window_seconds` that have not ended (players send a heartbeat every 10 s; WHEP viewers are counted by the API, which beats for them while the edge has the session)' }),
    concurrent_window_seconds: n.int(),
    concurrent_series: z
      .array(z.object({ t: z.iso.datetime(), concurrent_viewers: n.int() }))
      .meta({ description: 'Per minute: distinct views with an event in that minute (players send a heartbeat every 10 s). The last 24 hours of the range at most' }),
    peak_concurrent_viewers: n.int().meta({ description: 'The largest value of concurrent_series' }),
    latency_p50_seconds: n.nullable().meta({ description: 'Median of the latency the players reported over the range (one sample per beacon, ~every 10 s of viewing)' }),
    latency_p95_seconds: n.nullable(),
    ...common,
  })
  .meta({ id: 'LiveStreamAnalytics' });

export const workspaceAnalytics = z
  .object({
    workspace_id: z.string(),
    ...common,
    top_videos: z
      .array(z.object({ video_id: z.string(), title: z.string().nullable(), views: n.int(), watch_time_seconds: n }))
      .meta({ description: 'The 10 videos (recordings included) with the most views in the range' }),
    top_live_streams: z
      .array(z.object({ live_stream_id: z.string(), title: z.string().nullable(), views: n.int(), watch_time_seconds: n }))
      .meta({ description: 'The 10 live streams with the most views while on air in the range (a broadcast\'s later views count under its recording video)' }),
    others: z
      .object({ videos: n.int(), live_streams: n.int(), views: n.int(), watch_time_seconds: n })
      .meta({
        description:
          'The videos and live streams with views in the range beyond the two top lists (deleted ones included): totals.views = Σ top_videos.views + Σ top_live_streams.views + others.views, and likewise watch time',
      }),
  })
  .meta({ id: 'WorkspaceAnalytics' });

/** For the API document only: the hot path validates with lib/analytics/events.ts. */
const docEvent = z
  .object({
    view_id: z.uuid(),
    seq: z.number().int().min(0),
    subject: z.string().meta({ description: 'vid_… of a public/unlisted video, ls_… of a public/unlisted live stream, or a playback token (private videos)' }),
    event: z.enum(EVENT_NAMES),
    position: z.number().min(0),
    rendition: z.string().optional(),
    bitrate: z.number().int().optional(),
    error_code: z.string().optional(),
    elapsed_ms: z.number().int().min(0).optional().meta({ description: 'ms since the view began, on the player\'s clock. Optional: without it, startup is timed by the events\' order and receipt' }),
    watch_ms: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({ description: 'Playback time so far (cumulative; at most elapsed_ms + 1000). Optional: without it, watch time is the playhead\'s advance between events, bounded by the time that passed' }),
    player: z.object({ name: z.string(), version: z.string().optional() }),
    latency: z.number().min(0).max(3600).optional().meta({ description: 'Live: seconds behind the live edge as the player reports it (per-broadcast median and p95 in the live analytics)' }),
    player_height: z.number().int().min(1).max(16384).optional().meta({ description: 'The player\'s displayed height in device pixels (upscale/downscale against the rendition\'s height, read from a name like `720p`)' }),
  })
  .meta({ id: 'BeaconEvent' });
export const beaconDocBody = z.union([docEvent, z.array(docEvent).min(1).max(MAX_BEACON_EVENTS)]);
