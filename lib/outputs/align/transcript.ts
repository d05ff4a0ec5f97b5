// A plain-text transcript (SPEC §14, captions by forced alignment) as the words a viewer reads and
// the dictionary words the aligner hears. Pure: no model is needed to tokenize.
import { numberWords } from './numbers';

export type AlignLanguage = 'en' | 'fr';

/** The acoustic model (inside the soundswallower package) for each language we align. */
export const ALIGN_MODELS: Record<AlignLanguage, string> = { en: 'en-us', fr: 'fr-fr' };

/** `en`, `en-GB`, `fr-CA` → the model's language; anything else is not supported. */
export function alignLanguage(tag: string): AlignLanguage | null {
  const base = tag.split('-')[0].toLowerCase();
  return base === 'en' || base === 'fr' ? base : null;
}

export interface Token {
  /** As written (punctuation kept): what the cue shows. */
  text: string;
  /** What the aligner looks up: lowercase dictionary words (a number or a hyphenated word gives several); [] for none. */
  keys: string[];
  /** The token ends a sentence (., !, ?, …, or a blank line after it) or a clause (, ; : — –). */
  ends: 'sentence' | 'clause' | null;
}

/** Longest token shown: longer runs (a URL, hostile input) are cut so every cue line can hold one. */
export const MAX_TOKEN_CHARS = 42;

const SENTENCE_END = /[.!?…。]["'”’»)\]]*$/;
const CLAUSE_END = /[,;:]["'”’»)\]]*$|^[—–-]+$/;
const FRENCH_ELISION = /^(l|d|j|qu|n|s|c|m|t|jusqu|lorsqu|puisqu)['’](.+)$/i;

/** Dictionary keys of one written word: lowercase letters, digits spelled out, hyphens and elisions split. */
export function wordKeys(word: string, lang: AlignLanguage): string[] {
  const lower = word.normalize('NFC').toLowerCase().replace(/’/g, "'");
  const out: string[] = [];
  for (const part of lower.split(/[-–—/]+/)) {
    const core = part.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    if (!core) continue;
    if (/^\d[\d,]*$/.test(core)) {
      if (lang === 'en') out.push(...numberWords(Number(core.replace(/,/g, ''))));
      else out.push(core); // not in the dictionary: interpolated
      continue;
    }
    const elided = lang === 'fr' ? FRENCH_ELISION.exec(core) : null;
    if (elided) out.push(`${elided[1]}'`, ...wordKeys(elided[2], lang));
    else out.push(core.replace(/[^\p{L}\p{N}']/gu, ''));
  }
  return out.filter(Boolean);
}

/** The transcript's tokens, in order; blank lines end sentences. */
export function tokenize(text: string, lang: AlignLanguage): Token[] {
  const tokens: Token[] = [];
  const paragraphs = text.replace(/\r\n?/g, '\n').split(/\n\s*\n/);
  for (const para of paragraphs) {
    const words = para.split(/\s+/).filter(Boolean);
    for (const raw of words) {
      const pieces: string[] = [];
      for (let i = 0; i < raw.length; i += MAX_TOKEN_CHARS) pieces.push(raw.slice(i, i + MAX_TOKEN_CHARS));
      pieces.forEach((text, i) => {
        const last = i === pieces.length - 1;
        tokens.push({
          text,
          keys: i === 0 ? wordKeys(raw, lang) : [],
          ends: !last ? null : SENTENCE_END.test(text) ? 'sentence' : CLAUSE_END.test(text) ? 'clause' : null,
        });
      });
    }
    if (tokens.length) tokens[tokens.length - 1].ends = 'sentence';
  }
  return tokens;
}
