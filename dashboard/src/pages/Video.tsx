import { useState } from 'preact/hooks';
import { api, type Page, type Video, type Schemas } from '../api';
import { CopyButton, ErrorNote, Progress, StatusBadge, TableHead } from '../components/ui';
import { bytes, duration, when } from '../format';
import { useLoad, usePoll } from '../hooks';
import { navigate } from '../router';
import { VideoTabs } from './Analytics';
import { Captions } from './VideoCaptions';

type Playback = Schemas['Playback'];

export function VideoPage({ id }: { id: string }) {
  const { data: v, error, reload } = useLoad(() => api<Video>('GET', `/videos/${id}`), [id]);
  const ready = v?.status === 'ready';
  // A freshly signed URL on every visit: the player works whatever the visibility.
  const { data: playback, reload: resign } = useLoad(() => (ready ? api<Playback>('GET', `/playback/${id}`) : Promise.resolve(undefined)), [id, ready]);
  const aligning = (v?.captions ?? []).some((c) => c.status === 'aligning');
  usePoll(!!v && (aligning || v.status === 'processing' || v.status === 'pending_upload' || v.renditions.some((r) => r.status !== 'ready' && r.status !== 'failed')), reload);

  if (error) return <ErrorNote error={error} />;
  if (!v) return <p>Loading…</p>;
  const embedCode = v.embed_url ? `<iframe src="${v.embed_url}" style="width:100%;aspect-ratio:16/9;border:0" allow="autoplay; fullscreen" allowfullscreen></iframe>` : '';

  return (
    <>
      <h1>{v.title}</h1>
      <VideoTabs id={v.id} current="overview" />
      <p>
        <StatusBadge video={v} /> {v.visibility} · {duration(v.duration_seconds)} · {v.width ? `${v.width}×${v.height}` : '—'} · {bytes(v.size_bytes)} · uploaded {when(v.created_at)}
      </p>
      {v.status === 'processing' && <Progress value={v.progress} label="Processing" />}
      {v.status === 'failed' && <p class="error">{v.error_message}</p>}
      <div class="video-grid">
        <section aria-label="Player">
          {playback ? (
            <iframe class="player" title={`Player: ${v.title}`} src={playback.embed_url} allow="autoplay; fullscreen" allowFullScreen />
          ) : (
            <div class="player placeholder">{ready ? 'Loading player…' : 'The player appears when the video is ready.'}</div>
          )}
          {playback && (
            <div class="copyable">
              <h2>Share</h2>
              <label>
                Embed code
                <textarea readOnly rows={3} value={embedCode} />
              </label>
              <CopyButton text={embedCode} label="Copy embed code" />
              <label>
                Signed playback URL (HLS, expires {when(playback.expires_at)})
                <input readOnly value={playback.hls_url} data-testid="signed-url" />
              </label>
              <div class="row">
                <CopyButton text={playback.hls_url} label="Copy signed URL" />
                <button type="button" class="secondary" onClick={() => void resign()}>
                  Sign a new URL
                </button>
              </div>
            </div>
          )}
        </section>
        <section aria-label="Details">
          <EditForm video={v} onSaved={reload} />
          <Renditions video={v} />
          <AudioTracks video={v} />
          <Captions video={v} token={playback?.token} onChange={reload} />
          <Extras video={v} />
          <DeleteButton id={v.id} />
        </section>
      </div>
    </>
  );
}

/** SPEC §19: the AUDIO group's renditions and the measured loudness. */
function AudioTracks({ video }: { video: Video }) {
  const tracks = video.audio_tracks ?? [];
  if (!tracks.length && video.loudness_lufs == null) return null;
  return (
    <>
      <h2>Audio</h2>
      {video.loudness_lufs != null && <p>Loudness {video.loudness_lufs} LUFS (EBU R128)</p>}
      {tracks.length > 0 && (
        <table>
          <TableHead cols={['Language', 'Name', 'Channels', 'State']} />
          <tbody>
            {tracks.map((t) => (
              <tr key={`${t.language}-${t.channels}-${t.name}`}>
                <td>{t.language}{t.default ? ' (default)' : ''}</td>
                <td>{t.name}</td>
                <td>{t.channels === 6 ? '5.1' : 'stereo'}</td>
                <td>{t.status}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function Renditions({ video }: { video: Video }) {
  if (!video.renditions.length) return null;
  return (
    <>
      <h2>Renditions</h2>
      <table>
        <TableHead cols={['Name', 'Size', 'Bitrate', 'State']} />
        <tbody>
          {video.renditions.map((r) => (
            <tr key={r.name}>
              <td>{r.name}</td>
              <td>
                {r.width}×{r.height}
              </td>
              <td>{Math.round(r.bitrate / 1000)} kb/s</td>
              <td>{r.status === 'processing' ? `processing ${r.progress}%` : r.status}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** MP4 downloads, when the read shape carries them (SPEC §14). */
function Extras({ video }: { video: Video }) {
  const mp4 = video.static_renditions ?? [];
  return (
    <>
      {mp4.length > 0 && (
        <>
          <h2>Downloads</h2>
          <ul>
            {mp4.map((d, i) => (
              <li key={d.name ?? i}>
                {d.url && d.status !== 'processing' ? <a href={d.url} download>{d.name ?? 'MP4'}</a> : d.name} {d.status && `(${d.status})`} {d.size_bytes ? bytes(d.size_bytes) : ''}
              </li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}

function EditForm({ video, onSaved }: { video: Video; onSaved: () => void }) {
  const { data: folders } = useLoad(() => api<Page<{ id: string; name: string }>>('GET', '/folders'), []);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  // Controlled selects: the live polling re-renders this form, which must keep what was chosen.
  const [visibility, setVisibility] = useState(video.visibility);
  const [folder, setFolder] = useState(video.folder_id ?? '');
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    setError(null);
    setSaved(false);
    try {
      await api('PATCH', `/videos/${video.id}`, {
        title: String(f.get('title')),
        description: String(f.get('description')),
        visibility: f.get('visibility'),
        folder_id: f.get('folder_id') || null,
        tags: String(f.get('tags'))
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean),
      });
      setSaved(true);
      onSaved();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form class="stack" onSubmit={submit} aria-label="Edit video">
      <h2>Details</h2>
      <label>
        Title
        <input name="title" required maxLength={200} defaultValue={video.title} />
      </label>
      <label>
        Description
        <textarea name="description" rows={3} maxLength={5000} defaultValue={video.description ?? ''} />
      </label>
      <label>
        Visibility
        <select name="visibility" value={visibility} onChange={(e) => setVisibility((e.target as HTMLSelectElement).value as Video['visibility'])}>
          <option value="public">Public</option>
          <option value="unlisted">Unlisted</option>
          <option value="private">Private (signed URLs only)</option>
        </select>
      </label>
      <label>
        Folder
        <select name="folder_id" value={folder} onChange={(e) => setFolder((e.target as HTMLSelectElement).value)}>
          <option value="">(root)</option>
          {folders?.data.map((fo) => (
            <option value={fo.id} key={fo.id}>
              {fo.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Tags (comma-separated)
        <input name="tags" defaultValue={video.tags.join(', ')} />
      </label>
      <ErrorNote error={error} />
      <div class="row">
        <button type="submit">Save</button>
        {saved && <span role="status">Saved.</span>}
      </div>
    </form>
  );
}

function DeleteButton({ id }: { id: string }) {
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState<unknown>(null);
  if (!asking) {
    return (
      <button type="button" class="danger" onClick={() => setAsking(true)}>
        Delete video
      </button>
    );
  }
  return (
    <div class="confirm" role="alertdialog" aria-label="Confirm deletion">
      <p>Delete this video and all its files? This cannot be undone.</p>
      <ErrorNote error={error} />
      <div class="row">
        <button
          type="button"
          class="danger"
          autoFocus
          onClick={async () => {
            try {
              await api('DELETE', `/videos/${id}`);
              navigate('/');
            } catch (e) {
              setError(e);
            }
          }}
        >
          Delete permanently
        </button>
        <button type="button" class="secondary" onClick={() => setAsking(false)}>
          Cancel
        </button>
      </div>
    </div>
  );
}
