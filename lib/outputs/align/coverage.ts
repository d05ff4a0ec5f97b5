// How much of the speech the voice-activity detector hears lies inside the aligned words: a wrong
// transcript can still find a path (its words crammed into part of the speech, the rest called
// silence), the right one covers nearly all of it. Pure.

export type Span = [number, number];

/** The share of the detected speech that falls inside aligned words (1 when there is no speech to cover). */
export function coverage(speech: Span[], words: Span[]): number {
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
