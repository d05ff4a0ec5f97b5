// The aligner's times for dictionary words → times for every written token. A token whose words
// the dictionary lacks (a name, a number in French, a symbol) gets the span between its aligned
// neighbours, shared by character count: it sits where it was said, give or take its neighbours.
import type { TimedToken } from './cues';
import type { Token } from './transcript';

export interface KeyTime {
  start: number;
  end: number;
}

/** Seconds per character a run of unaligned tokens is given at the very start or end of the audio. */
const EDGE_SECONDS_PER_CHAR = 0.07;

/** `keyTimes` holds, for each key of each token in order, its time or null when it was not aligned. */
export function timeTokens(tokens: Token[], keyTimes: Array<KeyTime | null>, duration: number): TimedToken[] {
  let k = 0;
  const spans: Array<KeyTime | null> = tokens.map((t) => {
    const times = keyTimes.slice(k, k + t.keys.length).filter((x): x is KeyTime => x !== null);
    k += t.keys.length;
    return times.length ? { start: times[0].start, end: times[times.length - 1].end } : null;
  });
  const out: TimedToken[] = tokens.map((t, i) => ({ ...t, start: spans[i]?.start ?? 0, end: spans[i]?.end ?? 0 }));
  for (let i = 0; i < tokens.length; ) {
    if (spans[i]) {
      i++;
      continue;
    }
    let j = i;
    while (j < tokens.length && !spans[j]) j++;
    const chars = tokens.slice(i, j).reduce((n, t) => n + t.text.length, 0) || 1;
    const prevEnd = i > 0 ? spans[i - 1]!.end : null;
    const nextStart = j < tokens.length ? spans[j]!.start : null;
    const from = prevEnd ?? Math.max(0, (nextStart ?? 0) - chars * EDGE_SECONDS_PER_CHAR);
    const to = nextStart ?? Math.min(Math.max(duration, from), from + chars * EDGE_SECONDS_PER_CHAR);
    let at = from;
    for (let x = i; x < j; x++) {
      const share = ((to - from) * tokens[x].text.length) / chars;
      out[x].start = at;
      out[x].end = at + share;
      at += share;
    }
    i = j;
  }
  return out;
}
