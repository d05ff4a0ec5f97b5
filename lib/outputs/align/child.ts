// The forced aligner's own process (started by ./aligner.ts, never imported): soundswallower (a
// WebAssembly build of CMU PocketSphinx with its en-US and fr-FR acoustic models and dictionaries)
// aligns the transcript's dictionary words to 16 kHz mono float PCM, 30 s at a time (./windows.ts).
// Reads a job file named by argv[2], writes one JSON line to stdout. A crash or a kill is the
// parent's to report.
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { coverage, type Span } from './coverage';
import type { AlignJob, AlignOutput } from './protocol';
import { alignInWindows, type DecodeWindow } from './windows';

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

const RATE = 16000;

/**
 * Decoder settings. `ds: 2` scores the acoustic model on every other frame (the search still runs on
 * every frame): 30% less CPU, and the same median word-start error on the Festival talk (0.010 s;
 * 90th percentile 0.040 s against 0.030 s). Narrower beams and `topn` saved nothing measurable.
 */
const DECODER_CONFIG = { loglevel: 'FATAL', samprate: RATE, ds: 2 };

/** Fillers the decoder inserts between words (silence, breath, noise) and a grammar's empty steps. */
const FILLER = /^(<sil>|<s>|<\/s>|\[[A-Z]+\]|\+\+.*\+\+|\(NULL\))$/;

function decoderFor(decoder: Decoder, pcm: Float32Array, words: string[]): DecodeWindow {
  return ({ from, to, first, count, mode }) => {
    if (count <= 0 || to - from < 0.1) return null;
    const slice = words.slice(first, first + count);
    decoder.set_align_text(slice.join(' '));
    decoder.start();
    decoder.process_audio(pcm.subarray(Math.round(from * RATE), Math.round(to * RATE)), false, true);
    let segments: Segment[] | undefined;
    // A prefix is the best path so far, read before the end of the utterance demands the last word.
    if (mode === 'prefix') segments = decoder.get_alignment().w;
    decoder.stop();
    if (mode !== 'prefix') segments = decoder.get_alignment().w;
    const got = (segments ?? []).filter((s) => !FILLER.test(s.t));
    if (got.length === 0 || got.length > count || (mode === 'all' && got.length !== count)) return null;
    return got.map((s) => ({ start: Math.round((from + s.b) * 1000) / 1000, end: Math.round((from + s.b + s.d) * 1000) / 1000, p: Math.round(s.p * 1000) / 1000 }));
  };
}

/** Where the audio holds speech, by the package's voice activity detector (WebRTC's, most aggressive mode). */
function speechSpans(soundswallower: Module, pcm: Float32Array): Span[] {
  const ep = new soundswallower.Endpointer({ samprate: RATE, mode: 3 });
  const size = ep.get_frame_size();
  const spans: Span[] = [];
  let inSpeech = false;
  for (let at = 0; at + size <= pcm.length; at += size) {
    ep.process(pcm.subarray(at, at + size));
    const now = ep.get_in_speech();
    if (now && !inSpeech) spans.push([ep.get_speech_start(), Infinity]);
    if (!now && inSpeech) spans[spans.length - 1][1] = ep.get_speech_end();
    inSpeech = now;
  }
  if (inSpeech) spans[spans.length - 1][1] = pcm.length / RATE;
  return spans;
}

async function main(): Promise<AlignOutput> {
  const job: AlignJob = JSON.parse(await fs.readFile(process.argv[2], 'utf8'));
  const entry = require.resolve('soundswallower');
  const soundswallower = await (await importEsm(pathToFileURL(entry).href)).default({ modelBase: `${path.join(path.dirname(entry), 'model')}/`, defaultModel: job.model });
  const decoder = new soundswallower.Decoder(DECODER_CONFIG);
  await decoder.initialize();

  const known = job.keys.map((k) => Boolean(k) && !/\s/.test(k) && decoder.lookup_word(k) !== null);
  const inDictionary = known.filter(Boolean).length;
  if (inDictionary === 0 || inDictionary < job.keys.length * job.minKnownRatio) {
    return { ok: false, code: 'transcript_not_in_dictionary', inDictionary, total: job.keys.length };
  }
  const words = job.keys.filter((_, i) => known[i]);
  const bytes = await fs.readFile(job.pcm);
  const pcm = new Float32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.length / 4));
  const cpu = process.cpuUsage();
  const { words: placed, windows } = alignInWindows(decoderFor(decoder, pcm, words), words.length, pcm.length / RATE);
  const used = process.cpuUsage(cpu);
  const cpuMs = Math.round((used.user + used.system) / 1000);
  if (!placed) return { ok: false, code: 'no_alignment', inDictionary, total: job.keys.length, windows, cpuMs };
  // A wrong transcript can still find a path: its words crammed into part of the speech and the rest
  // called silence. Most of what the detector hears as speech must lie inside the words.
  const speechCoverage = coverage(speechSpans(soundswallower, pcm), placed.map((w): Span => [w.start, w.end]));
  if (speechCoverage < job.minSpeechCoverage) return { ok: false, code: 'speech_not_covered', inDictionary, total: job.keys.length, speechCoverage, windows, cpuMs };
  let s = 0;
  const times = known.map((k): [number, number, number] | null => (k ? [placed[s].start, placed[s].end, placed[s++].p] : null));
  return { ok: true, times, inDictionary, total: job.keys.length, speechCoverage, windows, cpuMs };
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
