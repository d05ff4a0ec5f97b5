import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { die, say, warn } from './log';
import { isExecutable, run, sleep, tail, which } from './proc';

/**
 * Pinned Go-built tools (Temporal CLI, versitygw): an explicit *_PATH, else the cached build in
 * <tools>/bin (with its version in <tools>/versions/<name>), else a pinned one on PATH, else
 * `go install module/cmd@version` once. Changing a pinned version rebuilds on the next run.
 * A tool whose source is in this repository (`sourceDir`, the live edge) is built there with
 * `go build` (its go.mod/go.sum pin the dependencies); its version is a hash of that source.
 */

export interface GoTool {
  name: string;
  title: string;
  module: string;
  pkg: string;
  version: string;
  /** Environment variable naming a binary to use as is. */
  pathVar: string;
  /** For a tool built from this repository: the directory holding its main package and go.mod. */
  sourceDir?: string;
}

export const temporalCli = (version = 'v1.5.1'): GoTool => ({ name: 'temporal', title: 'Temporal CLI', module: 'github.com/temporalio/cli', pkg: 'github.com/temporalio/cli/cmd/temporal', version, pathVar: 'TEMPORAL_CLI_PATH' });
export const helm = (version = 'v3.22.0'): GoTool => ({ name: 'helm', title: 'helm', module: 'helm.sh/helm/v3', pkg: 'helm.sh/helm/v3/cmd/helm', version, pathVar: 'HELM_PATH' });
export const versitygw = (version = 'v1.7.0'): GoTool => ({ name: 'versitygw', title: 'versitygw', module: 'github.com/versity/versitygw', pkg: 'github.com/versity/versitygw/cmd/versitygw', version, pathVar: 'VERSITYGW_PATH' });

/**
 * The live edge (ingest/: SRT, WHIP/WHEP and LL-HLS in one binary, `go build ./cmd/vidhost-edge`
 * with the dependencies pinned in ingest/go.mod), built from this checkout's source.
 */
export const liveEdge = (root: string): GoTool => {
  const sourceDir = path.join(root, 'ingest');
  return { name: 'vidhost-edge', title: 'live edge', module: 'github.com/vidhost/vidhost/ingest', pkg: './cmd/vidhost-edge', version: sourceVersion(sourceDir), pathVar: 'LIVE_EDGE_PATH', sourceDir };
};

/** `src-<sha256 of go.mod, go.sum and the .go files under dir, recursively>`: an edited source rebuilds on the next run. */
export function sourceVersion(dir: string): string {
  const h = createHash('sha256');
  for (const f of sourceFiles(dir)) {
    h.update(`${f}\0`).update(fs.readFileSync(path.join(dir, f))).update('\0');
  }
  return `src-${h.digest('hex').slice(0, 16)}`;
}

/** go.mod, go.sum and *.go below dir (relative, `/`-separated, sorted); dot-folders, testdata and vendor skipped. */
function sourceFiles(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const name = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) {
      if (!e.name.startsWith('.') && e.name !== 'testdata' && e.name !== 'vendor') out.push(...sourceFiles(dir, name));
    } else if (e.name === 'go.mod' || e.name === 'go.sum' || e.name.endsWith('.go')) {
      out.push(name);
    }
  }
  return out.sort();
}

export function findGo(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return which('go', env.PATH) ?? ['/usr/local/go/bin/go', path.join(env.HOME ?? '', 'go/bin/go')].find(isExecutable);
}

/** `go version -m` output → the version of `module` built into the binary. */
export function moduleVersion(goVersionM: string, module: string): string | undefined {
  for (const line of goVersionM.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[0] === 'mod' && f[1] === module) return f[2];
  }
  return undefined;
}

async function binVersion(bin: string, module: string): Promise<string | undefined> {
  const go = findGo();
  if (!go) return undefined;
  const r = await run(go, ['version', '-m', bin], { timeoutMs: 30_000 });
  return r.code === 0 ? moduleVersion(r.stdout, module) : undefined;
}

/** True when <tools>/bin/<name> is the pinned version (recording the marker for a binary copied in by hand). */
export async function cached(tool: GoTool, toolsDir: string): Promise<boolean> {
  const bin = path.join(toolsDir, 'bin', tool.name);
  const marker = path.join(toolsDir, 'versions', tool.name);
  if (!isExecutable(bin)) return false;
  if (fs.existsSync(marker) && fs.readFileSync(marker, 'utf8').trim() === tool.version) return true;
  if (tool.sourceDir) return false; // built here: only the marker tells its source
  if ((await binVersion(bin, tool.module)) !== tool.version) return false;
  fs.writeFileSync(marker, `${tool.version}\n`);
  return true;
}

/**
 * A lock directory (mkdir is atomic) holding the owner's pid: concurrent scripts/start and
 * scripts/test build a tool once; a lock whose owner died is taken over.
 */
export async function withLock<T>(lockDir: string, onWait: () => void, fn: () => Promise<T>): Promise<T> {
  let waited = false;
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      fs.writeFileSync(path.join(lockDir, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = lockOwner(lockDir);
      if (owner && !pidAlive(owner)) {
        fs.rmSync(lockDir, { recursive: true, force: true });
        continue;
      }
      if (!waited) onWait();
      waited = true;
      await sleep(500);
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lockDir, { recursive: true, force: true });
  }
}

function lockOwner(lockDir: string): number {
  try {
    return Number(fs.readFileSync(path.join(lockDir, 'pid'), 'utf8')) || 0;
  } catch {
    return 0; // being created or removed: look again
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function build(tool: GoTool, toolsDir: string): Promise<void> {
  const go = findGo();
  if (!go) {
    die(`${tool.title} ${tool.version} is needed but the Go toolchain was not found.
  Install Go 1.24 or newer (https://go.dev/dl/, unpacked to /usr/local/go; or apt-get install golang-go if your distro's is new enough),
  or install a prebuilt ${tool.name} and put it on PATH (or point ${tool.pathVar} at it).`);
  }
  await withLock(path.join(toolsDir, `.${tool.name}.lock`), () => say(`waiting for another build of ${tool.name} to finish...`), async () => {
    if (await cached(tool, toolsDir)) return;
    const log = path.join(toolsDir, 'logs', `${tool.name}.log`);
    const goVersion = (await run(go, ['env', 'GOVERSION'])).stdout.trim();
    say(`building ${tool.title} ${tool.version} (first run only, a few minutes; ${goVersion}, log: ${log})...`);
    const tmp = fs.mkdtempSync(path.join(toolsDir, `.build-${tool.name}.`));
    const t0 = Date.now();
    fs.writeFileSync(log, '');
    const built = path.join(tmp, tool.name);
    const r = tool.sourceDir
      ? await run(go, ['build', '-trimpath', '-o', built, tool.pkg], { env: { ...process.env, GOFLAGS: '-mod=mod -buildvcs=false' }, cwd: tool.sourceDir, logFile: log })
      : await run(go, ['install', `${tool.pkg}@${tool.version}`], { env: { ...process.env, GOBIN: tmp, GOFLAGS: '-buildvcs=false' }, logFile: log });
    if (r.code !== 0 || !isExecutable(built)) {
      fs.rmSync(tmp, { recursive: true, force: true });
      die(`${tail(log)}\nbuilding ${tool.title} ${tool.version} failed (exit ${r.code}); full log: ${log}`);
    }
    fs.renameSync(built, path.join(toolsDir, 'bin', tool.name));
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.writeFileSync(path.join(toolsDir, 'versions', tool.name), `${tool.version}\n`);
    say(`built ${tool.title} ${tool.version} in ${Math.round((Date.now() - t0) / 1000)}s -> ${path.join(toolsDir, 'bin', tool.name)}`);
  });
}

/** The binary to use for a pinned tool, building it when needed. */
export async function ensureGoTool(tool: GoTool, toolsDir: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const preset = env[tool.pathVar];
  if (preset) {
    if (!isExecutable(preset)) die(`${tool.pathVar}=${preset} is not an executable file`);
    return preset;
  }
  const bin = path.join(toolsDir, 'bin', tool.name);
  if (await cached(tool, toolsDir)) return bin;
  const onPath = tool.sourceDir ? undefined : which(tool.name, env.PATH);
  if (onPath) {
    const v = await binVersion(onPath, tool.module);
    if (v === tool.version) return onPath;
    if (v === undefined && (await run(onPath, ['--version'])).stdout.includes(tool.version.replace(/^v/, ''))) return onPath;
    if (!findGo()) {
      warn(`${tool.name} on PATH (${onPath}) is not the pinned ${tool.version} and Go isn't available to build it; using it anyway`);
      return onPath;
    }
  }
  await build(tool, toolsDir);
  return bin;
}
