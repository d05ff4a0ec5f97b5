// Timed words → WebVTT cues a viewer can read (SPEC §14): at most 2 lines of at most 42 characters,
// at most 7 seconds each, split where the text pauses (sentence, then clause boundaries), never across
// a long silence. Pure; the numbers are the usual broadcast rules (BBC, Netflix timed-text guides).
import type { Token } from './transcript';

export const MAX_LINE_CHARS = 42;
export const MAX_LINES = 2;
export const MAX_CUE_SECONDS = 7;
/** A silence at least this long between two words always starts a new cue. */
export const PAUSE_SECONDS = 1.2;
/** A cue shorter than this is held on screen longer, up to the next cue. */
export const MIN_CUE_SECONDS = 1;

export interface TimedToken extends Token {
  start: number;
  end: number;
}

export interface Cue {
  start: number;
  end: number;
  lines: string[];
}

const len = (words: string[]) => words.reduce((n, w) => n + w.length, 0) + Math.max(0, words.length - 1);

/** The words on at most two lines of ≤ 42 characters (balanced, preferring a break after punctuation), or null. */
export function wrap(tokens: Array<Pick<Token, 'text' | 'ends'>>): string[] | null {
  const words = tokens.map((t) => t.text);
  if (len(words) <= MAX_LINE_CHARS) return [words.join(' ')];
  let best: { at: number; score: number } | null = null;
  for (let at = 1; at < words.length; at++) {
    const a = len(words.slice(0, at));
    const b = len(words.slice(at));
    if (a > MAX_LINE_CHARS || b > MAX_LINE_CHARS) continue;
    const score = Math.abs(a - b) - (tokens[at - 1].ends ? 12 : 0);
    if (!best || score < best.score) best = { at, score };
  }
  return best ? [words.slice(0, best.at).join(' '), words.slice(best.at).join(' ')] : null;
}

function fits(tokens: TimedToken[]): boolean {
  if (tokens.length <= 1) return true;
  return tokens[tokens.length - 1].end - tokens[0].start <= MAX_CUE_SECONDS && wrap(tokens) !== null;
}

/** Where to cut a cue that cannot take its next word: after its last clause/sentence end past a third of it, else whole. */
function cutPoint(cur: TimedToken[]): number {
  const total = len(cur.map((t) => t.text));
  for (let k = cur.length - 1; k >= 1; k--) {
    if (cur[k - 1].ends && len(cur.slice(0, k).map((t) => t.text)) >= total / 3) return k;
  }
  return cur.length;
}

/** Groups timed words into cues, in order, without overlaps. */
export function buildCues(tokens: TimedToken[]): Cue[] {
  const groups: TimedToken[][] = [];
  let cur: TimedToken[] = [];
  for (const t of tokens) {
    const last = cur[cur.length - 1];
    if (last && t.start - last.end >= PAUSE_SECONDS) {
      groups.push(cur);
      cur = [];
    }
    while (cur.length && !fits([...cur, t])) {
      const k = cutPoint(cur);
      groups.push(cur.slice(0, k));
      cur = cur.slice(k);
    }
    cur.push(t);
    if (t.ends === 'sentence') {
      groups.push(cur);
      cur = [];
    }
  }
  if (cur.length) groups.push(cur);

  const cues: Cue[] = groups.map((g) => ({ start: g[0].start, end: g[g.length - 1].end, lines: wrap(g) ?? [g.map((t) => t.text).join(' ')] }));
  for (let i = 0; i < cues.length; i++) {
    const c = cues[i];
    const next = cues[i + 1]?.start ?? Infinity;
    if (c.end - c.start < MIN_CUE_SECONDS) c.end = Math.min(c.start + MIN_CUE_SECONDS, Math.max(next, c.end));
    c.end = Math.min(c.end, next, c.start + MAX_CUE_SECONDS);
    if (c.end <= c.start) c.end = c.start + 0.001;
  }
  return cues;
}

function timestamp(seconds: number): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor(ms / 60_000) % 60;
  const s = Math.floor(ms / 1000) % 60;
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(h)}:${pad(m)}:${pad(s)}.${pad(ms % 1000, 3)}`;
}

const escapeText = (line: string) => line.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The cues as a WebVTT file. */
export function toWebVtt(cues: Cue[]): string {
  const body = cues.map((c, i) => `${i + 1}\n${timestamp(c.start)} --> ${timestamp(c.end)}\n${c.lines.map(escapeText).join('\n')}\n`);
  return ['WEBVTT', '', ...body].join('\n');
}
