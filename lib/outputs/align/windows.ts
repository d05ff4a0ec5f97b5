// Progressive alignment in windows (issue 37). One decode of the whole audio against the whole
// transcript costs more per minute the longer it is: PocketSphinx's grammar search does work for
// every state of the grammar on every frame, so the cost is frames × words (measured: 25 s of audio
// against its 71 words, 0.37 s per 25 s of audio; the same 25 s against 568 words, 0.64 s). Here
// the audio is decoded 30 s at a time against only the words that can be in it, so every window
// costs about the same and the whole is linear in the length.
//
// A window [t, t + 30 s) is decoded against the next words — more than it can hold — and the
// decoder's best path at the window's end is read before the end of the utterance demands the last
// word: a prefix of them. Words that end at least a guard's length before the window's end were
// decoded with all the context they need (they come out as one pass over the whole places them) and
// are kept; the next window starts where the last kept word ends. The last window (what remains)
// must place every remaining word, as one pass would; if it cannot, the window before it is undone
// and the two are decoded as one (a wider window). Pure: the decoder is passed in.

export interface WordTime {
  start: number;
  end: number;
  /** The decoder's posterior probability of the word. */
  p: number;
}

/**
 * Decode `count` dictionary words starting at `first` over the audio [from, to) (seconds). `prefix`:
 * the best path at the end of the audio through the first words (a prefix of them, any length);
 * `all`: every word, from start to end. Times are absolute; null when no path exists.
 */
export type DecodeWindow = (w: { from: number; to: number; first: number; count: number; mode: 'prefix' | 'all' }) => WordTime[] | null;

export interface WindowOptions {
  /** Audio per window (seconds). */
  seconds: number;
  /** Words ending this close to a window's end are decoded again in the next window. */
  guardSeconds: number;
  /**
   * Each window starts this far before the cursor, at a word already placed, and decodes the words
   * since again as its lead-in: a window that began right at a word boundary followed by 40 s of
   * noise stretched its first word over the noise (measured: "and" from 24.4 s, said at 65.0 s;
   * with the lead-in, 64.9 s, as one pass).
   */
  leadInSeconds: number;
  /**
   * The last words of a window's path are never kept, however early they end: nothing after them
   * pins them down (the path may end in a word matched to music, then filler to the window's end).
   */
  tailWords: number;
  /** A window gets `slack` times the words the remaining average rate puts in it, plus `extraWords`. */
  slack: number;
  extraWords: number;
  /** How many times a failed last window may be widened by undoing the window before it. */
  maxBackoffs: number;
}

/** Chosen on the Festival talk and LibriVox (docs/outputs.md): the same word times as one pass. */
export const WINDOWS: WindowOptions = { seconds: 30, guardSeconds: 6, leadInSeconds: 10, tailWords: 3, slack: 1.5, extraWords: 20, maxBackoffs: 2 };

export interface Progress {
  /** Every word placed, in order; null when the last window found no path for the remaining words. */
  words: WordTime[] | null;
  /** Windows decoded, and how many of them were decodes again with a wider window or more words. */
  windows: number;
  retries: number;
}

/** Aligns `total` dictionary words to the audio [0, duration) window by window. */
export function alignInWindows(decode: DecodeWindow, total: number, duration: number, opts: WindowOptions = WINDOWS): Progress {
  const out: WordTime[] = [];
  const commits: number[] = []; // out.length before each window's words were added
  let t = 0; // the cursor: the audio before it is done
  let windows = 0;
  let retries = 0;
  let backoffs = 0;

  /** The decode with its lead-in: the words placed since `lead` again, then `count` new ones; the new ones back, or null. */
  const decodeAfter = (to: number, count: number, mode: 'prefix' | 'all'): WordTime[] | null => {
    let lead = out.length;
    while (lead > 0 && out[lead - 1].start >= t - opts.leadInSeconds) lead--;
    const again = out.length - lead;
    const got = decode({ from: lead < out.length ? out[lead].start : t, to, first: lead, count: again + count, mode });
    return got && got.length > again ? got.slice(again) : null;
  };

  while (out.length < total) {
    let win = opts.seconds;
    let more = 1;
    for (;;) {
      const left = total - out.length;
      const remaining = duration - t;
      windows++;
      if (win >= remaining - opts.guardSeconds) {
        // The last window: every remaining word over all the remaining audio.
        const got = decodeAfter(duration, left, 'all');
        if (got && got.length === left) {
          out.push(...got);
          return { words: out, windows, retries };
        }
        const back = commits.pop();
        if (back === undefined || backoffs >= opts.maxBackoffs) return { words: null, windows, retries };
        backoffs++;
        retries++;
        out.length = back;
        t = back === 0 ? 0 : out[back - 1].end;
        win = Infinity;
        continue;
      }
      const rate = left / Math.max(1, remaining);
      const count = Math.min(left, Math.ceil(rate * win * opts.slack * more) + opts.extraWords * more);
      const got = decodeAfter(t + win, count, 'prefix');
      if (got && got.length >= count && count < left) {
        // Every word was used before the window's end: there may be more speech than words given.
        more *= 2;
        retries++;
        continue;
      }
      const keep = (got ?? []).slice(0, Math.max(0, (got?.length ?? 0) - opts.tailWords)).filter((w) => w.end <= t + win - opts.guardSeconds);
      if (keep.length === 0) {
        // Nothing certain in this window (a long pause, music): look further.
        win *= 2;
        retries++;
        continue;
      }
      commits.push(out.length);
      out.push(...keep);
      t = keep[keep.length - 1].end;
      break;
    }
  }
  return { words: out, windows, retries };
}
