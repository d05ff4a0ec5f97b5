/**
 * The forced aligner in windows (lib/outputs/align/windows.ts, issue 37): its cost per audio minute
 * does not grow with the length. LibriVox's 25 s (pocketsphinx-testdata) joined 3 times (1¼ min)
 * and 10 times (4 min), each aligned against its transcript repeated to match; the CPU time of the
 * decoding per audio minute of both, and their ratio (one run, so both see the same machine). One
 * decode of the whole audio against the whole transcript measured 1.74 here; the windows must stay
 * under the bound (default 1.4). Exits non-zero past it. This was the last test of
 * test/outputs/aligner-windows.test.ts: a speed claim, so a ratio in bench/, not a timed test.
 *
 *   npm run bench:aligner-ratio -- [--short 3] [--long 10] [--bound 1.4]
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { runAligner } from '../lib/outputs/align/aligner';
import { ALIGN_THRESHOLDS } from '../lib/outputs/align/protocol';
import { tokenize } from '../lib/outputs/align/transcript';
import { librivoxClip } from '../test/support/speech';
import { arg } from './args';

const run = promisify(execFile);

async function main(): Promise<number> {
  const shortCopies = arg('short', 3);
  const longCopies = arg('long', 10);
  const bound = arg('bound', 1.4);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-bench-aligner-ratio-'));
  try {
    const { wav, transcript } = await librivoxClip();
    const perMinute = async (copies: number): Promise<number> => {
      const list = path.join(dir, `x${copies}.txt`);
      fs.writeFileSync(list, Array.from({ length: copies }, () => `file '${wav}'`).join('\n'));
      const pcm = path.join(dir, `x${copies}.f32`);
      await run('ffmpeg', ['-v', 'error', '-y', '-f', 'concat', '-safe', '0', '-i', list, '-map', '0:a:0', '-ac', '1', '-ar', '16000', '-f', 'f32le', pcm]);
      const seconds = fs.statSync(pcm).size / 4 / 16000;
      const tokens = tokenize(Array.from({ length: copies }, () => transcript).join(' '), 'en');
      const r = await runAligner({ pcm, model: 'en-us', keys: tokens.flatMap((t) => t.keys), ...ALIGN_THRESHOLDS }, path.join(dir, 'job.json'), { timeoutMs: 540_000, maxRssMb: 1536 }, () => {});
      if (!r.output.ok) throw new Error(`the aligner failed on ${copies} copies: ${JSON.stringify({ ...r.output, times: undefined })}`);
      const cpu = r.output.cpuMs / (seconds / 60);
      console.log(`${(seconds / 60).toFixed(1)} min: ${r.output.windows} windows, ${(cpu / 1000).toFixed(2)} s of CPU per audio minute (${(r.ms / 1000).toFixed(1)} s wall, load ${os.loadavg()[0].toFixed(1)})`);
      return cpu;
    };
    console.log(`${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}`);
    const short = await perMinute(shortCopies);
    const long = await perMinute(longCopies);
    const ratio = long / short;
    console.log(`ratio ${ratio.toFixed(2)} (CPU per audio minute, ${longCopies} copies ÷ ${shortCopies}; bound ${bound}; one decode of the whole audio: 1.74, measured)`);
    if (!(ratio < bound)) {
      console.error(`FAIL: ${longCopies} copies cost ${ratio.toFixed(2)}× as much per audio minute as ${shortCopies} (bound ${bound})`);
      return 1;
    }
    return 0;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
