/**
 * Vale's `capitalization` rule's `$title` and `$sentence` (internal/check/variables.go): the text
 * converted to the expected case, and whether enough of its words (`threshold`, default 0.8)
 * already are. The converters follow AP and Chicago title case and sentence case as Vale's
 * strcase library does, in simpler form: exceptions (the rule's and the vocabulary's) are kept
 * as written, and so are words in capitals (acronyms).
 */

/** Articles, conjunctions and prepositions of up to three letters: lower case in AP titles. */
const AP_MINOR = new Set(
  'a an the and but for nor or so yet as at by for in of off on per to up via vs vs. v.'.split(' '),
);

/** Chicago also lowercases every preposition, whatever its length. */
const CHICAGO_MINOR = new Set([
  ...AP_MINOR,
  ...'about above across after against along amid among around before behind below beneath beside besides between beyond despite down during except from inside into like near onto opposite out outside over past since than through throughout till toward towards under underneath unlike until upon with within without'.split(
    ' ',
  ),
]);

const WORD = /[\p{N}\p{L}*]+\S*/gu;

const capFirst = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);
const isCapitals = (word: string) => /\p{L}/u.test(word) && word === word.toUpperCase() && word.length > 1;

export interface CaseOptions {
  /** Words kept as written (the rule's `exceptions` and the accepted vocabulary). */
  exceptions: Set<string>;
  /** Whether a word matches an exception pattern (Vale's regular-expression exceptions). */
  excepted(word: string): boolean;
  threshold: number;
}

/** The title-case form of `text` by AP (default) or Chicago style. */
export function toTitle(text: string, style: 'AP' | 'Chicago', options: CaseOptions): string {
  const minor = style === 'Chicago' ? CHICAGO_MINOR : AP_MINOR;
  const words = [...text.matchAll(WORD)];
  return replaceWords(text, words, (word, i) => {
    if (options.exceptions.has(word) || isCapitals(word)) return word;
    const bare = word.toLowerCase().replace(/[^\p{L}.]+$/u, '');
    if (i !== 0 && i !== words.length - 1 && minor.has(bare)) return word.toLowerCase();
    return capFirst(word);
  });
}

/** The sentence-case form of `text`: the first word (and one after a colon) capitalised, the rest lower. */
export function toSentence(text: string, options: CaseOptions): string {
  const words = [...text.matchAll(WORD)];
  return replaceWords(text, words, (word, i) => {
    if (options.exceptions.has(word) || isCapitals(word)) return word;
    const afterColon = i > 0 && /:\s*$/.test(text.slice(0, words[i]!.index));
    if (i === 0 || afterColon) return capFirst(word);
    return word.toLowerCase();
  });
}

function replaceWords(
  text: string,
  words: RegExpMatchArray[],
  convert: (word: string, i: number) => string,
): string {
  let out = '';
  let last = 0;
  words.forEach((match, i) => {
    out += text.slice(last, match.index) + convert(match[0], i);
    last = match.index! + match[0].length;
  });
  return out + text.slice(last);
}

/** Vale's title(): words as expected, excepted or in capitals count; enough of them pass. */
export function titleMatches(text: string, expected: string, options: CaseOptions): boolean {
  const actual = [...text.matchAll(WORD)].map((m) => m[0]);
  const wanted = [...expected.matchAll(WORD)].map((m) => m[0]);
  if (actual.length === 0) return true;
  const passing = actual.filter(
    (word, i) =>
      i >= wanted.length || word === wanted[i] || options.excepted(word) || word === word.toUpperCase(),
  ).length;
  return passing / actual.length >= options.threshold;
}

/** Vale's sentence(): as title(), but a first word that is not capitalised fails outright. */
export function sentenceMatches(text: string, expected: string, options: CaseOptions): boolean {
  const actual = [...text.matchAll(WORD)].map((m) => m[0]);
  const wanted = [...expected.matchAll(WORD)].map((m) => m[0]);
  if (actual.length === 0) return true;
  let passing = 0;
  for (const [i, word] of actual.entries()) {
    if (i >= wanted.length || word === wanted[i] || options.excepted(word)) passing++;
    else if (i === 0 && word !== capFirst(word.toLowerCase())) return false;
  }
  return passing / actual.length >= options.threshold;
}
