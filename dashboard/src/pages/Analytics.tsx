import { useState } from 'preact/hooks';
import { api, qs, type Schemas } from '../api';
import { AreaChart, BarChart, BarList, type Point } from '../components/charts';
import { ErrorNote, Link } from '../components/ui';
import { useLoad } from '../hooks';

// SPEC §18 in the dashboard: a video's Analytics tab and the workspace overview.

type Totals = Schemas['AnalyticsTotals'];
/** A video's report or the workspace's: the same buckets, plus retention or the top videos. */
type Report = Omit<Schemas['VideoAnalytics'], 'video_id' | 'retention'> &
  Partial<Pick<Schemas['VideoAnalytics'], 'retention'>> &
  Partial<Pick<Schemas['WorkspaceAnalytics'], 'top_videos' | 'top_live_streams' | 'others'>>;

const RANGES: Array<[string, number]> = [
  ['24 hours', 1],
  ['7 days', 7],
  ['30 days', 30],
];

function useReport(path: string, days: number) {
  return useLoad(() => {
    const to = new Date();
    const from = new Date(to.getTime() - days * 86400_000);
    return api<Report>('GET', `${path}${qs({ from: from.toISOString(), to: to.toISOString(), granularity: days <= 2 ? 'hour' : 'day' })}`);
  }, [path, days]);
}

function RangePicker({ days, onChange }: { days: number; onChange: (d: number) => void }) {
  return (
    <label class="range">
      Period
      <select value={String(days)} onChange={(e) => onChange(Number((e.target as HTMLSelectElement).value))}>
        {RANGES.map(([label, d]) => (
          <option key={d} value={String(d)}>
            Last {label}
          </option>
        ))}
      </select>
    </label>
  );
}

const hms = (s: number) => (s >= 3600 ? `${(s / 3600).toFixed(1)} h` : s >= 60 ? `${(s / 60).toFixed(1)} min` : `${s.toFixed(0)} s`);
const ms = (v: number | null) => (v === null ? '—' : v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v} ms`);

function Kpis({ t }: { t: Totals }) {
  const items: Array<[string, string]> = [
    ['Views', t.views.toLocaleString()],
    ['Unique viewers', t.unique_viewers.toLocaleString()],
    ['Watch time', hms(t.watch_time_seconds)],
    ['Average view', hms(t.average_view_seconds)],
    ['Startup p50', ms(t.startup_time_p50_ms)],
    ['Startup p95', ms(t.startup_time_p95_ms)],
    ['Rebuffering', `${t.rebuffer_percentage.toFixed(1)} %`],
    ['Error rate', `${(t.error_rate * 100).toFixed(1)} %`],
    ['Exits before start', t.exits_before_start.toLocaleString()],
  ];
  return <KpiList items={items} />;
}

const pct = (v: number | null) => (v === null ? '—' : `${v.toFixed(1)} %`);

/** Experience (issue 36): the 0–100 score and what a video team reads it from. */
function Experience({ t }: { t: Totals }) {
  const items: Array<[string, string]> = [
    ['Viewer experience score', t.viewer_experience_score === null ? '—' : t.viewer_experience_score.toFixed(1)],
    ['Startup failures', t.startup_failures.toLocaleString()],
    ['Playback failures', t.playback_failures.toLocaleString()],
    ['Rebuffers per minute', t.rebuffer_frequency_per_minute.toFixed(2)],
    ['Time-weighted bitrate', t.time_weighted_bitrate_kbps === null ? '—' : `${Math.round(t.time_weighted_bitrate_kbps).toLocaleString()} kb/s`],
    // Shares of the playback time (0–100 %), and by how much on average (issue 49).
    ['Upscaling (time)', pct(t.upscale_percentage)],
    ['Downscaling (time)', pct(t.downscale_percentage)],
    ['Average upscale', pct(t.upscale_amount_percentage)],
  ];
  return (
    <>
      <h2>Experience</h2>
      <KpiList items={items} label="Experience" />
    </>
  );
}

function KpiList({ items, label }: { items: Array<[string, string]>; label?: string }) {
  return (
    <dl class="kpis" aria-label={label}>
      {items.map(([k, v]) => (
        <div class="kpi" key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

const tLabel = (iso: string, g: 'hour' | 'day') => {
  const d = new Date(iso);
  return g === 'hour' ? `${String(d.getHours()).padStart(2, '0')}:00` : d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
};

/** The bucket that holds now (this hour, today) is still filling. */
const isPartial = (iso: string, g: 'hour' | 'day') => {
  const start = new Date(iso).getTime();
  const now = Date.now();
  return now >= start && now < start + (g === 'hour' ? 3600_000 : 86400_000);
};

function Series({ r }: { r: Report }) {
  const point = (p: Report['series'][number], value: number): Point => ({ label: tLabel(p.t, r.granularity), value, partial: isPartial(p.t, r.granularity) });
  const views = r.series.map((p) => point(p, p.views));
  const watch = r.series.map((p) => point(p, Math.round((p.watch_time_seconds / 60) * 10) / 10));
  return (
    <>
      <BarChart title="Views" points={views} unit="views" />
      <BarChart title="Watch time (minutes)" points={watch} unit="min" />
    </>
  );
}

/** What the figures are as of: the rollup's last cut (views since come with its next run). */
function AsOf({ r }: { r: Report }) {
  return (
    <p class="hint" data-as-of={r.as_of ?? ''}>
      {r.as_of
        ? `Figures as of ${new Date(r.as_of).toLocaleTimeString()}; updated about every minute.`
        : 'Figures computed from the raw events just now.'}
    </p>
  );
}

function Breakdowns({ b }: { b: Report['breakdowns'] }) {
  return (
    <>
      <h2>Breakdowns</h2>
      <div class="breakdowns">
        <BarList title="Browser" rows={b.browser} />
        <BarList title="Operating system" rows={b.os} />
        <BarList title="Device" rows={b.device} />
        <BarList title="Rendition" rows={b.rendition} />
        <BarList title="Country" rows={b.country} />
      </div>
    </>
  );
}

/** The Overview / Analytics tabs of a video's page. */
export function VideoTabs({ id, current }: { id: string; current: 'overview' | 'analytics' }) {
  return (
    <nav class="tabs" aria-label="Video">
      <Link to={`/videos/${id}`} current={current === 'overview'}>
        Overview
      </Link>
      <Link to={`/videos/${id}/analytics`} current={current === 'analytics'}>
        Analytics
      </Link>
    </nav>
  );
}

export function VideoAnalyticsPage({ id }: { id: string }) {
  const [days, setDays] = useState(7);
  const { data: video } = useLoad(() => api<{ title: string }>('GET', `/videos/${id}`), [id]);
  const { data: r, error } = useReport(`/videos/${id}/analytics`, days);
  return (
    <>
      <h1>{video?.title ?? 'Video'}</h1>
      <VideoTabs id={id} current="analytics" />
      <RangePicker days={days} onChange={setDays} />
      {!r ? (
        <ErrorNote error={error} />
      ) : (
        <>
          <AsOf r={r} />
          <Kpis t={r.totals} />
          <Experience t={r.totals} />
          <Series r={r} />
          {r.retention && r.retention.length > 0 && (
            <AreaChart
              title="Audience retention (viewers still watching)"
              points={r.retention.filter((_, i) => i % 5 === 0).map((p) => ({ label: `${Math.round(p.second)} s`, value: p.viewers }))}
              unit="viewers"
            />
          )}
          <Breakdowns b={r.breakdowns} />
        </>
      )}
    </>
  );
}

export function AnalyticsOverviewPage() {
  const [days, setDays] = useState(7);
  const { data: r, error } = useReport('/analytics', days);
  return (
    <>
      <h1>Analytics</h1>
      <p class="muted">Cookieless: no cookies, no stored addresses; unique viewers are counted per day.</p>
      <RangePicker days={days} onChange={setDays} />
      {!r ? (
        <ErrorNote error={error} />
      ) : (
        <>
          <AsOf r={r} />
          <Kpis t={r.totals} />
          <Experience t={r.totals} />
          <Series r={r} />
          <TopList r={r} />
          <Breakdowns b={r.breakdowns} />
        </>
      )}
    </>
  );
}

/**
 * The top videos and live streams, the rest in one line and the total: the table adds up to the
 * totals above it (issue 49: 706 views in the totals, three videos of one view in the list).
 */
function TopList({ r }: { r: Report }) {
  const rows = [
    ...(r.top_videos ?? []).map((v) => ({ key: v.video_id, kind: 'Video', name: <Link to={`/videos/${v.video_id}/analytics`}>{v.title || v.video_id}</Link>, views: v.views, watch: v.watch_time_seconds })),
    ...(r.top_live_streams ?? []).map((l) => ({ key: l.live_stream_id, kind: 'Live stream', name: <Link to={`/live?stream=${l.live_stream_id}`}>{l.title || l.live_stream_id}</Link>, views: l.views, watch: l.watch_time_seconds })),
  ].sort((a, b) => b.views - a.views || b.watch - a.watch);
  const o = r.others;
  return (
    <>
      <h2>Top videos and live streams</h2>
      {rows.length === 0 ? (
        <p class="muted">No views in this period.</p>
      ) : (
        <table class="top">
          <thead>
            <tr>
              <th scope="col">Video or live stream</th>
              <th scope="col" class="num">Views</th>
              <th scope="col" class="num">Watch time</th>
              <th scope="col">Kind</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((x) => (
              <tr key={x.key} data-top={x.key}>
                <td class="wrap">{x.name}</td>
                <td class="num">{x.views.toLocaleString()}</td>
                <td class="num">{hms(x.watch)}</td>
                <td>{x.kind}</td>
              </tr>
            ))}
            {o && o.views > 0 && (
              <tr data-top="others">
                <td class="wrap">
                  Others ({[o.videos ? `${o.videos} video${o.videos === 1 ? '' : 's'}` : '', o.live_streams ? `${o.live_streams} live stream${o.live_streams === 1 ? '' : 's'}` : ''].filter(Boolean).join(', ')})
                </td>
                <td class="num">{o.views.toLocaleString()}</td>
                <td class="num">{hms(o.watch_time_seconds)}</td>
                <td />
              </tr>
            )}
            <tr data-top="total" class="total">
              <th scope="row">Total</th>
              <td class="num">{r.totals.views.toLocaleString()}</td>
              <td class="num">{hms(r.totals.watch_time_seconds)}</td>
              <td />
            </tr>
          </tbody>
        </table>
      )}
    </>
  );
}
