// The forced aligner's own process (started by ./aligner.ts, never imported): soundswallower (a
// WebAssembly build of CMU PocketSphinx with its en-US and fr-FR acoustic models and dictionaries)
// aligns the transcript's dictionary words to 16 kHz mono float PCM. Reads a job file named by
// argv[2], writes one JSON line to stdout. A crash or a kill is the parent's to report.
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AlignJob, AlignOutput } from './protocol';

interface Segment {
  t: string;
  b: number;
  d: number;
  p: number;
}

interface Decoder {
  initialize(): Promise<void>;
  lookup_word(word: string): string | null;
  set_align_text(text: string): void;
  start(): void;
  process_audio(pcm: Float32Array, noSearch: boolean, fullUtt: boolean): number;
  stop(): void;
  get_alignment(): { w?: Segment[] };
}

interface Endpointer {
  get_frame_size(): number;
  get_in_speech(): boolean;
  get_speech_start(): number;
  get_speech_end(): number;
  process(frame: Float32Array): Float32Array | null;
}

type Module = { Decoder: new (c: object) => Decoder; Endpointer: new (c: { samprate: number; mode?: number }) => Endpointer };

// The package is ES-module only and this project compiles to CommonJS, where `import()` would
// become `require()`: a real dynamic import, kept out of the compiler's reach.
const importEsm = new Function('url', 'return import(url)') as (url: string) => Promise<{ default: (m: object) => Promise<Module> }>;

/** Fillers the decoder inserts between words: silence, breath, noise. */
const FILLER = /^(<sil>|<s>|<\/s>|\[[A-Z]+\]|\+\+.*\+\+)$/;

/** Where the audio holds speech, by the package's voice activity detector (WebRTC's, most aggressive mode). */
function speechSpans(soundswallower: Module, pcm: Float32Array): Array<[number, number]> {
  const ep = new soundswallower.Endpointer({ samprate: 16000, mode: 3 });
  const size = ep.get_frame_size();
  const spans: Array<[number, number]> = [];
  let inSpeech = false;
  for (let at = 0; at + size <= pcm.length; at += size) {
    ep.process(pcm.subarray(at, at + size));
    const now = ep.get_in_speech();
    if (now && !inSpeech) spans.push([ep.get_speech_start(), Infinity]);
    if (!now && inSpeech) spans[spans.length - 1][1] = ep.get_speech_end();
    inSpeech = now;
  }
  if (inSpeech) spans[spans.length - 1][1] = pcm.length / 16000;
  return spans;
}

/** The share of the detected speech that falls inside aligned words (1 when there is no speech to cover). */
function coverage(speech: Array<[number, number]>, words: Array<[number, number]>): number {
  const total = speech.reduce((n, [a, b]) => n + (b - a), 0);
  if (total <= 0) return 1;
  let covered = 0;
  let w = 0;
  for (const [a, b] of speech) {
    while (w < words.length && words[w][1] <= a) w++;
    for (let k = w; k < words.length && words[k][0] < b; k++) covered += Math.max(0, Math.min(b, words[k][1]) - Math.max(a, words[k][0]));
  }
  return covered / total;
}

async function main(): Promise<AlignOutput> {
  const job: AlignJob = JSON.parse(await fs.readFile(process.argv[2], 'utf8'));
  const entry = require.resolve('soundswallower');
  const soundswallower = await (await importEsm(pathToFileURL(entry).href)).default({ modelBase: `${path.join(path.dirname(entry), 'model')}/`, defaultModel: job.model });
  const decoder = new soundswallower.Decoder({ loglevel: 'FATAL', samprate: 16000 });
  await decoder.initialize();

  const known = job.keys.map((k) => Boolean(k) && !/\s/.test(k) && decoder.lookup_word(k) !== null);
  const inDictionary = known.filter(Boolean).length;
  if (inDictionary === 0 || inDictionary < job.keys.length * job.minKnownRatio) {
    return { ok: false, code: 'transcript_not_in_dictionary', inDictionary, total: job.keys.length };
  }
  const words = job.keys.filter((_, i) => known[i]);
  decoder.set_align_text(words.join(' '));

  const bytes = await fs.readFile(job.pcm);
  const pcm = new Float32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.length / 4));
  decoder.start();
  decoder.process_audio(pcm, false, true);
  decoder.stop();
  const segments = (decoder.get_alignment().w ?? []).filter((s) => !FILLER.test(s.t));
  if (segments.length !== words.length) return { ok: false, code: 'no_alignment', inDictionary, total: job.keys.length };
  // A wrong transcript can still find a path: its words crammed into part of the speech and the rest
  // called silence. Most of what the detector hears as speech must lie inside the words.
  const speechCoverage = coverage(speechSpans(soundswallower, pcm), segments.map((x) => [x.b, x.b + x.d]));
  if (speechCoverage < job.minSpeechCoverage) return { ok: false, code: 'speech_not_covered', inDictionary, total: job.keys.length, speechCoverage };
  const times: Array<[number, number, number] | null> = [];
  let s = 0;
  for (let i = 0; i < job.keys.length; i++) {
    if (!known[i]) times.push(null);
    else {
      const seg = segments[s++];
      times.push([Math.round(seg.b * 1000) / 1000, Math.round((seg.b + seg.d) * 1000) / 1000, seg.p]);
    }
  }
  return { ok: true, times, inDictionary, total: job.keys.length, speechCoverage };
}

main().then(
  (out) => {
    process.stdout.write(`${JSON.stringify(out)}\n`, () => process.exit(0));
  },
  (err: Error) => {
    process.stderr.write(`${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);
