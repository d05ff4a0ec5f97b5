import { useState } from 'preact/hooks';
import { api, type Video } from '../api';
import { ErrorNote } from '../components/ui';

type Track = Video['captions'][number];

interface Cue {
  start: string;
  end: string;
  text: string;
}

/** The cues of a WebVTT file, for reading (the player shows them properly). */
function parseVtt(vtt: string): Cue[] {
  const cues: Cue[] = [];
  for (const block of vtt.replace(/\r\n?/g, '\n').split(/\n\n+/)) {
    const lines = block.split('\n');
    const at = lines.findIndex((l) => l.includes('-->'));
    if (at < 0) continue;
    const [start, end] = lines[at].split('-->').map((x) => x.trim().split(/\s+/)[0]);
    const text = lines.slice(at + 1).join('\n').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
    cues.push({ start, end, text });
  }
  return cues;
}

/** The track's CDN URL, through the page's playback token when it has one (private videos too). */
const urlFor = (t: Track, videoId: string, token?: string) => (token ? t.url.replace(`/v/${videoId}/`, `/v/${token}/`) : t.url);

function TrackRow({ track, video, token }: { track: Track; video: Video; token?: string }) {
  const [cues, setCues] = useState<Cue[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const url = urlFor(track, video.id, token);
  const show = async () => {
    setError(null);
    try {
      const res = await fetch(url);
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      setCues(parseVtt(await res.text()));
    } catch (err) {
      setError(err);
    }
  };
  return (
    <li data-language={track.language}>
      {track.label || track.language} <span class={`status status-${track.status}`}>({track.status})</span>
      {track.status === 'ready' && (
        <>
          {' '}
          <a href={url} download={`${video.title || video.id}-${track.language}.vtt`}>
            Download VTT
          </a>{' '}
          <button type="button" class="link" onClick={() => (cues ? setCues(null) : show())}>
            {cues ? 'Hide cues' : 'Show cues'}
          </button>
        </>
      )}
      {track.status === 'failed' && track.error && <p class="error">{track.error.message}</p>}
      <ErrorNote error={error} />
      {cues && (
        <table class="cues">
          <thead>
            <tr>
              <th>Start</th>
              <th>End</th>
              <th>Text</th>
            </tr>
          </thead>
          <tbody>
            {cues.map((c, i) => (
              <tr key={i}>
                <td>{c.start}</td>
                <td>{c.end}</td>
                <td style="white-space: pre-line">{c.text}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </li>
  );
}

/**
 * Caption tracks (SPEC §14) and captions from a transcript (issue 37): paste or upload the script,
 * the track shows `aligning` (the page polls), then its cues and a VTT download, or why it failed.
 */
export function Captions({ video, token, onChange }: { video: Video; token?: string; onChange: () => void }) {
  const caps = video.captions ?? [];
  const [language, setLanguage] = useState('en');
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const onFile = async (e: Event) => {
    const file = (e.currentTarget as HTMLInputElement).files?.[0];
    if (file) setText(await file.text());
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api('POST', `/videos/${video.id}/captions/${encodeURIComponent(language.trim())}/align`, { text });
      setText('');
      onChange();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <h2>Captions</h2>
      {caps.length > 0 && (
        <ul class="captions">
          {caps.map((c) => (
            <TrackRow key={c.language} track={c} video={video} token={token} />
          ))}
        </ul>
      )}
      {video.status === 'ready' && (
        <form class="align-form" onSubmit={submit} aria-label="Captions from a transcript">
          <p>Paste or upload the transcript (plain text): captions are timed to the speech. English and French.</p>
          <label>
            Language <input name="language" value={language} size={6} onInput={(e) => setLanguage((e.currentTarget as HTMLInputElement).value)} />
          </label>
          <label>
            Transcript file <input type="file" name="transcript-file" accept=".txt,text/plain" onChange={onFile} />
          </label>
          <textarea name="transcript" rows={6} value={text} placeholder="The words, as spoken…" onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)} />
          <button type="submit" disabled={busy || !text.trim()}>
            {busy ? 'Sending…' : 'Make captions'}
          </button>
          <ErrorNote error={error} />
        </form>
      )}
    </>
  );
}
