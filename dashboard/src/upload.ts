import { Upload as TusUpload } from 'tus-js-client';
import { api, type Schemas } from './api';

// Unfinished uploads by file fingerprint, so dropping the same file after a reload resumes it.
const STORE = 'vh:uploads';

interface Saved {
  video_id: string;
  upload_url: string;
  protocol: 'tus' | 'put';
  name: string;
  size: number;
  at: number;
}

const fingerprint = (f: File) => `${f.name}:${f.size}:${f.lastModified}`;

export function savedUploads(): Record<string, Saved> {
  try {
    return JSON.parse(localStorage.getItem(STORE) ?? '{}');
  } catch {
    return {};
  }
}

function save(key: string, v: Saved | null): void {
  const all = savedUploads();
  if (v) all[key] = v;
  else delete all[key];
  localStorage.setItem(STORE, JSON.stringify(all));
}

export interface UploadCallbacks {
  onProgress: (pct: number) => void;
  onVideo: (videoId: string, resumed: boolean, protocol: 'tus' | 'put') => void;
}

type InitAnswer = Schemas['UploadInit'];

/**
 * Uploads one file: tus (SPEC §13) when the API offers it, which resumes after a reload or a
 * dropped connection; else the single PUT to the presigned URL, with XHR progress. `fields` go
 * into the new video (its `watermark_id`); a resumed upload keeps the ones it was made with.
 */
export async function uploadFile(file: File, cb: UploadCallbacks, signal: AbortSignal, fields: { watermark_id?: string | null } = {}): Promise<string> {
  const key = fingerprint(file);
  const prior = savedUploads()[key];
  if (prior?.protocol === 'tus' && Date.now() - prior.at < 3_600_000) {
    cb.onVideo(prior.video_id, true, 'tus');
    try {
      await tus(file, prior.upload_url, cb, signal);
      save(key, null);
      await api('POST', '/upload/complete', { video_id: prior.video_id });
      return prior.video_id;
    } catch (e) {
      if (signal.aborted) throw e;
      save(key, null); // expired or gone: start afresh
    }
  }
  const init = await api<InitAnswer>('POST', '/upload/init', {
    filename: file.name,
    size: file.size,
    content_type: file.type.startsWith('video/') || file.type.startsWith('audio/') ? file.type : 'video/mp4',
    title: file.name.replace(/\.[^.]+$/, '') || file.name,
    upload_protocol: 'tus',
    ...fields,
  });
  const protocol = init.upload_protocol === 'tus' ? 'tus' : 'put';
  cb.onVideo(init.video_id, false, protocol);
  if (protocol === 'tus') {
    save(key, { video_id: init.video_id, upload_url: init.upload_url, protocol, name: file.name, size: file.size, at: Date.now() });
    await tus(file, init.upload_url, cb, signal);
    save(key, null);
    // The last byte starts processing (SPEC §13); complete is idempotent and makes sure of it.
  } else {
    await put(file, init.upload_url, init.upload_headers ?? {}, cb, signal);
  }
  await api('POST', '/upload/complete', { video_id: init.video_id });
  return init.video_id;
}

function tus(file: File, uploadUrl: string, cb: UploadCallbacks, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const up = new TusUpload(file, {
      uploadUrl,
      chunkSize: 8 * 1024 * 1024,
      retryDelays: [0, 1000, 3000, 5000, 10000],
      storeFingerprintForResuming: false,
      onProgress: (sent, total) => cb.onProgress((sent / total) * 100),
      onSuccess: () => resolve(),
      onError: (e) => reject(e),
    });
    signal.addEventListener('abort', () => {
      void up.abort();
      reject(new DOMException('Upload cancelled', 'AbortError'));
    });
    up.start();
  });
}

function put(file: File, url: string, headers: Record<string, string>, cb: UploadCallbacks, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    for (const [k, v] of Object.entries(headers)) if (!/^content-length$/i.test(k)) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => e.lengthComputable && cb.onProgress((e.loaded / e.total) * 100);
    xhr.onload = () => (xhr.status >= 200 && xhr.status < 300 ? resolve() : reject(new Error(`Upload refused (HTTP ${xhr.status})`)));
    xhr.onerror = () => reject(new Error('Network error during upload'));
    signal.addEventListener('abort', () => {
      xhr.abort();
      reject(new DOMException('Upload cancelled', 'AbortError'));
    });
    xhr.send(file);
  });
}
