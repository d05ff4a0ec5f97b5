// Plain SVG charts (no chart library, no third-party host). Each is an image with a title and a
// text description for screen readers, and the same numbers as a table behind "Show as table".

export interface Point {
  label: string;
  value: number;
  /** A bucket still filling (today, this hour): drawn apart and named so, never read as a drop. */
  partial?: boolean;
}

let ids = 0;
const nextId = () => `chart-${++ids}`;

function DataTable({ caption, points, unit }: { caption: string; points: Point[]; unit: string }) {
  return (
    <details class="chart-table">
      <summary>Show as table</summary>
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{unit === '%' ? 'Position' : 'Time'}</th>
            <th scope="col">{caption}</th>
          </tr>
        </thead>
        <tbody>
          {points.map((p) => (
            <tr key={p.label} data-partial={p.partial ? '' : undefined}>
              <td>{p.label}{p.partial ? ' (so far)' : ''}</td>
              <td>{fmt(p.value)}{unit === '%' ? '' : ` ${unit}`}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}

const fmt = (n: number) => (Number.isInteger(n) ? n.toLocaleString() : n.toLocaleString(undefined, { maximumFractionDigits: 1 }));

/** A filled line over time (views, watch time) or over the video (retention). */
export function AreaChart({ title, points, unit, every = 1 }: { title: string; points: Point[]; unit: string; every?: number }) {
  const id = nextId();
  const W = 720;
  const H = 220;
  const padL = 44;
  const padB = 28;
  const padT = 12;
  const max = Math.max(1, ...points.map((p) => p.value));
  const x = (i: number) => padL + (points.length <= 1 ? 0 : (i * (W - padL - 8)) / (points.length - 1));
  const y = (v: number) => H - padB - (v / max) * (H - padB - padT);
  const line = points.map((p, i) => `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y(p.value).toFixed(1)}`).join(' ');
  const area = points.length ? `${line} L${x(points.length - 1).toFixed(1)},${H - padB} L${padL},${H - padB} Z` : '';
  const ticks = [0, max / 2, max];
  const labelEvery = Math.max(every, Math.ceil(points.length / 8));
  return (
    <figure class="chart-figure">
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={`${id}-t ${id}-d`} class="chart">
        <title id={`${id}-t`}>{title}</title>
        <desc id={`${id}-d`}>{points.length ? `From ${points[0].label} to ${points[points.length - 1].label}; highest ${fmt(max)} ${unit}.` : 'No data.'}</desc>
        {ticks.map((t) => (
          <g key={t}>
            <line x1={padL} x2={W - 8} y1={y(t)} y2={y(t)} class="grid" />
            <text x={padL - 6} y={y(t) + 4} text-anchor="end" class="label">
              {fmt(Math.round(t * 10) / 10)}
            </text>
          </g>
        ))}
        <path d={area} class="area" />
        <path d={line} class="line" />
        {points.map((p, i) =>
          i % labelEvery === 0 || i === points.length - 1 ? (
            <text key={p.label} x={x(i)} y={H - 8} text-anchor={i === 0 ? 'start' : i === points.length - 1 ? 'end' : 'middle'} class="label">
              {p.label}
            </text>
          ) : null,
        )}
      </svg>
      <DataTable caption={title} points={points} unit={unit} />
    </figure>
  );
}

/** Horizontal bars for a breakdown (browser, OS, device, rendition). */
export function BarList({ title, rows }: { title: string; rows: Array<{ value: string; views: number }> }) {
  const max = Math.max(1, ...rows.map((r) => r.views));
  return (
    <section class="barlist" aria-label={title}>
      <h3>{title}</h3>
      {rows.length === 0 && <p class="muted">No views yet.</p>}
      <table>
        <tbody>
          {rows.map((r) => (
            <tr key={r.value}>
              <th scope="row">{r.value}</th>
              <td class="barcell">
                <span class="hbar" style={{ width: `${(100 * r.views) / max}%` }} aria-hidden="true" />
              </td>
              <td class="num">{r.views.toLocaleString()}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/**
 * One bar per hour or day (views, watch time over time): each bucket stands on its own, so
 * today's partial figure is not a slope down from yesterday (issue 49). A partial bucket is
 * hatched and its label says "so far".
 */
export function BarChart({ title, points, unit }: { title: string; points: Point[]; unit: string }) {
  const id = nextId();
  const W = 720;
  const H = 220;
  const padL = 44;
  const padB = 28;
  const padT = 12;
  const max = Math.max(1, ...points.map((p) => p.value));
  const slot = (W - padL - 8) / Math.max(1, points.length);
  const bar = Math.max(1, slot * 0.7);
  const y = (v: number) => H - padB - (v / max) * (H - padB - padT);
  const ticks = [0, max / 2, max];
  const labelEvery = Math.max(1, Math.ceil(points.length / 8));
  const partial = points.find((p) => p.partial);
  return (
    <figure class="chart-figure">
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={`${id}-t ${id}-d`} class="chart">
        <title id={`${id}-t`}>{title}</title>
        <desc id={`${id}-d`}>
          {points.length ? `From ${points[0].label} to ${points[points.length - 1].label}; highest ${fmt(max)} ${unit}.` : 'No data.'}
          {partial ? ` ${partial.label} is still going on: ${fmt(partial.value)} ${unit} so far.` : ''}
        </desc>
        <defs>
          <pattern id={`${id}-hatch`} width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
            <rect width="6" height="6" class="hatch-bg" />
            <line x1="0" y1="0" x2="0" y2="6" class="hatch" />
          </pattern>
        </defs>
        {ticks.map((t) => (
          <g key={t}>
            <line x1={padL} x2={W - 8} y1={y(t)} y2={y(t)} class="grid" />
            <text x={padL - 6} y={y(t) + 4} text-anchor="end" class="label">
              {fmt(Math.round(t * 10) / 10)}
            </text>
          </g>
        ))}
        {points.map((p, i) => {
          const x = padL + i * slot + (slot - bar) / 2;
          const top = y(p.value);
          return (
            <rect
              key={p.label}
              x={x.toFixed(1)}
              y={top.toFixed(1)}
              width={bar.toFixed(1)}
              height={Math.max(0, H - padB - top).toFixed(1)}
              class={p.partial ? 'bar partial' : 'bar'}
              style={p.partial ? { fill: `url(#${id}-hatch)` } : undefined}
              data-partial={p.partial ? '' : undefined}
            >
              <title>{`${p.label}${p.partial ? ' (so far)' : ''}: ${fmt(p.value)} ${unit}`}</title>
            </rect>
          );
        })}
        {points.map((p, i) =>
          p.partial ? (
            <text key={`${p.label}-partial`} x={padL + i * slot + slot / 2} y={Math.max(padT + 10, y(p.value) - 4)} text-anchor={slot < 60 && i === points.length - 1 ? 'end' : 'middle'} class="label" data-partial-label>
              so far
            </text>
          ) : null,
        )}
        {points.map((p, i) =>
          i % labelEvery === 0 || i === points.length - 1 ? (
            <text key={p.label} x={padL + i * slot + slot / 2} y={H - 8} text-anchor={i === points.length - 1 && slot < 60 ? 'end' : 'middle'} class="label">
              {p.label}
            </text>
          ) : null,
        )}
      </svg>
      <DataTable caption={title} points={points} unit={unit} />
    </figure>
  );
}
