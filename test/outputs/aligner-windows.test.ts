import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { runAligner } from '../../lib/outputs/align/aligner';
import { buildCues } from '../../lib/outputs/align/cues';
import { ALIGN_THRESHOLDS, type AlignOutput } from '../../lib/outputs/align/protocol';
import { timeTokens } from '../../lib/outputs/align/timing';
import { tokenize } from '../../lib/outputs/align/transcript';
import { festivalSpeech, librivoxClip, medianAbsError } from '../support/speech';
import { TALK } from '../support/talk';

const run = promisify(execFile);

/**
 * The aligner on audio longer than one window (lib/outputs/align/windows.ts, issue 37): accuracy
 * against Festival's own word times over a 2¾-minute talk, words after 40 s of noise, and a wrong
 * transcript refused. Its cost per audio minute not growing with the length is a speed claim: a CPU
 * ratio in bench/aligner-ratio.ts (`npm run bench:aligner-ratio`), not a test here.
 */
describe('Outputs: the forced aligner in windows (issue 37)', function () {
  this.timeout(600_000);
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-aligner-windows-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** The inputs joined end to end as 16 kHz mono float PCM. */
  async function pcmOf(name: string, inputs: string[]): Promise<{ pcm: string; seconds: number }> {
    const list = path.join(dir, `${name}.txt`);
    fs.writeFileSync(list, inputs.map((f) => `file '${f}'`).join('\n'));
    const pcm = path.join(dir, `${name}.f32`);
    await run('ffmpeg', ['-v', 'error', '-y', '-f', 'concat', '-safe', '0', '-i', list, '-map', '0:a:0', '-ac', '1', '-ar', '16000', '-f', 'f32le', pcm]);
    return { pcm, seconds: fs.statSync(pcm).size / 4 / 16000 };
  }

  async function align(pcm: string, text: string): Promise<{ out: Extract<AlignOutput, { ok: true }>; tokens: ReturnType<typeof tokenize>; ms: number }> {
    const tokens = tokenize(text, 'en');
    const r = await runAligner({ pcm, model: 'en-us', keys: tokens.flatMap((t) => t.keys), ...ALIGN_THRESHOLDS }, path.join(dir, 'job.json'), { timeoutMs: 540_000, maxRssMb: 1536 }, () => {});
    assert.ok(r.output.ok, JSON.stringify(r.output));
    return { out: r.output, tokens, ms: r.ms };
  }

  /** LibriVox's 25 s (pocketsphinx-testdata) as a 16 kHz WAV, and its transcript. */
  const librivox = librivoxClip;

  it('times a 2¾-minute talk window by window within 0.3 s of Festival\'s word starts (median)', async () => {
    const speech = await festivalSpeech(TALK, { leadSilence: 1.5 });
    const { pcm } = await pcmOf('talk', [speech.wav]);
    const { out, tokens } = await align(pcm, TALK);
    assert.ok(out.windows >= 5, `${out.windows} windows`);
    const keys = tokens.flatMap((t) => t.keys);
    assert.equal(keys.length, speech.words.length, 'one key per word Festival said');
    const pairs = out.times.flatMap((t, i): Array<[number, number]> => (t ? [[t[0], speech.words[i].start]] : []));
    const errs = pairs.map(([a, b]) => Math.abs(a - b)).sort((a, b) => a - b);
    const median = medianAbsError(pairs);
    console.log(`      ${(speech.seconds / 60).toFixed(1)} min, ${out.windows} windows: median word-start error ${median.toFixed(3)} s over ${pairs.length} words, 90th percentile ${errs[Math.floor(errs.length * 0.9)].toFixed(3)} s, max ${errs[errs.length - 1].toFixed(2)} s`);
    assert.ok(median <= 0.3, `median word-start error ${median} s`);
    assert.ok(errs[Math.floor(errs.length * 0.9)] <= 0.3, 'nine words in ten within 0.3 s');
    const cues = buildCues(timeTokens(tokens, out.times.map((t) => (t ? { start: t[0], end: t[1] } : null)), speech.seconds));
    assert.ok(cues.length > 20);
  });

  it('places the words after 40 s of noise where they are said (a window does not stretch its first word over the noise)', async () => {
    const { wav, transcript } = await librivox();
    const noise = path.join(dir, 'noise.wav');
    // Pink noise at about −26 dBFS: no speech in it, but not silence either.
    await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'anoisesrc=color=pink:amplitude=0.05:r=16000:d=40:seed=7', '-ac', '1', noise]);
    const clip = await pcmOf('once', [wav]);
    const once = await align(clip.pcm, transcript);
    // Two copies after the noise: the window that starts in the noise, and the windows after it.
    const { pcm } = await pcmOf('interlude', [wav, noise, wav, wav]);
    const { out } = await align(pcm, Array.from({ length: 3 }, () => transcript).join(' '));
    const clipSeconds = clip.seconds;
    const n = once.out.times.length;
    // Word i of copy k is said where the aligner puts word i of the clip alone, shifted by the audio before copy k.
    const pairs = out.times.map((t, i): [number, number] => {
      const k = Math.floor(i / n);
      return [t![0], once.out.times[i % n]![0] + (k === 0 ? 0 : clipSeconds + 40 + (k - 1) * clipSeconds)];
    });
    const worst = Math.max(...pairs.map(([a, b]) => Math.abs(a - b)));
    console.log(`      ${out.windows} windows; largest difference from the clip aligned alone: ${worst.toFixed(2)} s; first word after the noise at ${pairs[n][0].toFixed(2)} s (said at ${pairs[n][1].toFixed(2)} s)`);
    assert.ok(out.windows > 3);
    assert.ok(Math.abs(pairs[n][0] - pairs[n][1]) < 1, 'the first word after the noise');
    assert.ok(medianAbsError(pairs) < 0.05);
    assert.ok(worst < 1.5, `a word ${worst.toFixed(2)} s from its place`);
  });

  it('fails, instead of inventing timings, on another text over several windows of speech', async () => {
    const { wav } = await librivox();
    // 3 × 25 s of LibriVox against as many words of the talk as it holds (about 2.9 a second).
    const { pcm } = await pcmOf('wrong', Array.from({ length: 3 }, () => wav));
    const text = TALK.split(' ').slice(0, 216).join(' ');
    const tokens = tokenize(text, 'en');
    const r = await runAligner({ pcm, model: 'en-us', keys: tokens.flatMap((t) => t.keys), ...ALIGN_THRESHOLDS }, path.join(dir, 'job.json'), { timeoutMs: 540_000, maxRssMb: 1536 }, () => {});
    console.log(`      ${r.output.ok ? 'aligned' : r.output.code} after ${r.output.windows} windows`);
    assert.ok((r.output.windows ?? 0) >= 3, `${r.output.windows} windows: the refusal came from a window after the first`);
    assert.ok(!r.output.ok && ['no_alignment', 'speech_not_covered'].includes(r.output.code), JSON.stringify({ ...r.output, times: undefined }));
  });
});
