/**
 * Markdown inline links found in time linear in the text, whatever it holds: pages come from
 * repositories and models, and a regular expression for `[text](url)` backtracks quadratically
 * on a long run of `[` (50 KB of them took seconds). Also a line lookup for match offsets.
 */

/** Longest link text and destination looked at; longer ones are not links here. */
const MAX_TEXT = 1_000;
const MAX_DESTINATION = 2_000;

export interface InlineLink {
  /** The destination, without angle brackets. */
  url: string;
  /** Offset of the link's `[` (or `!` of an image). */
  index: number;
  image: boolean;
}

/** `[text](url "title")` and `![alt](url)` links of `text` (code spans already blanked). */
export function findInlineLinks(text: string): InlineLink[] {
  const links: InlineLink[] = [];
  // Each search for a `[` stops where the previous `](` was, so the text is read back once in all.
  let floor = 0;
  for (let at = text.indexOf(']('); at >= 0; at = text.indexOf('](', at + 1)) {
    const open = openingBracket(text, at, floor);
    floor = at + 1;
    if (open < 0) continue;
    const url = destination(text, at + 2);
    if (url === null) continue;
    const image = open > 0 && text[open - 1] === '!';
    links.push({ url, index: image ? open - 1 : open, image });
  }
  return links;
}

/** The `[` that `]` at `close` ends (one level of nesting), not before `floor`, or -1. */
function openingBracket(text: string, close: number, floor: number): number {
  let depth = 0;
  for (let i = close - 1; i >= floor && close - i <= MAX_TEXT; i--) {
    const c = text[i];
    if (c === ']') depth++;
    else if (c === '[') {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

/** The destination starting at `start` (after `(`) when a `)` ends the link, else null. */
function destination(text: string, start: number): string | null {
  let i = start;
  while (text[i] === ' ' || text[i] === '\t' || text[i] === '\n') i++;
  let url: string;
  if (text[i] === '<') {
    const end = text.indexOf('>', i);
    if (end < 0 || end - i > MAX_DESTINATION || text.slice(i, end).includes('\n')) return null;
    url = text.slice(i + 1, end);
    i = end + 1;
  } else {
    const from = i;
    let depth = 0;
    for (; i < text.length && i - from <= MAX_DESTINATION; i++) {
      const c = text[i]!;
      if (c === ' ' || c === '\t' || c === '\n') break;
      if (c === '(') depth++;
      else if (c === ')') {
        if (depth === 0) break;
        depth--;
      }
    }
    url = text.slice(from, i);
  }
  const rest = text.slice(i, i + MAX_DESTINATION);
  const tail = /^\s*(?:(?:"[^"]*"|'[^']*'|\([^)]*\))\s*)?\)/.exec(rest);
  return tail ? url : null;
}

/** A function from offsets of `text` to 1-based line numbers (binary search over its newlines). */
export function lineIndex(text: string): (offset: number) => number {
  const newlines: number[] = [];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) newlines.push(i);
  return (offset) => {
    let lo = 0;
    let hi = newlines.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (newlines[mid]! < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  };
}
