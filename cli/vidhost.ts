import { getVideo } from './api';
import { parseArgs, USAGE, UsageError } from './config';
import { uploadFile } from './upload';
import { waitForReady } from './wait';

interface Line {
  file: string;
  video_id?: string;
  status?: string;
  hls_url?: string | null;
  embed_url?: string | null;
  resumed_from?: number;
  bytes?: number;
  error?: string;
}

/** `vidhost upload FILE…`: see USAGE. Returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  let o;
  try {
    o = parseArgs(argv);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`vidhost: ${err.message}\n${USAGE}\n`);
      return 2;
    }
    throw err;
  }
  const ctrl = new AbortController();
  process.once('SIGINT', () => ctrl.abort(new Error('interrupted')));
  const lines: Line[] = [];
  let code = 0;
  for (const file of o.files) {
    try {
      const up = await uploadFile(file, o, ctrl.signal);
      const v = o.wait ? await waitForReady(o, up.videoId, ctrl.signal) : await getVideo(o.apiUrl, o.apiKey, up.videoId);
      const line: Line = { file, video_id: up.videoId, status: v.status, hls_url: v.hls_url, embed_url: v.embed_url, resumed_from: up.resumedFrom, bytes: up.bytes };
      if (v.status === 'failed') {
        line.error = v.error_message ?? v.error_code ?? undefined;
        code = 1;
      }
      lines.push(line);
      if (!o.json) {
        process.stdout.write(`${file}: ${up.videoId} ${v.status}${up.resumedFrom ? ` (resumed at ${up.resumedFrom} bytes)` : ''}\n`);
        if (v.hls_url) process.stdout.write(`  hls_url:   ${v.hls_url}\n`);
        if (v.embed_url) process.stdout.write(`  embed_url: ${v.embed_url}\n`);
        if (line.error) process.stdout.write(`  error: ${line.error}\n`);
      }
    } catch (err) {
      if (ctrl.signal.aborted) {
        process.stderr.write(`vidhost: interrupted; run the same command again to resume ${file}\n`);
        if (o.json) process.stdout.write(`${JSON.stringify({ uploads: lines, interrupted: file })}\n`);
        return 130;
      }
      lines.push({ file, error: err instanceof Error ? err.message : String(err) });
      if (!o.json) process.stderr.write(`vidhost: ${file}: ${err instanceof Error ? err.message : String(err)}\n`);
      code = 1;
    }
  }
  if (o.json) process.stdout.write(`${JSON.stringify({ uploads: lines })}\n`);
  return code;
}
