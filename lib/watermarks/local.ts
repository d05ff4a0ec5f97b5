// A stored mark fetched beside a job (SPEC §24): ffmpeg reads the image from a local file, bound
// read-only into its sandbox (MediaTools RunOptions.readOnly).
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { markAt, type Mark, type StoredMark } from '../media/watermark';
import type { Storage } from '../storage';

export type LocalMark = { mark: Mark; readOnly: string[]; dispose: () => Promise<void> };

const NONE: LocalMark | null = null;

/** Downloads `stored` into a temp dir of its own (never a folder a job uploads); null for no mark. */
export async function fetchMark(storage: Storage, stored: StoredMark | null | undefined): Promise<LocalMark | null> {
  if (!stored) return NONE;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vidhost-mark-'));
  const file = path.join(dir, stored.format === 'png' ? 'mark.png' : 'mark.jpg');
  try {
    await storage.download(stored.key, file);
  } catch (err) {
    await fs.rm(dir, { recursive: true, force: true });
    throw err;
  }
  return { mark: markAt(stored, file), readOnly: [file], dispose: () => fs.rm(dir, { recursive: true, force: true }) };
}

/** Runs `job` with the mark fetched (or null), removing it after. */
export async function withMark<T>(storage: Storage, stored: StoredMark | null | undefined, job: (local: LocalMark | null) => Promise<T>): Promise<T> {
  const local = await fetchMark(storage, stored);
  try {
    return await job(local);
  } finally {
    await local?.dispose();
  }
}
