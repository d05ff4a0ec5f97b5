/**
 * Captions from a transcript (issue 37): how long forced alignment takes per minute of audio, and
 * the aligner process's peak resident memory, for read speech nobody here recorded (LibriVox from
 * pocketsphinx-testdata, its 25 s joined end to end to the lengths asked for, with the transcript
 * repeated to match). Runs what the activity runs: ffmpeg to 16 kHz mono float PCM, then the
 * aligner child process (lib/outputs/align/aligner.ts) with the production bounds.
 *
 *   npm run bench:captions -- [--minutes 1,5,10]
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { runAligner } from '../lib/outputs/align/aligner';
import { buildCues } from '../lib/outputs/align/cues';
import { ALIGN_THRESHOLDS } from '../lib/outputs/align/protocol';
import { timeTokens } from '../lib/outputs/align/timing';
import { tokenize } from '../lib/outputs/align/transcript';
import { librivoxClip } from '../test/support/speech';

const run = promisify(execFile);

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

async function main() {
  const minutes = arg('minutes', '1,5,10').split(',').map(Number);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-bench-captions-'));
  const clip = await librivoxClip();
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', clip.file]);
  const clipSeconds = Number(stdout);
  console.log(`LibriVox clip: ${clipSeconds.toFixed(1)} s; ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}`);
  console.log('audio     | decode | align  | align per audio minute | real-time factor | peak RSS | windows | CPU per audio minute | ÷ first row | load');
  let floor: number | null = null;
  try {
    for (const m of minutes) {
      const times = Math.max(1, Math.round((m * 60) / clipSeconds));
      const list = path.join(dir, 'list.txt');
      fs.writeFileSync(list, Array.from({ length: times }, () => `file '${clip.file}'`).join('\n'));
      const pcm = path.join(dir, `speech-${m}.f32`);
      const t0 = performance.now();
      await run('ffmpeg', ['-v', 'error', '-y', '-f', 'concat', '-safe', '0', '-i', list, '-map', '0:a:0', '-vn', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_f32le', '-f', 'f32le', pcm]);
      const decodeMs = performance.now() - t0;
      const seconds = fs.statSync(pcm).size / 4 / 16000;
      const text = Array.from({ length: times }, () => clip.transcript).join('\n\n');
      const tokens = tokenize(text, 'en');
      const r = await runAligner(
        { pcm, model: 'en-us', keys: tokens.flatMap((t) => t.keys), ...ALIGN_THRESHOLDS },
        path.join(dir, 'job.json'),
        { timeoutMs: 60_000 + seconds * 1000, maxRssMb: 1536 },
        () => {},
      );
      if (!r.output.ok) throw new Error(`alignment failed: ${r.output.code}`);
      const cues = buildCues(timeTokens(tokens, r.output.times.map((t) => (t ? { start: t[0], end: t[1] } : null)), seconds));
      if (cues.length === 0) throw new Error('no cues');
      const perMinute = r.ms / 1000 / (seconds / 60);
      // CPU time of the windows' decoding per audio minute: what the machine's load does not change.
      const cpuPerMinute = r.output.cpuMs / 1000 / (seconds / 60);
      floor ??= cpuPerMinute;
      console.log(
        `${(seconds / 60).toFixed(1).padStart(5)} min | ${(decodeMs / 1000).toFixed(1).padStart(5)} s | ${(r.ms / 1000).toFixed(1).padStart(5)} s | ${perMinute.toFixed(2).padStart(8)} s per minute       | ${(r.ms / 1000 / seconds).toFixed(3).padStart(8)}x        | ${String(r.peakRssMb).padStart(5)} MB | ${String(r.output.windows).padStart(7)} | ${cpuPerMinute.toFixed(2).padStart(8)} s             | ${(cpuPerMinute / floor).toFixed(2).padStart(5)}       | ${os.loadavg()[0].toFixed(1)}`,
      );
      fs.rmSync(pcm, { force: true });
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
