import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Video } from '../api';
import { ErrorNote, Link, Progress, StatusBadge } from '../components/ui';
import { watermarkChoice, WatermarkSelect } from '../components/WatermarkSelect';
import { bytes } from '../format';
import { savedUploads, uploadFile } from '../upload';

interface Item {
  id: number;
  file: File;
  pct: number;
  state: 'uploading' | 'done' | 'error' | 'cancelled';
  error?: unknown;
  videoId?: string;
  resumed?: boolean;
  protocol?: 'tus' | 'put';
  video?: Pick<Video, 'status' | 'progress'>;
  abort: AbortController;
}

let nextId = 1;

export function UploadPage() {
  const [items, setItems] = useState<Item[]>([]);
  const [over, setOver] = useState(false);
  const [mark, setMark] = useState('');
  const input = useRef<HTMLInputElement>(null);
  const update = (id: number, patch: Partial<Item>) => setItems((all) => all.map((i) => (i.id === id ? { ...i, ...patch } : i)));
  const pending = Object.values(savedUploads());

  const start = (files: FileList | File[]) => {
    const fresh = [...files].map((file) => ({ id: nextId++, file, pct: 0, state: 'uploading' as const, abort: new AbortController() }));
    setItems((all) => [...all, ...fresh]);
    for (const it of fresh) {
      uploadFile(
        it.file,
        {
          onProgress: (pct) => update(it.id, { pct }),
          onVideo: (videoId, resumed, protocol) => update(it.id, { videoId, resumed, protocol }),
        },
        it.abort.signal,
        watermarkChoice(mark),
      ).then(
        () => update(it.id, { pct: 100, state: 'done' }),
        (error) => update(it.id, { state: it.abort.signal.aborted ? 'cancelled' : 'error', error }),
      );
    }
  };

  // Live status of finished uploads until each is ready or failed.
  const watching = items.filter((i) => i.state === 'done' && i.videoId && i.video?.status !== 'ready' && i.video?.status !== 'failed');
  useEffect(() => {
    if (!watching.length) return;
    const t = setInterval(() => {
      for (const i of watching) api<Video>('GET', `/videos/${i.videoId}`).then((v) => update(i.id, { video: { status: v.status, progress: v.progress } }), () => undefined);
    }, 2000);
    return () => clearInterval(t);
  }, [watching.map((i) => i.id).join(',')]);

  return (
    <>
      <h1>Upload</h1>
      <div class="row upload-options">
        <label>
          Watermark
          <WatermarkSelect value={mark} onChange={setMark} />
        </label>
        <Link to="/watermarks">Manage watermarks</Link>
      </div>
      <div
        class={`dropzone${over ? ' over' : ''}`}
        data-testid="dropzone"
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          if (e.dataTransfer?.files.length) start(e.dataTransfer.files);
        }}
      >
        <p>Drop video files here, or</p>
        <label class="button">
          Choose files
          <input
            ref={input}
            class="visually-hidden"
            type="file"
            accept="video/*,audio/*"
            multiple
            onChange={(e) => {
              const f = (e.target as HTMLInputElement).files;
              if (f?.length) start([...f]);
              (e.target as HTMLInputElement).value = '';
            }}
          />
        </label>
        <p class="hint">Several files at once. Resumable uploads continue where they stopped: after a reload, drop the same file again.</p>
      </div>
      {pending.length > 0 && items.length === 0 && (
        <section aria-label="Unfinished uploads">
          <h2>Unfinished uploads</h2>
          <ul>
            {pending.map((p) => (
              <li key={p.video_id}>
                {p.name} ({bytes(p.size)}): drop it again to resume.
              </li>
            ))}
          </ul>
        </section>
      )}
      <ul class="uploads" aria-live="polite">
        {items.map((i) => (
          <li key={i.id} class="upload" data-state={i.state}>
            <div class="row spread">
              <strong>{i.file.name}</strong>
              <span>{bytes(i.file.size)}</span>
            </div>
            <Progress value={i.pct} label={`Upload of ${i.file.name}`} />
            <div class="row">
              {i.state === 'uploading' && (
                <>
                  <span>
                    {i.resumed ? 'Resuming' : 'Uploading'}
                    {i.protocol === 'put' ? ' (single request)' : i.protocol === 'tus' ? ' (resumable)' : ''}
                  </span>
                  <button type="button" class="secondary" onClick={() => i.abort.abort()}>
                    Cancel
                  </button>
                </>
              )}
              {i.state === 'done' && <span>Uploaded.</span>}
              {i.state === 'cancelled' && <span>Cancelled.</span>}
              {i.video && <StatusBadge video={i.video} />}
              {i.videoId && i.state !== 'uploading' && <Link to={`/videos/${i.videoId}`}>Open video</Link>}
            </div>
            {i.state === 'error' && <ErrorNote error={i.error} />}
          </li>
        ))}
      </ul>
    </>
  );
}
