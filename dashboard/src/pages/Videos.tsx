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
  // A search or a filter that finds nothing is "no match"; a library with nothing in it offers the upload.
  const filtered = Object.values(filters).some(Boolean);
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
      {data && data.data.length === 0 && (filtered || cursors.length > 1 ? <p>No videos match.</p> : <EmptyLibrary />)}
      <ul class="videos" aria-live="polite">
        {data?.data.map((v) => (
          <li key={v.id} class="video-card" data-video-id={v.id}>
            <Thumb v={v} />
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

/** A new workspace's library: what to do first, rather than "No videos match." (issue 49). */
function EmptyLibrary() {
  return (
    <div class="empty" data-testid="empty-library">
      <h2>No videos yet</h2>
      <p>Upload a file (or several) and it plays here within seconds; every format ffmpeg reads is welcome.</p>
      <Link to="/upload" class="button">
        Upload your first video
      </Link>
    </div>
  );
}

const audioOnly = (v: Video) => v.status === 'ready' && !v.width && !v.height;

/**
 * The video's picture, or what it is instead: private and encrypted videos' images need a token
 * (docs/protection.md), so they say "Private"; a video not ready says where it is; an audio-only
 * one says so (issue 49: a grey "…" box told nothing).
 */
function Thumb({ v }: { v: Video }) {
  const locked = v.visibility === 'private' || v.encryption === 'aes-128';
  const image = v.thumbnail_url && !locked ? <img src={v.thumbnail_url} alt="" loading="lazy" /> : null;
  const state = v.status !== 'ready' ? STATUSES.find((x) => x.value === v.status)?.label ?? v.status : locked ? (v.visibility === 'private' ? 'Private' : 'Encrypted') : null;
  const labels = [state, audioOnly(v) ? 'Audio only' : null].filter(Boolean);
  return (
    <div class={`thumb${image ? '' : ' thumb-state'}`} aria-hidden="true" data-state={v.status}>
      {image}
      {labels.length > 0 && <span class="thumb-label">{labels.join(' · ')}</span>}
    </div>
  );
}
