/**
 * Captions from a transcript, end to end (issue 37's "done when"): a creator's 10-minute talk is
 * uploaded through the API and played; the creator pastes its script into
 * `POST /v1/videos/{id}/captions/en/align`; how long until the track is `ready` and its WebVTT is
 * served by the CDN. The talk is LibriVox read speech (pocketsphinx-testdata) joined end to end
 * over a still picture, its transcript repeated to match. A real stack: API, workers, Temporal,
 * Postgres, ffmpeg, the aligner process.
 *
 *   npm run bench:captions-api -- [--minutes 10]
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import request from 'supertest';
import { cdnGet } from '../test/outputs/helpers';
import { readyVideo, waitUntil } from '../test/playback/helpers';
import { librivoxClip } from '../test/support/speech';
import { startStack } from '../test/support/stack';
import { runMain } from '../test/support/main';
import { arg } from './args';

const run = promisify(execFile);

async function talk(minutes: number, dir: string): Promise<{ file: string; transcript: string; seconds: number }> {
  const clip = await librivoxClip();
  const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', clip.file]);
  const times = Math.max(1, Math.round((minutes * 60) / Number(stdout)));
  const list = path.join(dir, 'list.txt');
  fs.writeFileSync(list, Array.from({ length: times }, () => `file '${clip.file}'`).join('\n'));
  const file = path.join(dir, 'talk.mp4');
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=0x223344:s=640x360:r=25', '-f', 'concat', '-safe', '0', '-i', list,
    '-map', '0:v', '-map', '1:a:0', '-shortest', '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'stillimage', '-g', '100', '-c:a', 'aac', '-b:a', '96k', file]);
  const probe = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file]);
  return { file, transcript: Array.from({ length: times }, () => clip.transcript).join('\n\n'), seconds: Number(probe.stdout) };
}

async function main() {
  const minutes = arg('minutes', 10);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-bench-captions-api-'));
  const t = await talk(minutes, dir);
  const s = await startStack();
  try {
    const video = await readyVideo(s, t.file, 'public');
    console.log(`talk: ${(t.seconds / 60).toFixed(1)} min, ${t.transcript.length.toLocaleString('en')} characters of transcript; ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}`);
    const t0 = performance.now();
    const res = await request(s.url).post(`/v1/videos/${video.id}/captions/en/align`).set('Authorization', `Bearer ${s.ws.fullKey}`).set('Content-Type', 'text/plain; charset=utf-8').send(t.transcript);
    if (res.status !== 202) throw new Error(`align answered ${res.status}: ${JSON.stringify(res.body)}`);
    const accepted = performance.now() - t0;
    let status = '';
    await waitUntil(async () => {
      const tracks = (await s.get(`/v1/videos/${video.id}/captions`).expect(200)).body.data as Array<{ language: string; status: string }>;
      status = tracks.find((x) => x.language === 'en')?.status ?? '';
      return status === 'ready' || status === 'failed';
    }, 'the en track ready or failed', 600_000);
    const ready = performance.now() - t0;
    if (status !== 'ready') throw new Error(`the track ${status}`);
    const vtt = await cdnGet(s, `/v/${video.id}/captions/en.vtt`).expect(200);
    const cues = (vtt.body as Buffer).toString('utf8').split('\n').filter((l) => l.includes(' --> ')).length;
    const served = performance.now() - t0;
    console.log('| talk | POST → 202 | POST → track ready | POST → VTT served | cues | per minute of talk | load after |');
    console.log('|---|---|---|---|---|---|---|');
    console.log(`| ${(t.seconds / 60).toFixed(1)} min | ${accepted.toFixed(0)} ms | **${(ready / 1000).toFixed(1)} s** | ${(served / 1000).toFixed(1)} s | ${cues} | ${(ready / 1000 / (t.seconds / 60)).toFixed(2)} s | ${os.loadavg()[0].toFixed(1)} |`);
    console.log(`goal: within a minute of pasting the script: ${ready <= 60_000 ? 'met' : 'NOT met'}`);
  } finally {
    await s.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runMain(main);
