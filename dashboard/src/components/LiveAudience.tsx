import { api, qs, type Schemas } from '../api';
import { useLoad, usePoll } from '../hooks';
import { AreaChart } from './charts';

type Figures = Pick<Schemas['LiveStreamAnalytics'], 'concurrent_viewers' | 'peak_concurrent_viewers' | 'concurrent_series' | 'latency_p50_seconds' | 'latency_p95_seconds'>;

/** How far back the panel reads: the per-minute series of the last two hours (the API aligns `from` to the hour). */
const WINDOW_MS = 2 * 3600_000;

const minute = (iso: string) => {
  const d = new Date(iso);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
};

const seconds = (v: number | null) => (v === null ? '—' : `${v.toFixed(1)} s`);

/**
 * SPEC §18 on the Live page (issue 36): one stream's audience — viewers now, the peak and the
 * viewers per minute (the shared chart with its table) over the last two hours, and the latency
 * its players reported (median and p95) when they reported any. Read every 10 s.
 */
export function LiveAudience({ id }: { id: string }) {
  const { data, error, reload } = useLoad(() => {
    const to = new Date();
    return api<Figures>('GET', `/live-streams/${id}/analytics${qs({ from: new Date(to.getTime() - WINDOW_MS).toISOString(), to: to.toISOString(), granularity: 'hour' })}`);
  }, [id]);
  usePoll(true, reload, 10_000);
  if (error && !data) return <p class="muted">Audience unavailable.</p>;
  if (!data) return null;
  const items: Array<[string, string]> = [
    ['Watching now', data.concurrent_viewers.toLocaleString()],
    ['Peak', data.peak_concurrent_viewers.toLocaleString()],
    ['Latency median', seconds(data.latency_p50_seconds)],
    ['Latency p95', seconds(data.latency_p95_seconds)],
  ];
  return (
    <section aria-label="Audience" data-audience={id}>
      <h3>Audience</h3>
      <dl class="kpis">
        {items
          .filter(([k]) => !k.startsWith('Latency') || data.latency_p50_seconds !== null)
          .map(([k, v]) => (
            <div class="kpi" key={k}>
              <dt>{k}</dt>
              <dd>{v}</dd>
            </div>
          ))}
      </dl>
      <AreaChart title="Concurrent viewers per minute" points={data.concurrent_series.map((p) => ({ label: minute(p.t), value: p.concurrent_viewers }))} unit="viewers" />
    </section>
  );
}
