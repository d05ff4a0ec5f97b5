// Speech nobody here recorded, for the forced-alignment tests (issue 37): Festival's us-slt HTS
// voice reads our sentences and reports when it said each word (the reference alignment), and
// Debian's pocketsphinx-testdata holds LibriVox read speech with its transcripts. Both come from
// apt (ops/apt.ts installs them); results are cached in the fixtures directory.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const cacheDir = path.join(os.tmpdir(), 'vidhost-fixtures');

/** What Festival reads in the alignment tests: clauses, a number, and a name no dictionary has. */
export const SCRIPT = [
  'Welcome to the studio.',
  'Today we talk about forced alignment, a way to time captions from a script.',
  'The speaker reads the text, and the aligner finds each word in the audio.',
  'My friend Zorblax counted 42 apples on the table.',
  'Short sentences are easy; long ones are split at commas, colons and full stops, so that every caption stays readable.',
].join(' ');

export interface ReferenceWord {
  word: string;
  start: number;
  end: number;
}

export interface SpokenClip {
  /** An H.264/AAC MP4: a small test picture with the speech as its audio. */
  file: string;
  /** Festival's own word times (seconds), in reading order. */
  words: ReferenceWord[];
  seconds: number;
}

/** The speech in `text` (one utterance per sentence, said one after the other) with Festival's word times. */
export async function festivalSpeech(text: string, opts: { leadSilence?: number } = {}): Promise<{ wav: string; words: ReferenceWord[]; seconds: number }> {
  fs.mkdirSync(cacheDir, { recursive: true });
  const id = crypto.createHash('sha256').update(`${text}|${opts.leadSilence ?? 0}`).digest('hex').slice(0, 16);
  const wav = path.join(cacheDir, `speech_${id}.wav`);
  const json = path.join(cacheDir, `speech_${id}.json`);
  if (fs.existsSync(wav) && fs.existsSync(json)) return { wav, ...JSON.parse(fs.readFileSync(json, 'utf8')) };
  const script = path.join(cacheDir, `speech_${id}.scm`);
  const raw = path.join(cacheDir, `speech_${id}.raw.wav`);
  const escaped = text.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
  fs.writeFileSync(
    script,
    [
      '(voice_cmu_us_slt_arctic_hts)',
      `(set! utt (Utterance Text "${escaped}"))`,
      '(utt.synth utt)',
      `(utt.save.wave utt "${raw}" 'riff)`,
      '(mapcar (lambda (w) (format t "W %s %f %f\\n" (item.name w) (item.feat w "word_start") (item.feat w "word_end"))) (utt.relation.items utt \'Word))',
    ].join('\n'),
  );
  const { stdout } = await run('festival', ['-b', script], { maxBuffer: 16 << 20 });
  const lead = opts.leadSilence ?? 0;
  const words = stdout
    .split('\n')
    .filter((l) => l.startsWith('W '))
    .map((l) => {
      const [, word, start, end] = l.split(' ');
      return { word, start: Number(start) + lead, end: Number(end) + lead };
    });
  // Optional silence before the speech, so a cue at 0 s cannot pass for a right one.
  await run('ffmpeg', ['-v', 'error', '-y', '-i', raw, '-af', `adelay=${Math.round(lead * 1000)}:all=1,apad=pad_dur=0.5`, '-ar', '16000', '-ac', '1', wav]);
  const seconds = words.length ? words[words.length - 1].end + 0.5 : 0;
  fs.writeFileSync(json, JSON.stringify({ words, seconds }));
  fs.rmSync(raw, { force: true });
  fs.rmSync(script, { force: true });
  return { wav, words, seconds };
}

/** `audio` under a 320x180 test picture as an MP4 (the shape of an upload). */
export async function videoWithAudio(audio: string, name: string): Promise<string> {
  const file = path.join(cacheDir, `${name}.mp4`);
  if (fs.existsSync(file)) return file;
  const tmp = `${file}.${process.pid}.tmp.mp4`;
  await run('ffmpeg', [
    '-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=24', '-i', audio, '-shortest',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', '24', '-c:a', 'aac', '-b:a', '64k', '-movflags', '+faststart', tmp,
  ]);
  fs.renameSync(tmp, file);
  return file;
}

export async function spokenClip(text: string, opts: { leadSilence?: number } = {}): Promise<SpokenClip> {
  const speech = await festivalSpeech(text, opts);
  const file = await videoWithAudio(speech.wav, `${path.basename(speech.wav, '.wav')}_video`);
  return { file, words: speech.words, seconds: speech.seconds };
}

/** `seconds` of digital silence under the test picture. */
export async function silentClip(seconds: number): Promise<string> {
  fs.mkdirSync(cacheDir, { recursive: true });
  const wav = path.join(cacheDir, `silence_${seconds}s.wav`);
  if (!fs.existsSync(wav)) await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `anullsrc=r=16000:cl=mono`, '-t', String(seconds), wav]);
  return videoWithAudio(wav, `silence_${seconds}s_video`);
}

const LIBRIVOX = '/usr/share/pocketsphinx/test/data/librivox';

/** LibriVox read speech from pocketsphinx-testdata (Sense and Sensibility), joined (`wav`, 16 kHz mono, and under a test picture, `file`), with its transcript. */
export async function librivoxClip(): Promise<{ file: string; wav: string; transcript: string }> {
  fs.mkdirSync(cacheDir, { recursive: true });
  const lines = fs.readFileSync(path.join(LIBRIVOX, 'transcription'), 'utf8').trim().split('\n');
  const parts = lines.map((l) => {
    const m = /^<s>\s*(.*?)\s*<\/s>\s*\((.+)\)$/.exec(l.trim());
    if (!m) throw new Error(`unexpected transcription line: ${l}`);
    return { text: m[1], wav: path.join(LIBRIVOX, `${m[2]}.wav`) };
  });
  const wav = path.join(cacheDir, 'librivox_joined.wav');
  if (!fs.existsSync(wav)) {
    const list = path.join(cacheDir, 'librivox_list.txt');
    fs.writeFileSync(list, parts.map((p) => `file '${p.wav}'`).join('\n'));
    await run('ffmpeg', ['-v', 'error', '-y', '-f', 'concat', '-safe', '0', '-i', list, '-ar', '16000', '-ac', '1', wav]);
  }
  // Sentence case and full stops, as a creator would paste it.
  const transcript = parts.map((p) => `${p.text.charAt(0).toUpperCase()}${p.text.slice(1)}.`).join(' ');
  return { file: await videoWithAudio(wav, 'librivox_joined_video'), wav, transcript };
}

/** The median of |a − b| over the pairs. */
export function medianAbsError(pairs: Array<[number, number]>): number {
  const errs = pairs.map(([a, b]) => Math.abs(a - b)).sort((x, y) => x - y);
  if (errs.length === 0) return Infinity;
  const mid = Math.floor(errs.length / 2);
  return errs.length % 2 ? errs[mid] : (errs[mid - 1] + errs[mid]) / 2;
}

/** French speech for the fr-FR model: espeak-ng (it reports no word times; the test checks order and coverage). */
export async function frenchSpeech(text: string): Promise<string> {
  fs.mkdirSync(cacheDir, { recursive: true });
  const id = crypto.createHash('sha256').update(text).digest('hex').slice(0, 16);
  const wav = path.join(cacheDir, `speech_fr_${id}.wav`);
  if (fs.existsSync(wav)) return wav;
  const raw = `${wav}.${process.pid}.raw.wav`;
  await run('espeak-ng', ['-v', 'fr', '-s', '140', '-w', raw, text]);
  await run('ffmpeg', ['-v', 'error', '-y', '-i', raw, '-ar', '16000', '-ac', '1', wav]);
  fs.rmSync(raw, { force: true });
  return wav;
}
