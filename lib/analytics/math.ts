import { RETENTION_STEPS, STARTUP_BUCKETS_MS, type BreakdownRow, type HourRow } from './aggregate';

export type Granularity = 'hour' | 'day';

export interface Totals {
  views: number;
  unique_viewers: number;
  watch_time_seconds: number;
  average_view_seconds: number;
  startup_time_p50_ms: number | null;
  startup_time_p95_ms: number | null;
  rebuffer_percentage: number;
  rebuffer_count: number;
  rebuffer_seconds: number;
  error_rate: number;
  exits_before_start: number;
  average_bitrate: number | null;
  /** Mean of the per-view experience scores (0–100); null when no view has one. */
  viewer_experience_score: number | null;
  startup_failures: number;
  playback_failures: number;
  rebuffer_frequency_per_minute: number;
  time_weighted_bitrate_kbps: number | null;
  upscale_percentage: number | null;
  downscale_percentage: number | null;
  upscale_amount_percentage: number | null;
  downscale_amount_percentage: number | null;
}

export interface SeriesPoint extends Totals {
  t: string;
}

/** An hourly row as a read uses it (the retention histogram is summed on its own). */
export type HourSums = Omit<HourRow, 'retention_hist'>;

const round = (n: number, digits = 3) => Math.round(n * 10 ** digits) / 10 ** digits;
/** `part` of `whole` in %, two decimals, within 0–100 whatever rounding upstream did. */
const percentOf = (part: number, whole: number) => Math.min(100, Math.max(0, round((100 * part) / whole, 2)));

/** Adds sparse histograms ({bucket: count}). */
export function addHist(into: Record<string, number>, h: Record<string, number> | null | undefined): Record<string, number> {
  for (const [k, v] of Object.entries(h ?? {})) into[k] = (into[k] ?? 0) + Number(v);
  return into;
}

/**
 * The p-th percentile (0–1) of the startup histogram, interpolating linearly inside the bucket
 * that holds it (bucket b covers [bound[b-1], bound[b]); the last one [last, 1.5 × last]).
 */
export function percentileFromHist(hist: Record<string, number>, p: number, bounds = STARTUP_BUCKETS_MS): number | null {
  const total = Object.values(hist).reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = p * total;
  let seen = 0;
  for (let b = 0; b <= bounds.length; b++) {
    const n = hist[String(b)] ?? 0;
    if (n === 0) continue;
    if (seen + n >= rank) {
      const lo = b === 0 ? 0 : bounds[b - 1];
      const hi = b < bounds.length ? bounds[b] : bounds[bounds.length - 1] * 1.5;
      return Math.round(lo + ((rank - seen) / n) * (hi - lo));
    }
    seen += n;
  }
  return bounds[bounds.length - 1];
}

/** Sums hourly rows into the §18 totals. Unique viewers add first-seen-that-day counts (docs/analytics.md). */
export function totalsOf(rows: HourSums[]): Totals {
  let views = 0, viewers = 0, watch = 0, started = 0, rebuffers = 0, rebufferMs = 0, errors = 0, exits = 0, bitrateSum = 0, bitrateViews = 0;
  let startupFailures = 0, playbackFailures = 0, scoreSum = 0, scored = 0, bitrateMsSum = 0, bitrateMs = 0, upMs = 0, downMs = 0, scaleMs = 0, upSum = 0, downSum = 0, factorMs = 0;
  const hist: Record<string, number> = {};
  for (const r of rows) {
    views += r.views;
    viewers += r.new_viewers;
    watch += Number(r.watch_ms);
    started += r.started;
    rebuffers += r.rebuffers;
    rebufferMs += Number(r.rebuffer_ms);
    errors += r.errors;
    exits += r.exits_before_start;
    bitrateSum += r.bitrate_sum;
    bitrateViews += r.bitrate_views;
    addHist(hist, r.startup_hist);
    startupFailures += r.startup_failures ?? 0;
    playbackFailures += r.playback_failures ?? 0;
    scoreSum += Number(r.score_sum ?? 0);
    scored += r.scored_views ?? 0;
    bitrateMsSum += Number(r.bitrate_ms_sum ?? 0);
    bitrateMs += Number(r.bitrate_ms ?? 0);
    upSum += Number(r.upscale_ms_sum ?? 0);
    downSum += Number(r.downscale_ms_sum ?? 0);
    factorMs += Number(r.scale_ms ?? 0);
    upMs += Number(r.upscaled_ms ?? 0);
    downMs += Number(r.downscaled_ms ?? 0);
    scaleMs += Number(r.scale_time_ms ?? 0);
  }
  return {
    views,
    unique_viewers: viewers,
    watch_time_seconds: round(watch / 1000),
    average_view_seconds: views ? round(watch / 1000 / views) : 0,
    startup_time_p50_ms: percentileFromHist(hist, 0.5),
    startup_time_p95_ms: percentileFromHist(hist, 0.95),
    rebuffer_percentage: watch + rebufferMs > 0 ? round((100 * rebufferMs) / (watch + rebufferMs)) : 0,
    rebuffer_count: rebuffers,
    rebuffer_seconds: round(rebufferMs / 1000),
    error_rate: views ? round(errors / views, 4) : 0,
    exits_before_start: exits,
    average_bitrate: bitrateViews ? Math.round(bitrateSum / bitrateViews) : null,
    viewer_experience_score: scored ? round(scoreSum / scored, 1) : null,
    startup_failures: startupFailures,
    playback_failures: playbackFailures,
    // Stalls per minute of playback (Mux's "rebuffer frequency").
    rebuffer_frequency_per_minute: watch > 0 ? round(rebuffers / (watch / 60_000)) : 0,
    time_weighted_bitrate_kbps: bitrateMs > 0 ? round(bitrateMsSum / bitrateMs / 1000, 1) : null,
    // Shares of the playback time with both heights known (issue 49: a percentage of time is 0–100).
    upscale_percentage: scaleMs > 0 ? percentOf(upMs, scaleMs) : null,
    downscale_percentage: scaleMs > 0 ? percentOf(downMs, scaleMs) : null,
    // How much bigger (smaller) the picture was shown than it is, time-weighted (Mux Data's amount):
    // 240p shown 720 pixels high is 200 % upscaled. Not a share of time: upscaling may pass 100 %.
    upscale_amount_percentage: factorMs > 0 ? round((100 * upSum) / factorMs, 2) : null,
    downscale_amount_percentage: factorMs > 0 ? round((100 * downSum) / factorMs, 2) : null,
  };
}

const bucketStart = (t: Date, g: Granularity): number => {
  const ms = t.getTime();
  return g === 'hour' ? Math.floor(ms / 3600_000) * 3600_000 : Math.floor(ms / 86400_000) * 86400_000;
};

/** One point per hour or UTC day in [from, to), empty buckets included, so a chart has no gaps. */
export function seriesOf(rows: HourSums[], from: Date, to: Date, g: Granularity): SeriesPoint[] {
  const by = new Map<number, HourSums[]>();
  for (const r of rows) {
    const k = bucketStart(new Date(r.hour), g);
    const list = by.get(k);
    if (list) list.push(r);
    else by.set(k, [r]);
  }
  const step = g === 'hour' ? 3600_000 : 86400_000;
  const out: SeriesPoint[] = [];
  for (let t = bucketStart(from, g); t < to.getTime(); t += step) out.push({ t: new Date(t).toISOString(), ...totalsOf(by.get(t) ?? []) });
  return out;
}

/** Viewers still watching at each step of the video: views whose furthest position reached it. */
export function retentionOf(rows: Array<Pick<HourRow, 'retention_hist'>>, durationSeconds: number | null): Array<{ second: number; viewers: number }> {
  if (!durationSeconds || durationSeconds <= 0) return [];
  const hist: Record<string, number> = {};
  for (const r of rows) addHist(hist, r.retention_hist);
  const out: Array<{ second: number; viewers: number }> = [];
  let still = Object.values(hist).reduce((a, b) => a + b, 0);
  for (let i = 0; i <= RETENTION_STEPS; i++) {
    out.push({ second: round((i * durationSeconds) / RETENTION_STEPS, 2), viewers: still });
    still -= hist[String(i)] ?? 0;
  }
  return out;
}

export interface BreakdownEntry {
  value: string;
  views: number;
  watch_time_seconds: number;
}

/** Breakdown rows summed per dimension, most views first (at most `limit` values each). */
export function breakdownsOf<R extends Pick<BreakdownRow, 'dimension' | 'value' | 'views' | 'watch_ms'>>(rows: R[], limit = 20): Record<'browser' | 'os' | 'device' | 'rendition' | 'country', BreakdownEntry[]> {
  const out = { browser: new Map(), os: new Map(), device: new Map(), rendition: new Map(), country: new Map() } as Record<string, Map<string, BreakdownEntry>>;
  for (const r of rows) {
    const m = out[r.dimension];
    if (!m) continue;
    const e = m.get(r.value) ?? { value: r.value, views: 0, watch_time_seconds: 0 };
    e.views += r.views;
    e.watch_time_seconds += Number(r.watch_ms) / 1000;
    m.set(r.value, e);
  }
  const list = (m: Map<string, BreakdownEntry>) =>
    [...m.values()].map((e) => ({ ...e, watch_time_seconds: round(e.watch_time_seconds) })).sort((a, b) => b.views - a.views || a.value.localeCompare(b.value)).slice(0, limit);
  return { browser: list(out.browser), os: list(out.os), device: list(out.device), rendition: list(out.rendition), country: list(out.country) };
}
