import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Where provisioning keeps things: the tool cache (shared by checkouts) and this checkout's data dir. */
export interface Dirs {
  root: string;
  /** Pinned tools: bin/, versions/<tool>, logs/ (VH_TOOLS_DIR, default ~/.cache/vidhost/tools). */
  tools: string;
  /** Runtime state: pg cluster, temporal sqlite, logs, secrets (VH_DATA_DIR, default ./data). */
  data: string;
}

export const repoRoot = path.resolve(__dirname, '..');

export function dirs(env: NodeJS.ProcessEnv = process.env, root = repoRoot): Dirs {
  const home = env.HOME || os.homedir();
  const tools = path.resolve(env.VH_TOOLS_DIR || path.join(home, '.cache/vidhost/tools'));
  const data = path.resolve(root, env.VH_DATA_DIR || 'data');
  for (const d of [path.join(tools, 'bin'), path.join(tools, 'versions'), path.join(tools, 'logs'), path.join(data, 'logs')]) fs.mkdirSync(d, { recursive: true });
  return { root, tools, data };
}
