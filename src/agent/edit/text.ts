/**
 * Text as edit matching sees it: lines with their line endings, each line's indentation, content
 * and trailing whitespace, and "units" (a character with its combining marks), compared through
 * the normalisations of the ladder (ladder.ts).
 */

export type Eol = '' | '\n' | '\r\n';

/** One line: offsets into its text. */
export interface Line {
  start: number;
  /** End of the indentation (= start for a blank line: its whitespace counts as trailing). */
  indentEnd: number;
  /** End of the content, before trailing whitespace. */
  contentEnd: number;
  /** Where the line ending starts (or the text ends). */
  end: number;
  eol: Eol;
}

/** Lines of `text`, split at LF (a CR before it belongs to the line ending); never empty. */
export function lineSpans(text: string): Line[] {
  const lines: Line[] = [];
  let start = 0;
  for (;;) {
    const newline = text.indexOf('\n', start);
    const crlf = newline > start && text.charCodeAt(newline - 1) === 13;
    const end = newline === -1 ? text.length : crlf ? newline - 1 : newline;
    lines.push(decompose(text, start, end, newline === -1 ? '' : crlf ? '\r\n' : '\n'));
    if (newline === -1) return lines;
    start = newline + 1;
  }
}

const isBlank = (code: number) => code === 32 || code === 9;

function decompose(text: string, start: number, end: number, eol: Eol): Line {
  let indentEnd = start;
  while (indentEnd < end && isBlank(text.charCodeAt(indentEnd))) indentEnd++;
  if (indentEnd === end) return { start, indentEnd: start, contentEnd: start, end, eol };
  let contentEnd = end;
  while (contentEnd > indentEnd && isBlank(text.charCodeAt(contentEnd - 1))) contentEnd--;
  return { start, indentEnd, contentEnd, end, eol };
}

export const indentOf = (text: string, line: Line) => text.slice(line.start, line.indentEnd);
export const contentOf = (text: string, line: Line) => text.slice(line.indentEnd, line.contentEnd);
export const trailingOf = (text: string, line: Line) => text.slice(line.contentEnd, line.end);
export const isBlankLine = (line: Line) => line.contentEnd === line.start;

const ASCII = /^[\0-\x7f]*$/;
export const isAscii = (text: string) => ASCII.test(text);
/** A character with the combining marks that follow it (or a run of marks at the start). */
const UNIT = /\P{M}\p{M}*|\p{M}+/gsu;

/** The units of `text`: what a normalisation maps as a whole, so matched text maps back unit by unit. */
export function units(text: string): string[] {
  if (ASCII.test(text)) return text.split('');
  return text.match(UNIT) ?? [];
}

/** How text is compared at a level of the ladder. */
export interface Canon {
  /** Compare in Unicode normalisation form C (NFC and NFD spellings are equal). */
  nfc: boolean;
  /** Typographic quotes equal their ASCII forms. */
  quotes: boolean;
}

const QUOTES: Record<string, string> = {
  '\u2018': "'",
  '\u2019': "'",
  '\u201a': "'",
  '\u201b': "'",
  '\u201c': '"',
  '\u201d': '"',
  '\u201e': '"',
  '\u201f': '"',
};
const TYPOGRAPHIC_QUOTE = /[\u2018-\u201f]/g;

/** A unit as the level compares it. */
export function canonUnit(unit: string, canon: Canon): string {
  let out = canon.nfc ? unit.normalize('NFC') : unit;
  if (canon.quotes) out = out.replace(TYPOGRAPHIC_QUOTE, (q) => QUOTES[q] ?? q);
  return out;
}

/** A text as the level compares it: its units' canonical forms, joined. */
export function canonText(text: string, canon: Canon): string {
  if ((!canon.nfc && !canon.quotes) || ASCII.test(text)) return text;
  // Text already in NFC is so unit by unit too: only the quotes change, one character for one.
  if (!canon.nfc || text.normalize('NFC') === text) {
    return canon.quotes ? text.replace(TYPOGRAPHIC_QUOTE, (q) => QUOTES[q] ?? q) : text;
  }
  return units(text)
    .map((u) => canonUnit(u, canon))
    .join('');
}

/** Whether canonText(text) has a character for each of text's, in place (offsets carry over). */
export const canonKeepsOffsets = (text: string, canon: Canon): boolean =>
  ASCII.test(text) || !canon.nfc || text.normalize('NFC') === text;

/** 'crlf' when every line ends with CRLF, 'lf' when none does, else 'mixed'. */
export function lineEndings(content: string): 'lf' | 'crlf' | 'mixed' {
  const crlf = content.split('\r\n').length - 1;
  if (crlf === 0) return 'lf';
  const lf = content.split('\n').length - 1;
  return crlf === lf ? 'crlf' : 'mixed';
}

export const toLf = (s: string): string => s.split('\r\n').join('\n');
export const toCrlf = (lf: string): string => lf.split('\n').join('\r\n');

/** The file, split once, with its lines' canonical content computed on demand per normalisation. */
export class FileText {
  readonly text: string;
  readonly lines: Line[];
  readonly #canon = new Map<string, string[]>();
  constructor(text: string) {
    this.text = text;
    this.lines = lineSpans(text);
  }
  /** Canonical content of every line (between indentation and trailing whitespace). */
  content(canon: Canon): string[] {
    const key = `${canon.nfc}${canon.quotes}`;
    let out = this.#canon.get(key);
    if (out === undefined) {
      out = this.lines.map((line) => canonText(contentOf(this.text, line), canon));
      this.#canon.set(key, out);
    }
    return out;
  }
}

/** A text the model sent (old_string), with its lines. */
export interface ModelText {
  text: string;
  lines: Line[];
}
