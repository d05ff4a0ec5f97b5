import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type Schemas } from '../api';
import { usePoll } from '../hooks';
import { LiveAudience } from './LiveAudience';
import { CopyButton, Link } from './ui';

type LiveStream = Schemas['LiveStream'];
type Health = NonNullable<LiveStream['health']>;

/**
 * Asks the browser to keep the camera's size and lower the frame rate or quality instead.
 * Chromium starts a WebRTC send at a low bitrate estimate and, by default, at 320×180, growing as
 * the estimate does; the live worker plans the broadcast's ladder from the first picture it
 * probes, so the whole recording stayed at 180p (issue 46).
 */
async function keepResolution(sender: RTCRtpSender): Promise<void> {
  try {
    const p = sender.getParameters() as RTCRtpSendParameters & { degradationPreference?: string };
    p.degradationPreference = 'maintain-resolution';
    await sender.setParameters(p);
  } catch {
    // A browser without the setting sends what it sends; the broadcast goes on.
  }
}

/**
 * SPEC §22 on the Live page: one stream's ingest URLs (RTMP, SRT, WHIP), a live preview (WHEP for a
 * WebRTC broadcast, else the HLS ladder — LL-HLS in low mode — in hls.js), its stream health while
 * active, its audience (components/LiveAudience.tsx), and "Go live from this browser" (camera or screen share over WHIP, reconnecting).
 */
export function LiveStudio({ streams, known, selected }: { streams: LiveStream[]; known: { id: string; key: string } | null; selected?: string | null }) {
  const [id, setId] = useState<string>(selected ?? '');
  // A "preview" link, or the note naming the stream that holds the plan's slot (`?stream=`).
  useEffect(() => {
    if (selected) setId(selected);
  }, [selected]);
  // A stream just created is not in the list until its reload returns: no studio until then, not
  // the first listed one ("Go live" right after "Create" published on another stream's studio).
  const waitingFor = !id && known && !streams.some((s) => s.id === known.id);
  const chosen = waitingFor ? undefined : (streams.find((s) => s.id === (id || known?.id)) ?? streams[0]);
  const [detail, setDetail] = useState<LiveStream | null>(null);
  // The single read carries the edge's own measure of SRT/WHIP publishers.
  usePoll(!!chosen, () => chosen && api<LiveStream>('GET', `/live-streams/${chosen.id}`).then(setDetail, () => undefined), 3000);
  if (!chosen) return null;
  const ls = detail?.id === chosen.id ? detail : chosen;
  return (
    <section aria-label="Live studio" data-studio={ls.id} id="studio">
      <h2>Studio</h2>
      <label>
        Stream
        <select value={ls.id} onChange={(e) => setId((e.target as HTMLSelectElement).value)}>
          {streams.map((s) => (
            <option key={s.id} value={s.id}>
              {s.title || s.id} ({s.status})
            </option>
          ))}
        </select>
      </label>
      <IngestUrls ls={ls} />
      {ls.status === 'active' && ls.health && <HealthPanel health={ls.health} />}
      {ls.status === 'active' && <Preview key={`${ls.id}-${ls.health?.protocol ?? ''}`} ls={ls} />}
      <LiveAudience key={ls.id} id={ls.id} />
      <GoLive ls={ls} streams={streams} streamKey={known?.id === ls.id ? known.key : ''} />
    </section>
  );
}

function IngestUrls({ ls }: { ls: LiveStream }) {
  const rows: Array<[string, string]> = [
    ['RTMP', ls.ingest.rtmp_url],
    ['SRT', ls.ingest.srt_url],
    ['WHIP', ls.ingest.whip_url],
  ];
  return (
    <dl class="ingest">
      {rows.map(([name, url]) => (
        <div key={name} data-ingest={name}>
          <dt>{name}</dt>
          <dd>
            <code>{url}</code> <CopyButton text={url} />
            {name === 'WHIP' && <small> (Bearer token: the stream key)</small>}
          </dd>
        </div>
      ))}
    </dl>
  );
}

function HealthPanel({ health }: { health: Health }) {
  const v = health.video;
  return (
    <div aria-label="Stream health" data-health={health.protocol}>
      <strong>Stream health</strong>: {health.protocol.toUpperCase()}
      {v && ` · ${v.codec} ${v.width}×${v.height}${v.fps ? ` @ ${v.fps} fps` : ''}`}
      {health.audio && ` · ${health.audio.codec}`}
      {health.bitrate_kbps !== null && ` · ${health.bitrate_kbps} kb/s`}
      {health.keyframe_interval_s !== null && ` · keyframe every ${health.keyframe_interval_s} s`}
      {health.warnings.map((w) => (
        <p key={w.code} class="warning" data-warning={w.code}>
          ⚠ {w.message}
        </p>
      ))}
    </div>
  );
}

type HlsLike = { loadSource(s: string): void; attachMedia(v: HTMLVideoElement): void; destroy(): void };

/** WHEP for a WebRTC broadcast (falls back to HLS if it is refused), else hls.js with lowLatencyMode. */
function Preview({ ls }: { ls: LiveStream }) {
  const video = useRef<HTMLVideoElement>(null);
  const [via, setVia] = useState('');
  useEffect(() => {
    const v = video.current!;
    let pc: RTCPeerConnection | null = null;
    let hls: HlsLike | null = null;
    let closed = false;
    /** The WHEP session resource: DELETEd when the preview closes (the edge's slot freed at once). */
    let session = '';
    const endSession = () => {
      if (session) void fetch(session, { method: 'DELETE' }).catch(() => undefined);
      session = '';
    };
    // The dashboard's own preview is authorised: a playback token for the broadcast (GET
    // /playback/{ls_id}) plays a private or restricted stream as it plays a public one; its id alone
    // was refused (issue 49: a black preview and two 403s).
    const source = previewSource(ls);
    const playHls = async () => {
      const w = window as unknown as { Hls?: new (o: object) => HlsLike };
      if (!w.Hls) {
        await new Promise<void>((resolve, reject) => {
          const s = document.createElement('script');
          s.src = ls.embed_url.replace(/\/embed\/.*$/, '/assets/hls.min.js');
          s.onload = () => resolve();
          s.onerror = () => reject(new Error('hls.js did not load'));
          document.head.append(s);
        });
      }
      if (closed) return;
      // No worker: the dashboard's CSP allows scripts from itself only, and a blob: worker is not one.
      hls = new w.Hls!({ lowLatencyMode: true, liveSyncDurationCount: 2, enableWorker: false });
      hls.loadSource((await source).hls);
      hls.attachMedia(v);
      setVia(ls.latency_mode === 'low' ? 'LL-HLS' : 'HLS');
    };
    const playWhep = async () => {
      pc = new RTCPeerConnection();
      pc.addTransceiver('video', { direction: 'recvonly' });
      pc.addTransceiver('audio', { direction: 'recvonly' });
      const ms = new MediaStream();
      pc.ontrack = (e) => {
        ms.addTrack(e.track);
        v.srcObject = ms;
      };
      await pc.setLocalDescription(await pc.createOffer());
      await iceGathered(pc);
      // `preview`: the studio's own look at the broadcast is not one of its views (docs/analytics.md).
      const url = `${(await source).whep}?preview=1`;
      const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/sdp' }, body: pc.localDescription!.sdp });
      if (res.status !== 201) throw new Error(`WHEP ${res.status}`);
      session = new URL(res.headers.get('Location')!, url).href;
      if (closed) return endSession();
      await pc.setRemoteDescription({ type: 'answer', sdp: await res.text() });
      setVia('WebRTC (WHEP)');
    };
    (ls.health?.protocol === 'whip' ? playWhep() : Promise.reject(new Error('not WebRTC'))).catch(() => {
      pc?.close();
      pc = null;
      endSession();
      return playHls().catch(() => setVia('unavailable'));
    });
    return () => {
      closed = true;
      pc?.close();
      endSession();
      hls?.destroy();
    };
  }, [ls.id]);
  return (
    <figure>
      <video ref={video} muted autoplay playsInline controls class="preview" data-preview={ls.id} />
      <figcaption>Preview {via && `· ${via}`}</figcaption>
    </figure>
  );
}

/** The preview's HLS and WHEP addresses, with the broadcast's playback token in place of its id (its id alone if no token comes). */
async function previewSource(ls: LiveStream): Promise<{ hls: string; whep: string }> {
  try {
    const p = await api<Schemas['Playback']>('GET', `/playback/${ls.id}?ttl=3600`);
    return { hls: p.hls_url, whep: ls.webrtc_url.replace(`/live/${ls.id}/`, `/live/${encodeURIComponent(p.token)}/`) };
  } catch {
    return { hls: ls.hls_url, whep: ls.webrtc_url };
  }
}

function iceGathered(pc: RTCPeerConnection): Promise<void> {
  return new Promise((resolve) => {
    if (pc.iceGatheringState === 'complete') return resolve();
    const t = setTimeout(resolve, 2000);
    pc.addEventListener('icegatheringstatechange', () => {
      if (pc.iceGatheringState === 'complete') {
        clearTimeout(t);
        resolve();
      }
    });
  });
}

/**
 * Publishes the camera or a screen share over WHIP; a failed connection is retried every 3 s until
 * stopped. Every attempt after the first admitted one is a retry (`?resume=1`): once the broadcast was ended
 * (End broadcast, `complete`, `disable`) the API refuses it (409 `broadcast_ended`, SPEC §22
 * "ending is final") and the studio stops and says why instead of going live again.
 */
function GoLive({ ls, streams, streamKey }: { ls: LiveStream; streams: LiveStream[]; streamKey: string }) {
  const [key, setKey] = useState(streamKey);
  const [state, setState] = useState<'off' | 'connecting' | 'live' | 'retrying'>('off');
  const [error, setError] = useState('');
  /** The broadcast was ended elsewhere (End broadcast, the API): the studio stopped for that. */
  const [ended, setEnded] = useState(false);
  /** The last refusal was the plan's concurrent broadcasts: say which stream holds the slot. */
  const [planFull, setPlanFull] = useState(false);
  const session = useRef<{ stop: () => void } | null>(null);
  useEffect(() => setKey(streamKey), [streamKey, ls.id]);
  useEffect(() => () => session.current?.stop(), []);

  const start = async (source: 'camera' | 'screen') => {
    setError('');
    setEnded(false);
    let media: MediaStream;
    try {
      media = source === 'camera' ? await navigator.mediaDevices.getUserMedia({ video: { width: 1280, height: 720 }, audio: true }) : await navigator.mediaDevices.getDisplayMedia({ video: true, audio: true });
    } catch (err) {
      setError(`No ${source}: ${(err as Error).message}`);
      return;
    }
    let stopped = false;
    let pc: RTCPeerConnection | null = null;
    let location = '';
    let retry: ReturnType<typeof setTimeout> | undefined;
    /** This start was admitted once: every later attempt resumes it (and is refused once it was ended). */
    let admitted = false;
    const connect = async () => {
      if (stopped) return;
      const resume = admitted;
      setState((s) => (s === 'off' ? 'connecting' : 'retrying'));
      pc = new RTCPeerConnection();
      for (const track of media.getTracks()) {
        const tr = pc.addTransceiver(track, { direction: 'sendonly' });
        if (track.kind === 'video' && tr.setCodecPreferences) {
          const codecs = RTCRtpReceiver.getCapabilities('video')?.codecs ?? [];
          const h264 = codecs.filter((c) => /h264/i.test(c.mimeType) && /packetization-mode=1/.test(c.sdpFmtpLine ?? ''));
          if (h264.length) tr.setCodecPreferences(h264);
        }
        if (track.kind === 'video') void keepResolution(tr.sender);
      }
      const again = () => {
        if (stopped || retry) return;
        pc?.close();
        retry = setTimeout(() => {
          retry = undefined;
          void connect();
        }, 3000);
        setState('retrying');
      };
      pc.onconnectionstatechange = () => {
        if (pc?.connectionState === 'connected') {
          // Live: whatever the attempts before said is over (issue 49: a stale "the plan allows
          // 1 broadcast(s)" stayed beside "Stop (live)").
          setState('live');
          setError('');
          setPlanFull(false);
        }
        if (pc?.connectionState === 'failed' || pc?.connectionState === 'disconnected') again();
      };
      try {
        await pc.setLocalDescription(await pc.createOffer());
        await iceGathered(pc);
        const res = await fetch(resume ? `${ls.ingest.whip_url}?resume=1` : ls.ingest.whip_url, { method: 'POST', headers: { 'Content-Type': 'application/sdp', Authorization: `Bearer ${key.trim()}` }, body: pc.localDescription!.sdp });
        if (res.status !== 201) {
          const body = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
          const code = body?.error?.code ?? '';
          if (code === 'broadcast_ended') {
            setEnded(true);
            setError('The broadcast was ended (End broadcast or the API): not reconnecting. Go live again to start a new broadcast.');
            return stop();
          }
          setPlanFull(res.status === 429 || code === 'live_plan_limit');
          // A wrong key, a disabled or busy stream will not get better by retrying.
          if (['invalid_stream_key', 'live_stream_disabled', 'live_stream_busy'].includes(code)) {
            setError(body?.error?.message ?? `WHIP answered ${res.status}`);
            return stop();
          }
          throw new Error(body?.error?.message ?? `WHIP answered ${res.status}`);
        }
        setError('');
        setPlanFull(false);
        admitted = true;
        location = new URL(res.headers.get('Location')!, ls.ingest.whip_url).href;
        await pc.setRemoteDescription({ type: 'answer', sdp: await res.text() });
        // Again once negotiated: a browser may refuse the setting before.
        for (const t of pc.getTransceivers()) if (t.sender.track?.kind === 'video') await keepResolution(t.sender);
      } catch (err) {
        setError((err as Error).message);
        // A wrong key or a stream that is busy will not get better by retrying.
        if (/key|disabled|already has a publisher/i.test((err as Error).message)) return stop();
        again();
      }
    };
    const stop = () => {
      stopped = true;
      clearTimeout(retry);
      pc?.close();
      for (const t of media.getTracks()) t.stop();
      if (location) void fetch(location, { method: 'DELETE', headers: { Authorization: `Bearer ${key.trim()}` } }).catch(() => undefined);
      setState('off');
      session.current = null;
    };
    session.current = { stop };
    await connect();
  };

  return (
    <form class="row" aria-label="Go live from this browser" onSubmit={(e) => e.preventDefault()}>
      <label>
        Stream key
        <input type="password" value={key} onInput={(e) => setKey((e.target as HTMLInputElement).value)} placeholder="lsk… (shown on create and on New key)" autoComplete="off" />
      </label>
      {state === 'off' ? (
        <>
          <button type="button" disabled={!key} onClick={() => start('camera')}>
            Go live with the camera
          </button>
          <button type="button" class="secondary" disabled={!key} onClick={() => start('screen')}>
            Go live with a screen share
          </button>
        </>
      ) : (
        <button type="button" class="danger" onClick={() => session.current?.stop()}>
          Stop ({state})
        </button>
      )}
      {error && (
        <small class="error" role="alert" data-ended={ended ? '' : undefined}>
          {error}
          {planFull && <SlotHolder streams={streams.filter((s) => s.id !== ls.id && (s.status !== 'idle' || s.active_video_id))} retrying={state === 'retrying'} />}
        </small>
      )}
    </form>
  );
}

/** Which of the workspace's streams holds the plan's broadcast slot, each named with a link that opens it in the studio. */
function SlotHolder({ streams, retrying }: { streams: LiveStream[]; retrying: boolean }) {
  return (
    <span data-slot-holder>
      {': '}
      {streams.length ? (
        <>
          {streams.map((s, i) => (
            <span key={s.id}>
              {i > 0 && ', '}
              <Link to={`/live?stream=${s.id}`}>{s.title || s.id}</Link> ({s.status === 'active' ? 'on air' : s.status === 'disconnected' ? 'in its reconnect window' : 'finishing its recording'})
            </span>
          ))}{' '}
          {streams.length === 1 ? 'holds' : 'hold'} it
        </>
      ) : (
        'another broadcast of this workspace is starting'
      )}
      {retrying ? '. Trying again every 3 s until it ends.' : '.'}
    </span>
  );
}
