import fs from 'node:fs';
import * as tus from 'tus-js-client';

export interface TusRun {
  upload: tus.Upload;
  /** Resolves when the upload succeeded, rejects on error. */
  done: Promise<void>;
  /** Upload-Offset of every PATCH the client sent. */
  patchOffsets: number[];
  /** Headers of the creation POST's answer, when there was one. */
  created?: Record<string, string | undefined>;
}

/** The unmodified tus-js-client, in Node, on a Buffer; `abortAt` (0–1) aborts once that much is sent. */
export function tusUpload(
  file: string,
  opts: { uploadUrl?: string; endpoint?: string; headers?: Record<string, string>; metadata?: Record<string, string>; abortAt?: number; chunkSize?: number },
): TusRun & { aborted: Promise<void> } {
  const data = fs.readFileSync(file);
  const run: Partial<TusRun> = { patchOffsets: [] };
  let onAborted: () => void = () => undefined;
  const aborted = new Promise<void>((r) => (onAborted = r));
  run.done = new Promise<void>((resolve, reject) => {
    const upload = new tus.Upload(data, {
      uploadUrl: opts.uploadUrl,
      endpoint: opts.endpoint,
      headers: opts.headers,
      metadata: opts.metadata,
      chunkSize: opts.chunkSize ?? 32 * 1024,
      retryDelays: null,
      storeFingerprintForResuming: false,
      uploadDataDuringCreation: !!opts.endpoint,
      onBeforeRequest: (req) => {
        if (req.getMethod() === 'PATCH') run.patchOffsets!.push(Number(req.getHeader('Upload-Offset')));
      },
      onAfterResponse: (req, res) => {
        if (req.getMethod() === 'POST') run.created = { location: res.getHeader('Location'), videoId: res.getHeader('Video-Id'), status: String(res.getStatus()) };
      },
      onProgress: (sent, total) => {
        if (opts.abortAt !== undefined && sent >= total * opts.abortAt) {
          opts.abortAt = undefined;
          void upload.abort().then(onAborted);
        }
      },
      onSuccess: () => resolve(),
      onError: (err) => reject(err),
    });
    run.upload = upload;
    upload.start();
  });
  return { ...(run as TusRun), aborted, get created() { return run.created; } } as TusRun & { aborted: Promise<void> };
}

export async function tusHead(url: string): Promise<Response> {
  return fetch(url, { method: 'HEAD', headers: { 'Tus-Resumable': '1.0.0' } });
}
