// What ./aligner.ts and its child process (./child.ts) say to each other.

export interface AlignJob {
  /** 16 kHz mono 32-bit float PCM, little-endian. */
  pcm: string;
  /** A model directory inside the soundswallower package: en-us, fr-fr. */
  model: string;
  /** The transcript's dictionary words, in order. */
  keys: string[];
  /** Fail unless at least this share of the words is in the dictionary (a transcript in another language is not). */
  minKnownRatio: number;
  /** Fail unless at least this share of the detected speech lies inside aligned words. */
  minSpeechCoverage: number;
}

/** `windows`: audio windows decoded (lib/outputs/align/windows.ts); `cpuMs`: the CPU time they took (not the model's loading). */
export type AlignOutput =
  /** `times[i]`: [start, end, posterior] of keys[i] in seconds, or null when the dictionary lacks it. */
  | { ok: true; times: Array<[number, number, number] | null>; inDictionary: number; total: number; speechCoverage: number; windows: number; cpuMs: number }
  | { ok: false; code: 'transcript_not_in_dictionary' | 'no_alignment' | 'speech_not_covered'; inDictionary: number; total: number; speechCoverage?: number; windows?: number; cpuMs?: number };

/**
 * When a transcript is taken not to belong to the audio. Measured (test/outputs/aligner.test.ts):
 * the right transcript covers 90–100% of the detected speech, a wrong English one about a third.
 */
export const ALIGN_THRESHOLDS = { minKnownRatio: 0.5, minSpeechCoverage: 0.6 } as const;
