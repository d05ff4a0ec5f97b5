import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { AlignerError, runAligner } from '../../lib/outputs/align/aligner';
import { buildCues } from '../../lib/outputs/align/cues';
import { ALIGN_THRESHOLDS, type AlignOutput } from '../../lib/outputs/align/protocol';
import { timeTokens } from '../../lib/outputs/align/timing';
import { type AlignLanguage, ALIGN_MODELS, tokenize } from '../../lib/outputs/align/transcript';
import { festivalSpeech, frenchSpeech, librivoxClip, medianAbsError, SCRIPT } from '../support/speech';

const run = promisify(execFile);


/**
 * The aligner on its own (lib/outputs/align, issue 37), on speech nobody here recorded: Festival's
 * us-slt voice with its own word times as the reference, LibriVox read speech from
 * pocketsphinx-testdata, silence, and transcripts that do not belong to the audio.
 */
describe('Outputs: the forced aligner (issue 37)', function () {
  this.timeout(180_000);
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-aligner-test-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function pcmOf(media: string): Promise<string> {
    const out = path.join(dir, `${path.basename(media)}.f32`);
    await run('ffmpeg', ['-v', 'error', '-y', '-i', media, '-map', '0:a:0', '-ac', '1', '-ar', '16000', '-f', 'f32le', out]);
    return out;
  }

  async function align(media: string, text: string, lang: AlignLanguage = 'en'): Promise<{ out: AlignOutput; tokens: ReturnType<typeof tokenize> }> {
    const tokens = tokenize(text, lang);
    const run = await runAligner(
      { pcm: await pcmOf(media), model: ALIGN_MODELS[lang], keys: tokens.flatMap((t) => t.keys), ...ALIGN_THRESHOLDS },
      path.join(dir, 'job.json'),
      { timeoutMs: 120_000, maxRssMb: 1536 },
      () => {},
    );
    return { out: run.output, tokens };
  }

  it('times Festival speech within 0.3 s of the synthesizer\'s own word starts (median), a name it lacks between its neighbours', async () => {
    const speech = await festivalSpeech(SCRIPT, { leadSilence: 1.5 });
    const { out, tokens } = await align(speech.wav, SCRIPT);
    assert.ok(out.ok, JSON.stringify(out));
    console.log(`      speech covered by the words: ${(out.speechCoverage * 100).toFixed(0)}%`);
    const timed = timeTokens(tokens, out.times.map((t) => (t ? { start: t[0], end: t[1] } : null)), speech.seconds);
    // Festival says "42" as two words ("forty two") and spells nothing else differently: pair by order after expanding.
    const ref = speech.words;
    const mine = timed.flatMap((t) => (t.keys.length > 1 ? t.keys.map((_, i) => (i === 0 ? t.start : NaN)) : [t.start]));
    assert.equal(mine.length, ref.length, `${mine.length} aligned words vs ${ref.length} reference words`);
    const pairs = mine.map((m, i) => [m, ref[i].start] as [number, number]).filter(([m]) => !Number.isNaN(m));
    const median = medianAbsError(pairs);
    console.log(`      median word-start error vs Festival: ${median.toFixed(3)} s over ${pairs.length} words (max ${Math.max(...pairs.map(([a, b]) => Math.abs(a - b))).toFixed(2)} s)`);
    assert.ok(median <= 0.3, `median word-start error ${median} s`);

    const zorblax = timed.findIndex((t) => t.text === 'Zorblax');
    assert.equal(out.times[tokens.slice(0, zorblax).reduce((n, t) => n + t.keys.length, 0)], null, 'Zorblax is not in the dictionary');
    assert.ok(timed[zorblax].start >= timed[zorblax - 1].end - 0.001 && timed[zorblax].end <= timed[zorblax + 1].start + 0.001, 'interpolated between its neighbours');
    const refZ = ref.find((w) => w.word === 'Zorblax')!;
    assert.ok(Math.abs(timed[zorblax].start - refZ.start) < 0.5, `Zorblax at ${timed[zorblax].start}, said at ${refZ.start}`);

    // The cues start where their first word is said.
    const cues = buildCues(timed);
    assert.ok(cues[0].start > 1.2, `the first cue waits for the speech (${cues[0].start})`);
    for (const c of cues) {
      assert.ok(c.end - c.start <= 7 && c.lines.length <= 2 && c.lines.every((l) => l.length <= 42), JSON.stringify(c));
    }
  });

  it('aligns LibriVox read speech (pocketsphinx-testdata) to its transcript, words in order across the whole recording', async () => {
    const clip = await librivoxClip();
    const { out } = await align(clip.file, clip.transcript);
    assert.ok(out.ok, JSON.stringify(out));
    console.log(`      LibriVox: ${out.inDictionary}/${out.total} words in the dictionary, ${(out.speechCoverage * 100).toFixed(0)}% of the speech covered`);
    const times = out.times.filter((t): t is [number, number, number] => t !== null);
    assert.equal(times.length, out.inDictionary);
    for (let i = 1; i < times.length; i++) assert.ok(times[i][0] >= times[i - 1][0], 'in order');
    const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', clip.file]);
    assert.ok(times[times.length - 1][1] > Number(stdout) - 2, 'the last word is near the end');
  });

  it('aligns French with the fr-FR model (espeak-ng speech): elisions split, every word placed in order', async () => {
    const text = "Bonjour à tous. Aujourd'hui nous parlons de l'alignement forcé, une façon de synchroniser les sous-titres avec la parole.";
    const { out, tokens } = await align(await frenchSpeech(text), text, 'fr');
    assert.ok(out.ok, JSON.stringify(out));
    assert.ok(tokens.some((t) => t.keys.join(' ') === "l' alignement"));
    const times = out.times.filter((t): t is [number, number, number] => t !== null);
    assert.equal(times.length, tokens.reduce((n, t) => n + t.keys.length, 0), 'every French word is in the dictionary');
    for (let i = 1; i < times.length; i++) assert.ok(times[i][0] >= times[i - 1][1] - 0.001, 'in order');
    console.log(`      French: ${(out.speechCoverage * 100).toFixed(0)}% of the speech covered`);
  });

  it('fails, instead of inventing timings, on silence, on another text, and on a transcript in another language', async () => {
    const speech = await festivalSpeech(SCRIPT, { leadSilence: 1.5 });
    const silence = path.join(dir, 'silence.wav');
    await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'anullsrc=r=16000:cl=mono', '-t', '10', silence]);
    const failure = (out: AlignOutput) => (out.ok ? `aligned (${(out.speechCoverage * 100).toFixed(0)}% of the speech covered)` : out.code);
    const onSilence = await align(silence, SCRIPT);
    assert.match(failure(onSilence.out), /^(no_alignment|speech_not_covered)$/);

    const other = 'The committee approved the budget after a long debate about roads, schools and the new hospital in the north of the city.';
    const wrong = await align(speech.wav, other);
    console.log(`      another English text: ${failure(wrong.out)}, ${wrong.out.speechCoverage === undefined ? '' : `${(wrong.out.speechCoverage * 100).toFixed(0)}% of the speech covered`}`);
    assert.match(failure(wrong.out), /^(no_alignment|speech_not_covered)$/);

    const french = 'Bonjour à tous, aujourd\'hui nous parlons de l\'alignement forcé, une façon de synchroniser les sous-titres avec la parole.';
    const asEnglish = await align(speech.wav, french);
    assert.match(failure(asEnglish.out), /^(transcript_not_in_dictionary|no_alignment|speech_not_covered)$/, 'a French text against English speech');
    const asFrench = await align(speech.wav, french, 'fr');
    assert.match(failure(asFrench.out), /^(no_alignment|speech_not_covered)$/);
  });

  it('is bounded: a process over its memory cap is killed and says so', async () => {
    const speech = await festivalSpeech(SCRIPT, { leadSilence: 1.5 });
    const tokens = tokenize(SCRIPT, 'en');
    await assert.rejects(
      runAligner({ pcm: await pcmOf(speech.wav), model: 'en-us', keys: tokens.flatMap((t) => t.keys), ...ALIGN_THRESHOLDS }, path.join(dir, 'job2.json'), { timeoutMs: 60_000, maxRssMb: 20 }, () => {}),
      (err: unknown) => err instanceof AlignerError && err.code === 'align_memory',
    );
    await assert.rejects(
      runAligner({ pcm: await pcmOf(speech.wav), model: 'en-us', keys: tokens.flatMap((t) => t.keys), ...ALIGN_THRESHOLDS }, path.join(dir, 'job3.json'), { timeoutMs: 50, maxRssMb: 1536 }, () => {}),
      (err: unknown) => err instanceof AlignerError && err.code === 'align_timeout',
    );
  });
});
