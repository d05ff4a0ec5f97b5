import assert from 'node:assert/strict';
import { WebVTTParser } from 'webvtt-parser';
import { buildCues, MAX_CUE_SECONDS, MAX_LINE_CHARS, type TimedToken, toWebVtt, wrap } from '../../lib/outputs/align/cues';
import { numberWords } from '../../lib/outputs/align/numbers';
import { timeTokens } from '../../lib/outputs/align/timing';
import { alignLanguage, tokenize, wordKeys } from '../../lib/outputs/align/transcript';

/** Tokens said one after another, `rate` seconds a word, with an optional pause after some indices. */
function said(text: string, rate = 0.3, pauses: Record<number, number> = {}): TimedToken[] {
  let t = 0;
  return tokenize(text, 'en').map((tok, i) => {
    const start = t;
    t += rate;
    const out = { ...tok, start, end: t };
    t += pauses[i] ?? 0;
    return out;
  });
}

describe('Unit: captions from a transcript (issue 37)', () => {
  it('tokenizes: punctuation kept for display, dictionary keys lowercased, numbers spelled out, sentence and clause ends', () => {
    const t = tokenize('Hello, World! It costs $42 — well... cold-hearted.\n\nNew paragraph', 'en');
    assert.deepEqual(t.map((x) => x.text), ['Hello,', 'World!', 'It', 'costs', '$42', '—', 'well...', 'cold-hearted.', 'New', 'paragraph']);
    assert.deepEqual(t.map((x) => x.keys), [['hello'], ['world'], ['it'], ['costs'], ['forty', 'two'], [], ['well'], ['cold', 'hearted'], ['new'], ['paragraph']]);
    assert.deepEqual(t.map((x) => x.ends), ['clause', 'sentence', null, null, null, 'clause', 'sentence', 'sentence', null, 'sentence']);
    assert.deepEqual(wordKeys("l'homme", 'fr'), ["l'", 'homme']);
    assert.deepEqual(wordKeys("Don't", 'en'), ["don't"]);
    assert.deepEqual([alignLanguage('en'), alignLanguage('en-GB'), alignLanguage('fr-CA'), alignLanguage('de'), alignLanguage('es-419')], ['en', 'en', 'fr', null, null]);
  });

  it('cuts a word too long for a line into pieces a cue can hold', () => {
    const t = tokenize(`see ${'x'.repeat(100)} now`, 'en');
    assert.deepEqual(t.map((x) => x.text.length), [3, 42, 42, 16, 3]);
    assert.ok(t.every((x) => x.text.length <= MAX_LINE_CHARS));
  });

  it('reads numbers as people say them', () => {
    assert.deepEqual(numberWords(0), ['zero']);
    assert.deepEqual(numberWords(42), ['forty', 'two']);
    assert.deepEqual(numberWords(1999), ['nineteen', 'ninety', 'nine']);
    assert.deepEqual(numberWords(2024), ['two', 'thousand', 'twenty', 'four']);
    assert.deepEqual(numberWords(3500), ['three', 'thousand', 'five', 'hundred']);
    assert.deepEqual(numberWords(1_000_001), ['one', 'million', 'one']);
  });

  it('wraps onto two balanced lines of at most 42 characters, preferring a break after punctuation', () => {
    assert.deepEqual(wrap(tokenize('A short line.', 'en')), ['A short line.']);
    const two = wrap(tokenize('The speaker reads the text, and the aligner finds each word in it', 'en'));
    assert.deepEqual(two, ['The speaker reads the text,', 'and the aligner finds each word in it']);
    assert.equal(wrap(tokenize('word '.repeat(20), 'en')), null, 'more than two lines');
  });

  it('builds cues of at most 2 lines × 42 characters and 7 s, one sentence per cue, cut at clauses, never across a long pause', () => {
    const text = [
      'Welcome to the studio.',
      'Today we talk about forced alignment, a way to time captions from a script that a creator already has, which is most of them.',
      'Short.',
      'After a pause this starts again.',
    ].join(' ');
    const tokens = said(text, 0.3, { 21: 2 });
    const cues = buildCues(tokens);
    const texts = cues.map((c) => c.lines.join(' | '));
    assert.equal(texts[0], 'Welcome to the studio.');
    for (const c of cues) {
      assert.ok(c.lines.length <= 2 && c.lines.every((l) => l.length <= MAX_LINE_CHARS), JSON.stringify(c));
      assert.ok(c.end - c.start <= MAX_CUE_SECONDS + 1e-9, JSON.stringify(c));
    }
    for (let i = 1; i < cues.length; i++) assert.ok(cues[i].start >= cues[i - 1].end, 'no overlap');
    // The long sentence is cut after a comma, not in the middle of a clause.
    const long = cues.filter((c) => c.lines.join(' ').startsWith('Today') || c.start > 1.2).map((c) => c.lines.join(' '));
    assert.ok(long.some((l) => /,$/.test(l)), JSON.stringify(texts));
    // The 2 s pause after the 22nd word (index 21) starts a new cue.
    const pauseAt = tokens[22].start;
    assert.ok(cues.some((c) => Math.abs(c.start - pauseAt) < 1e-9), JSON.stringify(cues));
    assert.ok(texts.includes('Short.'));
    // Every word is shown once, in order.
    assert.equal(cues.map((c) => c.lines.join(' ')).join(' '), tokens.map((t) => t.text).join(' '));
  });

  it('holds a very short cue up to a second, without running into the next one', () => {
    const cues = buildCues(said('Yes. No. Maybe so.', 0.2, { 0: 0.3 }));
    assert.equal(cues[0].start, 0);
    assert.ok(Math.abs(cues[0].end - cues[1].start) < 1e-9, 'held until the next cue');
    assert.ok(cues[cues.length - 1].end - cues[cues.length - 1].start >= 1 - 1e-9);
  });

  it('writes WebVTT the W3C parser accepts, with markup characters escaped', () => {
    const vtt = toWebVtt(buildCues(said('Use <b> & --> arrows. Then stop.')));
    const tree = new WebVTTParser().parse(vtt, 'subtitles');
    assert.deepEqual(tree.errors, []);
    assert.equal(tree.cues.length, 2);
    assert.match(vtt, /Use &lt;b&gt; &amp; --&gt; arrows\./);
  });

  it('places words the dictionary lacks between their aligned neighbours, by length', () => {
    const tokens = tokenize('hello Zorblax Quux world', 'en');
    // Keys: hello, zorblax, quux, world; only the first and last were aligned.
    const timed = timeTokens(tokens, [{ start: 1, end: 1.5 }, null, null, { start: 3, end: 3.4 }], 10);
    // The 1.5 s gap is shared by characters: Zorblax 7 of 11, Quux 4 of 11.
    const split = 1.5 + (1.5 * 7) / 11;
    assert.deepEqual(timed.map((t) => [t.text, +t.start.toFixed(3), +t.end.toFixed(3)]), [
      ['hello', 1, 1.5],
      ['Zorblax', 1.5, +split.toFixed(3)],
      ['Quux', +split.toFixed(3), 3],
      ['world', 3, 3.4],
    ]);
    // At the very start or end there is one neighbour only: the run sits right before / after it.
    const edge = timeTokens(tokenize('Zorblax hello', 'en'), [null, { start: 2, end: 2.5 }], 10);
    assert.ok(edge[0].end === 2 && edge[0].start < 2 && edge[0].start >= 0);
  });
});
