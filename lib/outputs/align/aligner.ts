// Runs the forced aligner (./child.ts) in its own Node process, bounded: a V8 heap cap
// (--max-old-space-size), a resident-memory cap checked twice a second (the WebAssembly heap is
// outside V8's, so only the process's RSS bounds it), and a wall-time limit. The caller heartbeats
// from onTick. Nothing here trusts the child's output beyond parsing one bounded JSON line.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AlignJob, AlignOutput } from './protocol';

export interface AlignLimits {
  timeoutMs: number;
  maxRssMb: number;
}

export interface AlignRun {
  output: AlignOutput;
  ms: number;
  peakRssMb: number;
}

export class AlignerError extends Error {
  constructor(
    readonly code: 'align_timeout' | 'align_memory' | 'align_crashed',
    message: string,
  ) {
    super(message);
  }
}

const MAX_STDOUT = 32 * 1024 * 1024;
const POLL_MS = 500;

async function rssMb(pid: number): Promise<number> {
  try {
    const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * The child's entry and the loader it needs: compiled JS next to this file, or TypeScript through
 * tsx (named by its path: a bare `tsx` would be looked up from the working directory).
 */
function childCommand(): string[] {
  const ext = path.extname(__filename);
  const file = path.join(__dirname, `child${ext}`);
  return ext === '.ts' ? ['--import', pathToFileURL(require.resolve('tsx')).href, file] : [file];
}

export async function runAligner(job: AlignJob, jobFile: string, limits: AlignLimits, onTick: (info: { ms: number; rssMb: number }) => void, signal?: AbortSignal): Promise<AlignRun> {
  await fs.writeFile(jobFile, JSON.stringify(job));
  const started = Date.now();
  const heapMb = Math.max(64, Math.min(512, Math.floor(limits.maxRssMb / 4)));
  const child = spawn(process.execPath, [`--max-old-space-size=${heapMb}`, ...childCommand(), jobFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  let peak = 0;
  let stopped: AlignerError | null = null;
  const stop = (err: AlignerError) => {
    stopped ??= err;
    child.kill('SIGKILL');
  };
  const timer = setTimeout(() => stop(new AlignerError('align_timeout', `The alignment took longer than ${Math.round(limits.timeoutMs / 1000)} s`)), limits.timeoutMs);
  const abort = () => stop(new AlignerError('align_crashed', 'The alignment was cancelled'));
  signal?.addEventListener('abort', abort, { once: true });
  const poll = setInterval(async () => {
    if (child.pid === undefined || child.exitCode !== null) return;
    const rss = await rssMb(child.pid);
    peak = Math.max(peak, rss);
    if (rss > limits.maxRssMb) stop(new AlignerError('align_memory', `The alignment needed more than ${limits.maxRssMb} MB of memory`));
    onTick({ ms: Date.now() - started, rssMb: rss });
  }, POLL_MS);

  const out: Buffer[] = [];
  let outBytes = 0;
  let errTail = '';
  child.stdout.on('data', (c: Buffer) => {
    outBytes += c.length;
    if (outBytes > MAX_STDOUT) stop(new AlignerError('align_crashed', 'The aligner wrote too much'));
    else out.push(c);
  });
  child.stderr.on('data', (c: Buffer) => {
    errTail = (errTail + c.toString('utf8')).slice(-2000);
  });
  const code: number | null = await new Promise((resolve) => child.on('close', (c) => resolve(c)));
  clearTimeout(timer);
  clearInterval(poll);
  signal?.removeEventListener('abort', abort);
  if (stopped) throw stopped;
  if (code !== 0) throw new AlignerError('align_crashed', `The aligner exited with ${code}: ${errTail.trim().split('\n').pop() ?? ''}`);
  let output: AlignOutput;
  try {
    output = JSON.parse(Buffer.concat(out).toString('utf8'));
  } catch {
    throw new AlignerError('align_crashed', 'The aligner gave no result');
  }
  return { output, ms: Date.now() - started, peakRssMb: Math.round(peak) };
}
