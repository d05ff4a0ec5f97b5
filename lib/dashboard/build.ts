import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../root';

export const DASHBOARD_DIR = path.join(ROOT, 'dashboard');
export const DASHBOARD_DIST = path.join(DASHBOARD_DIR, 'dist');
const MARKER = '.source-hash';

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? filesUnder(p) : [p];
  });
}

/** A hash of everything the bundle is made from: the sources, the build config and the locked deps. */
export function sourceHash(): string {
  const root = path.join(DASHBOARD_DIR, '..');
  const files = [
    ...filesUnder(path.join(DASHBOARD_DIR, 'src')),
    path.join(DASHBOARD_DIR, 'index.html'),
    path.join(DASHBOARD_DIR, 'vite.config.mjs'),
    // Shared with the server: the watermark preview places the mark with the encoder's own markBox.
    path.join(root, 'lib', 'media', 'watermark.ts'),
    path.join(root, 'package-lock.json'),
  ].sort();
  const h = createHash('sha256');
  for (const f of files) h.update(path.relative(root, f)).update('\0').update(fs.readFileSync(f)).update('\0');
  return h.digest('hex').slice(0, 32);
}

export function isBuilt(hash = sourceHash()): boolean {
  try {
    return fs.readFileSync(path.join(DASHBOARD_DIST, MARKER), 'utf8') === hash && fs.existsSync(path.join(DASHBOARD_DIST, 'index.html'));
  } catch {
    return false;
  }
}

function run(cmd: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`vite build failed (exit ${code}):\n${out}`))));
  });
}

/**
 * Builds the dashboard unless `dist/` already holds the build of these exact sources. The build
 * goes to a private directory that replaces `dist/` by rename, so a concurrent build or a server
 * reading `dist/` never sees half a bundle; running it twice is a no-op.
 */
export async function buildDashboard(): Promise<{ built: boolean; hash: string }> {
  const hash = sourceHash();
  if (isBuilt(hash)) return { built: false, hash };
  const tmp = path.join(DASHBOARD_DIR, `.dist-${process.pid}-${Date.now()}`);
  const vite = path.join(DASHBOARD_DIR, '..', 'node_modules', 'vite', 'bin', 'vite.js');
  try {
    await run(process.execPath, [vite, 'build', '--outDir', tmp, '--emptyOutDir', '--logLevel', 'warn'], DASHBOARD_DIR);
    fs.writeFileSync(path.join(tmp, MARKER), hash);
    if (isBuilt(hash)) return { built: false, hash }; // someone else finished first
    const old = `${tmp}-old`;
    if (fs.existsSync(DASHBOARD_DIST)) fs.renameSync(DASHBOARD_DIST, old);
    fs.renameSync(tmp, DASHBOARD_DIST);
    fs.rmSync(old, { recursive: true, force: true });
    return { built: true, hash };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
