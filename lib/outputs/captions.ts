// Caption files (SPEC §14): validated by the W3C's WebVTT parser (webvtt-parser), which reports
// every error with its line; SRT is converted line for line first so its lines keep their numbers.
import { WebVTTParser } from 'webvtt-parser';

export type CaptionFormat = 'vtt' | 'srt';

export interface CaptionProblem {
  line: number;
  message: string;
}

export type ParsedCaptions = { ok: true; vtt: string; cues: number; endSeconds: number } | { ok: false; problem: CaptionProblem };

const SRT_TIMING = /^(\s*\d{1,2}:\d{2}:\d{2})[,.](\d{3}\s*-->\s*\d{1,2}:\d{2}:\d{2})[,.](\d{3})(.*)$/;
const SRT_HEADER_LINES = 2;

/** `en`, `pt-BR`, `zh-Hant-TW`, … in their canonical case; null for anything that is not a BCP-47 tag. */
export function canonicalLanguage(tag: string): string | null {
  if (!/^[A-Za-z0-9-]{2,35}$/.test(tag)) return null;
  try {
    const [canonical] = Intl.getCanonicalLocales(tag);
    return canonical ?? null;
  } catch {
    return null;
  }
}

/** SRT → WebVTT: a header, and `,` → `.` in timings; nothing else moves, so line n is line n + 2. */
export function srtToVtt(srt: string): string {
  const lines = srt.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  const body = lines.map((l) => {
    const m = SRT_TIMING.exec(l);
    if (!m) return l;
    const pad = (t: string) => t.replace(/^(\s*)(\d):/, '$10$2:');
    return `${pad(m[1])}.${m[2].replace(/(-->\s*)(\d):/, '$10$2:')}.${m[3]}${m[4]}`;
  });
  return ['WEBVTT', '', ...body].join('\n');
}

// Cue markup nests (<b><i>…</i></b>); the parser walks it recursively, so 10,000 levels overflow
// its stack (issue 22). Real captions nest two or three deep.
export const MAX_MARKUP_DEPTH = 32;
const TAG = /<(\/?)[a-z][^>\s.]*[^>]*>/gi;

/** The first line (1-based, of `vtt`) whose cue markup nests deeper than MAX_MARKUP_DEPTH, or 0. */
function tooDeep(vtt: string): number {
  let depth = 0;
  const lines = vtt.split(/\r\n|\r|\n/);
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() === '') depth = 0; // a blank line ends a cue, and any markup it left open
    for (const m of lines[i].matchAll(TAG)) {
      depth = m[1] ? Math.max(0, depth - 1) : depth + 1;
      if (depth > MAX_MARKUP_DEPTH) return i + 1;
    }
  }
  return 0;
}

/** Validates a caption file and returns it as WebVTT; the first error names its line in the file as sent. */
export function parseCaptions(text: string, format: CaptionFormat): ParsedCaptions {
  const vtt = format === 'srt' ? srtToVtt(text) : text.replace(/^\uFEFF/, '');
  const offset = format === 'srt' ? SRT_HEADER_LINES : 0;
  if (format === 'srt' && text.trim() === '') return { ok: false, problem: { line: 1, message: 'The SRT file is empty' } };
  const deep = tooDeep(vtt);
  if (deep) return { ok: false, problem: { line: Math.max(1, deep - offset), message: `Cue markup nests more than ${MAX_MARKUP_DEPTH} tags deep` } };
  let tree: ReturnType<WebVTTParser['parse']>;
  try {
    tree = new WebVTTParser().parse(vtt, 'subtitles');
  } catch (err) {
    // Whatever else the parser cannot take is the file's fault, not a 500.
    return { ok: false, problem: { line: 1, message: `The file could not be parsed (${(err as Error).name})` } };
  }
  const first = tree.errors[0];
  if (first) return { ok: false, problem: { line: Math.max(1, (first.line ?? 1) - offset), message: first.message } };
  const endSeconds = tree.cues.reduce((max, c) => Math.max(max, c.endTime), 0);
  return { ok: true, vtt: vtt.endsWith('\n') ? vtt : `${vtt}\n`, cues: tree.cues.length, endSeconds };
}
