import os from 'node:os';
import path from 'node:path';

/** The CLI is a client: its settings are flags, then VIDHOST_* variables (not the server's config). */
export interface CliOptions {
  apiUrl: string;
  apiKey: string;
  stateFile: string;
  wait: boolean;
  json: boolean;
  title?: string;
  visibility?: string;
  /** SPEC §24: a watermark profile id (`wm_…`) burnt into the video. */
  watermark?: string;
  /** Bytes per PATCH (default 32 MiB). */
  chunkSize: number;
  files: string[];
}

export class UsageError extends Error {}

export const USAGE = `usage: vidhost upload FILE... [--wait] [--json] [--title T] [--visibility public|unlisted|private]
                      [--watermark wm_…]
                      [--api-url URL] [--api-key KEY] [--chunk-size BYTES]

  Uploads each FILE with tus (resumable: run the same command again after an interruption),
  prints its video id, hls_url and embed_url. --wait waits for ready with live transcode progress.
  Environment: VIDHOST_API_URL (default http://localhost:3000), VIDHOST_API_KEY,
  VIDHOST_STATE_FILE (default ~/.config/vidhost/uploads.json: where unfinished uploads are remembered).
  Exit codes: 0 done, 1 an upload or its processing failed, 2 usage, 130 interrupted (resumable).`;

export function parseArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): CliOptions {
  const [command, ...rest] = argv;
  if (command !== 'upload') throw new UsageError(command ? `unknown command: ${command}` : 'a command is required');
  const o: CliOptions = {
    apiUrl: env.VIDHOST_API_URL ?? 'http://localhost:3000',
    apiKey: env.VIDHOST_API_KEY ?? '',
    stateFile: env.VIDHOST_STATE_FILE ?? path.join(os.homedir(), '.config', 'vidhost', 'uploads.json'),
    wait: false,
    json: false,
    chunkSize: 32 * 1024 * 1024,
    files: [],
  };
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    const value = () => {
      const v = rest[++i];
      if (v === undefined) throw new UsageError(`${a} needs a value`);
      return v;
    };
    if (a === '--wait') o.wait = true;
    else if (a === '--json') o.json = true;
    else if (a === '--api-url') o.apiUrl = value();
    else if (a === '--api-key') o.apiKey = value();
    else if (a === '--title') o.title = value();
    else if (a === '--visibility') o.visibility = value();
    else if (a === '--watermark') o.watermark = value();
    else if (a === '--chunk-size') o.chunkSize = Number(value());
    else if (a.startsWith('--')) throw new UsageError(`unknown option: ${a}`);
    else o.files.push(a);
  }
  if (!Number.isInteger(o.chunkSize) || o.chunkSize < 1) throw new UsageError('--chunk-size must be a positive number of bytes');
  if (!o.files.length) throw new UsageError('no FILE given');
  if (!o.apiKey) throw new UsageError('an API key is required (--api-key or VIDHOST_API_KEY)');
  if (o.watermark !== undefined && !/^wm_[0-9a-f]{32}$/i.test(o.watermark)) throw new UsageError('--watermark must be a watermark id (wm_…)');
  if (o.visibility && !['public', 'unlisted', 'private'].includes(o.visibility)) throw new UsageError('--visibility must be public, unlisted or private');
  o.apiUrl = o.apiUrl.replace(/\/+$/, '');
  return o;
}
