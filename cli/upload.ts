import fs from 'node:fs';
import path from 'node:path';
import cliProgress from 'cli-progress';
import * as tus from 'tus-js-client';
import { authHeaders, tusEndpoint, videoIdFromUploadUrl } from './api';
import type { CliOptions } from './config';
import { videoTypeOf } from './mime';

export interface UploadResult {
  file: string;
  videoId: string;
  resumedFrom: number;
  bytes: number;
}

const human = (n: number) => {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
};

export function progressBar(label: string): cliProgress.SingleBar {
  return new cliProgress.SingleBar(
    {
      format: `${label} [{bar}] {percentage}% | {done}/{all} | {speed}/s | ETA {eta_formatted}`,
      stream: process.stderr,
      // Not a terminal (CI, a pipe): still print progress, a line every second.
      noTTYOutput: !process.stderr.isTTY,
      notTTYSchedule: 500,
      // Ctrl-C is ours: the upload is aborted cleanly and can be resumed.
      gracefulExit: false,
      etaBuffer: 50,
      hideCursor: process.stderr.isTTY ? true : null,
    },
    cliProgress.Presets.shades_classic,
  );
}

/**
 * Uploads one file with tus, resuming an earlier unfinished upload of the same file (same path,
 * size and mtime) recorded in the state file. `signal` aborts it (Ctrl-C); the state stays.
 */
export async function uploadFile(file: string, o: CliOptions, signal: AbortSignal): Promise<UploadResult> {
  const stat = fs.statSync(file);
  if (!stat.isFile()) throw new Error(`${file} is not a file`);
  fs.mkdirSync(path.dirname(o.stateFile), { recursive: true });
  const urlStorage = new (tus as unknown as { FileUrlStorage: new (p: string) => tus.UrlStorage }).FileUrlStorage(o.stateFile);
  const metadata: Record<string, string> = { filename: path.basename(file), filetype: videoTypeOf(file) };
  if (o.title) metadata.title = o.title;
  if (o.visibility) metadata.visibility = o.visibility;
  if (o.watermark) metadata.watermark_id = o.watermark;

  const bar = o.json ? null : progressBar(path.basename(file));
  let barStarted = false;
  let videoId: string | null = null;
  let resumedFrom = 0;
  let started = Date.now();
  let startBytes = 0;
  return new Promise<UploadResult>((resolve, reject) => {
    const upload = new tus.Upload(fs.createReadStream(file), {
      endpoint: tusEndpoint(o.apiUrl),
      headers: authHeaders(o.apiKey),
      metadata,
      uploadSize: stat.size,
      // A stream is read a chunk at a time: memory stays flat whatever the file's size.
      chunkSize: o.chunkSize,
      retryDelays: [0, 1000, 3000, 5000, 10000],
      urlStorage,
      storeFingerprintForResuming: true,
      removeFingerprintOnSuccess: true,
      onAfterResponse: (req, res) => {
        if (req.getMethod() === 'POST') videoId = res.getHeader('Video-Id') ?? null;
        if (req.getMethod() === 'HEAD') resumedFrom = Number(res.getHeader('Upload-Offset') ?? 0);
      },
      onProgress: (sent, total) => {
        if (!bar) return;
        if (!barStarted) {
          barStarted = true;
          bar.start(total, sent, { done: human(sent), all: human(total), speed: human(0) });
          started = Date.now();
          startBytes = sent;
        }
        const secs = (Date.now() - started) / 1000;
        bar.update(sent, { done: human(sent), all: human(total), speed: human(secs > 0 ? (sent - startBytes) / secs : 0) });
      },
      onSuccess: () => {
        bar?.stop();
        videoId ??= videoIdFromUploadUrl(upload.url ?? '');
        if (!videoId) return reject(new Error('the server did not name the video'));
        resolve({ file, videoId, resumedFrom, bytes: stat.size });
      },
      onError: (err) => {
        bar?.stop();
        reject(err);
      },
    });
    signal.addEventListener('abort', () => {
      bar?.stop();
      void upload.abort().then(() => reject(signal.reason));
    });
    void upload.findPreviousUploads().then((previous) => {
      if (previous.length) upload.resumeFromPreviousUpload(previous[0]);
      upload.start();
    }, reject);
  });
}
