import { useEffect, useState } from 'preact/hooks';
import { api, type Page, type Schemas } from '../api';
import { Collection, useActions } from '../components/collection';
import { LiveStudio } from '../components/LiveStudio';
import { CopyButton, Link, Secret } from '../components/ui';
import { watermarkChoice, WatermarkSelect } from '../components/WatermarkSelect';
import { when } from '../format';
import { useLoad, usePoll } from '../hooks';
import { useQueryParam } from '../router';

type LiveStream = Schemas['LiveStream'];

/**
 * SPEC §17 in the dashboard: create a stream (key shown once), what to paste into OBS, status,
 * preview, recordings. Members manage streams too (their simulcast targets are the owners', and
 * this page does not set any). The form and the table are the shared Collection; a panel about
 * one stream (a preview, its health) belongs beside it, as its own component.
 */
export function LivePage() {
  const { data, error, reload } = useLoad(() => api<Page<LiveStream>>('GET', '/live-streams?limit=100'), []);
  const [created, setCreated] = useState<LiveStream | null>(null);
  const { failure, run } = useActions(reload);
  usePoll(true, reload, 3000);
  // `?stream=ls_…` (the "preview" links, the studio's note on the stream that holds the plan's slot) picks the studio's stream.
  const selected = useQueryParam('stream');

  const create = (f: FormData) =>
    run(async () =>
      setCreated(
        await api<LiveStream>('POST', '/live-streams', {
          title: String(f.get('title') ?? ''),
          latency_mode: f.get('latency_mode'),
          reconnect_window: Number(f.get('reconnect_window')),
          ...watermarkChoice(String(f.get('watermark_id') ?? '')),
        }),
      ),
    );

  return (
    <>
      <h1>Live</h1>
      <p>Each live stream is an ingest point for OBS or any RTMP or SRT encoder. Every broadcast is played live and recorded as a video.</p>
      <Collection<LiveStream>
        create={{
          label: 'Create a live stream',
          submit: 'Create live stream',
          onCreate: create,
          fields: [
            ['Title', <input name="title" maxLength={200} placeholder="e.g. Weekly town hall" />],
            [
              'Latency',
              <select name="latency_mode" defaultValue="standard">
                <option value="standard">Standard (≤ 10 s)</option>
                <option value="low">Low (≤ 4 s)</option>
              </select>,
            ],
            ['Reconnect window (s)', <input name="reconnect_window" type="number" min={0} max={1800} defaultValue="60" />],
            ['Watermark', <WatermarkSelect name="watermark_id" />],
          ],
        }}
        error={failure ?? error}
        rows={data?.data}
        idAttribute="data-live-id"
        columns={COLUMNS}
        actions={(ls) => <StreamActions stream={ls} run={run} onNewKey={setCreated} />}
      >
        {created?.stream_key && <StreamKey stream={created} />}
      </Collection>
      <LiveStudio streams={data?.data ?? []} selected={selected} known={created?.stream_key ? { id: created.id, key: created.stream_key } : null} />
    </>
  );
}

/** The key of a stream just created or reset, shown once, with what to paste into OBS. */
function StreamKey({ stream }: { stream: LiveStream }) {
  return (
    <>
      <Secret title={`Stream key of "${stream.title || stream.id}".`} value={stream.stream_key!} />
      <p>
        In OBS: Settings → Stream → Service <em>Custom</em>; Server <code>{stream.ingest.rtmp_url}</code> <CopyButton text={stream.ingest.rtmp_url} />; Stream Key: the key above.
        Keyframe interval {stream.latency_mode === 'low' ? '1' : '2'} s, ≤ 1080p60, ≤ 20 Mb/s. SRT: <code>{stream.ingest.srt_url}</code>
      </p>
    </>
  );
}

const COLUMNS = [
  // The RTMP server is the same for every stream: the studio below shows it, with SRT and WHIP.
  { title: 'Title', wrap: true, cell: (ls: LiveStream) => ls.title || ls.id },
  {
    title: 'Status',
    cell: (ls: LiveStream) => (
      <span data-status={ls.status}>
        {ls.disabled ? 'disabled' : ls.status}
        {ls.status === 'active' && (
          <>
            {' '}
            <Link to={`/live?stream=${ls.id}`}>preview</Link>
          </>
        )}
        {ls.last_disconnect_reason && ls.status !== 'active' && <small> ({ls.last_disconnect_reason})</small>}
      </span>
    ),
  },
  { title: 'Latency', cell: (ls: LiveStream) => ls.latency_mode },
  { title: 'Recordings', wrap: true, cell: (ls: LiveStream) => <Recordings ids={ls.recent_video_ids.slice(0, 3)} /> },
  { title: 'Created', cell: (ls: LiveStream) => when(ls.created_at) },
];

type Recording = { title: string; created_at: string } | null;
/** Titles and start times of recordings, fetched once each per page load (a recording's title rarely changes). */
const recordings = new Map<string, Promise<Recording>>();
const recordingOf = (id: string) => {
  let p = recordings.get(id);
  if (!p) recordings.set(id, (p = api<Schemas['Video']>('GET', `/videos/${id}`).then((v) => ({ title: v.title, created_at: v.created_at }), () => null)));
  return p;
};

/** A stream's latest recordings by title and start time, each a link to its video (issue 49: truncated ids were all it showed). */
function Recordings({ ids }: { ids: string[] }) {
  const [known, setKnown] = useState<Record<string, Recording>>({});
  const key = ids.join(',');
  useEffect(() => {
    let live = true;
    void Promise.all(ids.map(async (id) => [id, await recordingOf(id)] as const)).then((all) => live && setKnown(Object.fromEntries(all)));
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  if (!ids.length) return <small>none yet</small>;
  return (
    <ul class="plain recordings" data-recordings>
      {ids.map((id) => {
        const r = known[id];
        return (
          <li key={id}>
            <Link to={`/videos/${id}`}>{r ? r.title || 'Untitled recording' : 'Recording'}</Link>
            {r && <small> · {startTime(r.created_at)}</small>}
          </li>
        );
      })}
    </ul>
  );
}

/** "14:05" today, else "5 Dec, 14:05". */
function startTime(iso: string): string {
  const d = new Date(iso);
  const time = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  return d.toDateString() === new Date().toDateString() ? time : `${d.toLocaleDateString(undefined, { day: 'numeric', month: 'short' })}, ${time}`;
}

function StreamActions({ stream: ls, run, onNewKey }: { stream: LiveStream; run: (fn: () => Promise<unknown>) => Promise<boolean>; onNewKey: (s: LiveStream) => void }) {
  return (
    <>
      {ls.status !== 'idle' && (
        <button type="button" class="secondary" onClick={() => run(() => api('POST', `/live-streams/${ls.id}/complete`))}>
          End broadcast
        </button>
      )}
      <button type="button" class="secondary" onClick={() => run(async () => onNewKey(await api<LiveStream>('POST', `/live-streams/${ls.id}/reset-stream-key`)))}>
        New key
      </button>
      <button type="button" class="secondary" onClick={() => run(() => api('POST', `/live-streams/${ls.id}/${ls.disabled ? 'enable' : 'disable'}`))}>
        {ls.disabled ? 'Enable' : 'Disable'}
      </button>
      <button
        type="button"
        class="danger"
        onClick={() => confirm(`Delete the live stream "${ls.title || ls.id}"? Its recordings stay.`) && run(() => api('DELETE', `/live-streams/${ls.id}`))}
      >
        Delete
      </button>
    </>
  );
}
