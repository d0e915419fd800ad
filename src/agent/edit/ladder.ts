/**
 * The ladder of normalisations edit_file tries, strictest first, when old_string is not in the
 * file exactly. Each level tolerates what the ones before it do and one thing more; a level's
 * match is taken only when it is the only one (or replace_all asks for every one).
 */
import type { Canon } from './text.ts';

export interface Level {
  /** What this level tolerates beyond the one before it, as the model is told. */
  tolerates: string;
  canon: Canon;
  /** Trailing whitespace of a line is set apart, and differences in it are ignored. */
  trailing: boolean;
  /**
   * Indentation is set apart, and differences in it are taken up by one re-indentation (a shift
   * by a number of columns, tabs for spaces or the reverse) that must hold for every line.
   */
  indent: boolean;
}

export const LADDER: readonly Level[] = [
  {
    tolerates: 'line endings (CRLF or LF)',
    canon: { nfc: false, quotes: false },
    trailing: false,
    indent: false,
  },
  {
    tolerates: 'Unicode normalisation (NFC or NFD)',
    canon: { nfc: true, quotes: false },
    trailing: false,
    indent: false,
  },
  {
    tolerates: 'trailing whitespace',
    canon: { nfc: true, quotes: false },
    trailing: true,
    indent: false,
  },
  {
    tolerates: 'indentation (by a consistent shift, or tabs for spaces)',
    canon: { nfc: true, quotes: false },
    trailing: true,
    indent: true,
  },
  {
    tolerates: 'typographic quotes (‘’“” for \' and ")',
    canon: { nfc: true, quotes: true },
    trailing: true,
    indent: true,
  },
];

/** "line endings, Unicode normalisation and trailing whitespace": what `level` and those before it tolerate. */
export function toleratedUpTo(level: Level): string {
  const names = LADDER.slice(0, LADDER.indexOf(level) + 1).map((l) => l.tolerates.replace(/ \(.*\)$/, ''));
  return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}
