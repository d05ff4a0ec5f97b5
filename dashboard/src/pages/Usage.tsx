import { api, type Schemas } from '../api';
import { ErrorNote } from '../components/ui';
import { bytes } from '../format';
import { useLoad } from '../hooks';

type Usage = Schemas['Usage'];

function Meter({ label, used, limit }: { label: string; used: number; limit: number | null }) {
  return (
    <div class="meter">
      <div class="row spread">
        <span>{label}</span>
        <span>
          {bytes(used)} of {limit === null ? 'unlimited' : bytes(limit)}
        </span>
      </div>
      {limit !== null && <meter min={0} max={limit} value={used} high={limit * 0.8} optimum={0} aria-label={label} />}
    </div>
  );
}

/** Monthly bandwidth as an inline SVG bar chart (no chart library, no third-party host). */
function Chart({ history, limit }: { history: Usage['bandwidth_history']; limit: number | null }) {
  const W = 600;
  const H = 200;
  const pad = 28;
  const max = Math.max(1, limit ?? 0, ...history.map((h) => h.bytes));
  const bw = (W - pad * 2) / history.length;
  const y = (b: number) => H - pad - (b / max) * (H - pad * 2);
  return (
    <figure>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby="bw-title bw-desc" class="chart">
        <title id="bw-title">Bandwidth per month</title>
        <desc id="bw-desc">{history.map((h) => `${h.month}: ${bytes(h.bytes)}`).join('; ')}</desc>
        <line x1={pad} x2={W - pad} y1={H - pad} y2={H - pad} class="axis" />
        {limit !== null && (
          <>
            <line x1={pad} x2={W - pad} y1={y(limit)} y2={y(limit)} class="limit" />
            <text x={W - pad} y={y(limit) - 4} text-anchor="end" class="label">
              plan limit {bytes(limit)}
            </text>
          </>
        )}
        {history.map((h, i) => (
          <g key={h.month}>
            <rect x={pad + i * bw + bw * 0.15} width={bw * 0.7} y={y(h.bytes)} height={H - pad - y(h.bytes)} class="bar" />
            <text x={pad + i * bw + bw / 2} y={H - pad + 16} text-anchor="middle" class="label">
              {h.month}
            </text>
            <text x={pad + i * bw + bw / 2} y={y(h.bytes) - 4} text-anchor="middle" class="label">
              {h.bytes ? bytes(h.bytes) : ''}
            </text>
          </g>
        ))}
      </svg>
    </figure>
  );
}

export function UsagePage() {
  const { data, error } = useLoad(() => api<Usage>('GET', '/usage'), []);
  if (!data) return <ErrorNote error={error} />;
  return (
    <>
      <h1>Usage</h1>
      <p>
        Plan: <strong>{data.plan}</strong> · {data.storage.videos} videos
      </p>
      <Meter label="Storage" used={data.storage.used_bytes} limit={data.storage.limit_bytes} />
      <Meter label={`Bandwidth in ${data.bandwidth.month}`} used={data.bandwidth.used_bytes} limit={data.bandwidth.limit_bytes} />
      <h2>Bandwidth, last {data.bandwidth_history.length} months</h2>
      <Chart history={data.bandwidth_history} limit={data.bandwidth.limit_bytes} />
    </>
  );
}
