import assert from 'node:assert/strict';
import { alignInWindows, type DecodeWindow, WINDOWS, type WordTime } from '../../lib/outputs/align/windows';

/** Words said at known times: `n` words, one every 0.4 s (0.3 s long), after `lead` seconds, with an optional pause. */
function speech(n: number, lead = 1, pause?: { after: number; seconds: number }): WordTime[] {
  const out: WordTime[] = [];
  let t = lead;
  for (let i = 0; i < n; i++) {
    out.push({ start: t, end: t + 0.3, p: 1 });
    t += 0.4 + (pause && i === pause.after ? pause.seconds : 0);
  }
  return out;
}

/**
 * A decoder that hears exactly `truth`: a prefix is every asked-for word said inside the audio,
 * the one being said at its end stretched to it (as PocketSphinx's partial path is); `all` places
 * every word or none. Records what it was asked.
 */
function perfect(truth: WordTime[], fail?: (w: Parameters<DecodeWindow>[0]) => boolean) {
  const calls: Array<Parameters<DecodeWindow>[0]> = [];
  const decode: DecodeWindow = (w) => {
    calls.push(w);
    if (fail?.(w)) return null;
    const words = truth.slice(w.first, w.first + w.count);
    if (w.mode === 'all') return words.every((x) => x.start >= w.from && x.end <= w.to) ? words : null;
    const out: WordTime[] = [];
    for (const x of words) {
      if (x.start >= w.to) break;
      out.push(x.end <= w.to ? x : { ...x, end: w.to });
    }
    return out.length ? out : null;
  };
  return { decode, calls };
}

describe('Unit: alignment in windows (issue 37)', () => {
  it('places every word where it is said, each window decoding a bounded slice of the words however long the audio', () => {
    const truth = speech(1500); // 10 minutes
    const duration = truth[truth.length - 1].end + 1;
    const { decode, calls } = perfect(truth);
    const r = alignInWindows(decode, truth.length, duration);
    assert.deepEqual(r.words, truth);
    const longest = Math.max(...calls.map((c) => c.count));
    const audio = Math.max(...calls.map((c) => c.to - c.from));
    console.log(`      ${r.windows} windows for ${(duration / 60).toFixed(1)} min; at most ${longest} words and ${audio.toFixed(0)} s of audio a decode`);
    assert.ok(longest < 200, `a decode of ${longest} words`);
    assert.ok(audio <= WINDOWS.seconds + WINDOWS.leadInSeconds + 1);
    assert.ok(r.windows < duration / 15, `${r.windows} windows`);
    // Each window after the first starts a lead-in before the cursor, at a word already placed.
    for (const c of calls.slice(1)) assert.ok(truth.some((x) => x.start === c.from), `window from ${c.from}`);
  });

  it('looks further across a 75 s pause (a window with nothing certain is widened)', () => {
    const truth = speech(300, 1, { after: 120, seconds: 75 });
    const { decode, calls } = perfect(truth);
    const r = alignInWindows(decode, truth.length, truth[truth.length - 1].end + 1);
    assert.deepEqual(r.words, truth);
    assert.ok(r.retries >= 1, 'a window with nothing certain was widened');
    assert.ok(calls.some((c) => c.to - c.from > WINDOWS.seconds + WINDOWS.leadInSeconds));
  });

  it('undoes the window before a last window that finds no path, and decodes the two as one; gives up after two', () => {
    const truth = speech(400);
    const duration = truth[truth.length - 1].end + 1;
    // The last window fails unless it starts at least 40 s before the end.
    const { decode, calls } = perfect(truth, (w) => w.mode === 'all' && w.from > duration - 40);
    const r = alignInWindows(decode, truth.length, duration);
    assert.deepEqual(r.words, truth);
    assert.ok(calls.filter((c) => c.mode === 'all').length >= 2);

    const never = perfect(truth, (w) => w.mode === 'all');
    const none = alignInWindows(never.decode, truth.length, duration);
    assert.equal(none.words, null);
    assert.equal(never.calls.filter((c) => c.mode === 'all').length, 1 + WINDOWS.maxBackoffs);
  });

  it('gives a window more words when it used all it was given', () => {
    // 600 words in the first minute, then 100 slow ones over three minutes: the average rate undercounts the first windows.
    const fast = Array.from({ length: 600 }, (_, i): WordTime => ({ start: 0.5 + i * 0.1, end: 0.5 + i * 0.1 + 0.08, p: 1 }));
    const slow = Array.from({ length: 100 }, (_, i): WordTime => ({ start: 62 + i * 2, end: 62 + i * 2 + 0.3, p: 1 }));
    const truth = [...fast, ...slow];
    const { decode } = perfect(truth);
    const r = alignInWindows(decode, truth.length, truth[truth.length - 1].end + 1);
    assert.deepEqual(r.words, truth);
    assert.ok(r.retries >= 1);
  });
});
