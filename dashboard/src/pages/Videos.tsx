import { useState } from 'preact/hooks';
import { api, qs, type Page, type Video } from '../api';
import { ErrorNote, Link, StatusBadge } from '../components/ui';
import { bytes, duration, when } from '../format';
import { useLoad, usePoll } from '../hooks';

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
        <label>
          Status
          <select name="status" defaultValue={filters.status}>
            <option value="">Any</option>
            <option value="pending_upload">Waiting for upload</option>
            <option value="processing">Processing</option>
            <option value="ready">Ready</option>
            <option value="failed">Failed</option>
          </select>
        </label>
        <label>
          Visibility
          <select name="visibility" defaultValue={filters.visibility}>
            <option value="">Any</option>
            <option value="public">Public</option>
            <option value="unlisted">Unlisted</option>
            <option value="private">Private</option>
          </select>
        </label>
        <label>
          Folder
          <select name="folder_id" defaultValue={filters.folder_id}>
            <option value="">Any</option>
            {folders?.data.map((f) => (
              <option value={f.id} key={f.id}>
                {f.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Tag
          <select name="tag" defaultValue={filters.tag}>
            <option value="">Any</option>
            {tags?.data.map((t) => (
              <option value={t.name} key={t.id}>
                {t.name}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Apply</button>
      </form>
      <ErrorNote error={error} />
      {data && data.data.length === 0 && <p>No videos match.</p>}
      <ul class="videos" aria-live="polite">
        {data?.data.map((v) => (
          <li key={v.id} class="video-card" data-video-id={v.id}>
            <div class="thumb" aria-hidden="true">
              {v.thumbnail_url && v.visibility !== 'private' ? <img src={v.thumbnail_url} alt="" loading="lazy" /> : <span>{v.status === 'failed' ? '!' : '…'}</span>}
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
