import { useState } from 'preact/hooks';
import { api, qs, type Page, type Video } from '../api';
import { AnySelect, ErrorNote, Link, StatusBadge } from '../components/ui';
import { bytes, duration, when } from '../format';
import { useLoad, usePoll } from '../hooks';

const STATUSES = [
  { value: 'pending_upload', label: 'Waiting for upload' },
  { value: 'processing', label: 'Processing' },
  { value: 'ready', label: 'Ready' },
  { value: 'failed', label: 'Failed' },
];
const VISIBILITIES = [
  { value: 'public', label: 'Public' },
  { value: 'unlisted', label: 'Unlisted' },
  { value: 'private', label: 'Private' },
];

interface Filters {
  q: string;
  status: string;
  visibility: string;
  folder_id: string;
  tag: string;
}

const EMPTY: Filters = { q: '', status: '', visibility: '', folder_id: '', tag: '' };

export function VideosPage() {
  const [filters, setFilters] = useState<Filters>(EMPTY);
  // Keyset pages: the cursors that led to each page so far, so "Previous" can go back.
  const [cursors, setCursors] = useState<Array<string | undefined>>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const { data: folders } = useLoad(() => api<Page<{ id: string; name: string }>>('GET', '/folders'), []);
  const { data: tags } = useLoad(() => api<Page<{ id: string; name: string }>>('GET', '/tags'), []);
  const { data, error, reload } = useLoad(
    () => api<Page<Video>>('GET', `/videos${qs({ ...filters, limit: 20, cursor })}`),
    [filters, cursor],
  );
  const busy = !!data?.data.some((v) => v.status === 'processing' || v.status === 'pending_upload');
  usePoll(busy, reload);

  const apply = (e: Event) => {
    e.preventDefault();
    const f = Object.fromEntries(new FormData(e.target as HTMLFormElement)) as unknown as Filters;
    setFilters(f);
    setCursors([undefined]);
  };

  return (
    <>
      <div class="row spread">
        <h1>Videos</h1>
        <Link to="/upload" class="button">
          Upload videos
        </Link>
      </div>
      <form class="filters" onSubmit={apply} role="search" aria-label="Search and filter videos">
        <label>
          Search titles
          <input name="q" type="search" defaultValue={filters.q} />
        </label>
        <AnySelect label="Status" name="status" value={filters.status} options={STATUSES} />
        <AnySelect label="Visibility" name="visibility" value={filters.visibility} options={VISIBILITIES} />
        <AnySelect label="Folder" name="folder_id" value={filters.folder_id} options={folders?.data.map((f) => ({ value: f.id, label: f.name }))} />
        <AnySelect label="Tag" name="tag" value={filters.tag} options={tags?.data.map((t) => ({ value: t.name, label: t.name }))} />
        <button type="submit">Apply</button>
      </form>
      <ErrorNote error={error} />
      {data && data.data.length === 0 && <p>No videos match.</p>}
      <ul class="videos" aria-live="polite">
        {data?.data.map((v) => (
          <li key={v.id} class="video-card" data-video-id={v.id}>
            <div class="thumb" aria-hidden="true">
              {/* Private and encrypted videos' images need a token (docs/protection.md): no broken image. */}
              {v.thumbnail_url && v.visibility !== 'private' && v.encryption !== 'aes-128' ? <img src={v.thumbnail_url} alt="" loading="lazy" /> : <span>{v.status === 'failed' ? '!' : '…'}</span>}
            </div>
            <div class="meta">
              <Link to={`/videos/${v.id}`}>{v.title}</Link>
              <div class="sub">
                <StatusBadge video={v} /> {v.visibility} · {duration(v.duration_seconds)} · {bytes(v.size_bytes)} · {when(v.created_at)}
              </div>
              {v.tags.length > 0 && (
                <div class="tags" aria-label="Tags">
                  {v.tags.map((t) => (
                    <span class="tag" key={t}>
                      {t}
                    </span>
                  ))}
                </div>
              )}
            </div>
          </li>
        ))}
      </ul>
      <div class="row">
        <button type="button" class="secondary" disabled={cursors.length < 2} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous page
        </button>
        <button type="button" class="secondary" disabled={!data?.next_cursor} onClick={() => setCursors([...cursors, data!.next_cursor!])}>
          Next page
        </button>
      </div>
    </>
  );
}
