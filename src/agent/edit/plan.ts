/**
 * What an edit_file call does to a file's text: the exact match first, then the ladder of
 * tolerated differences (ladder.ts), strictest first. A level is taken when it has a match; it
 * is applied when the match is the only one, or replace_all asks for all; several are a refusal
 * that names them.
 */
import { LADDER, type Level } from './ladder.ts';
import { type Match, matchesAt } from './match.ts';
import { FileText, isAscii, lineEndings, toCrlf, toLf } from './text.ts';
import { transfer } from './transfer.ts';

export interface Edit {
  start: number;
  end: number;
  text: string;
}

/** A place old_string matches: its first and last lines, 1-based. */
export interface Place {
  line: number;
  lastLine: number;
}

export type Plan =
  | {
      kind: 'edit';
      edits: Edit[];
      /** The level that matched; null for an exact match. */
      level: Level | null;
      /** What differed between old_string and the file. */
      differences: string[];
      /** Bytes of the replacement texts, known before the new content is built. */
      bytes: number;
    }
  | {
      kind: 'ambiguous';
      level: Level | null;
      places: Place[];
      total: number;
      /** `total` is where counting stopped: there are more. */
      atLeast: boolean;
    }
  | { kind: 'unindentable'; level: Level; place: Place; indent: string }
  /** Too many places look alike to tell where old_string is, once slips are tolerated. */
  | { kind: 'too-many'; level: Level }
  | { kind: 'not-found'; uneven: Place[] };

/** Places listed at most in a refusal. */
const MAX_PLACES = 50;
/** Tolerated matches replace_all replaces at most (exact ones have no bound but the file's size). */
const MAX_TOLERATED_REPLACEMENTS = 10_000;

/**
 * The plan for replacing `oldString` by `newString` in `content`. One match is taken only when
 * it is the only place at the loosest level too: a model whose old_string drifted onto another
 * block that happens to read the same (an example and its copy in a code block) is refused,
 * not applied there.
 */
export function planEdit(content: string, oldString: string, newString: string, replaceAll: boolean): Plan {
  const file = new FileText(content);
  const exact = exactStarts(content, oldString);
  if (exact.length > 0) {
    if (exact.length > 1 && !replaceAll) {
      return {
        kind: 'ambiguous',
        level: null,
        places: exactPlaces(content, oldString, exact),
        total: exact.length,
        atLeast: false,
      };
    }
    const start = exact[0]!;
    const others = replaceAll ? null : othersAtLoosest(file, oldString, start, start + oldString.length);
    if (others !== null) return others;
    if (!replaceAll) {
      const kept = keepingTrailing(file, oldString, newString, start, start + oldString.length, null);
      if (kept !== null) return kept;
    }
    return planExact(content, exact, oldString, newString);
  }
  let uneven: Place[] = [];
  for (const level of LADDER) {
    const found = matchesAt(file, oldString, level, replaceAll ? MAX_TOLERATED_REPLACEMENTS : MAX_PLACES);
    if (found.matches.length > 1 && !replaceAll) {
      return {
        kind: 'ambiguous',
        level,
        places: found.matches.slice(0, MAX_PLACES).map((m) => place(m.firstLine, m.lastLine)),
        total: found.matches.length,
        atLeast: found.stopped,
      };
    }
    if (found.stopped) return { kind: 'too-many', level };
    if (found.matches.length === 0) {
      if (uneven.length === 0) uneven = found.uneven.slice(0, MAX_PLACES).map((j) => place(j, j));
      continue;
    }
    const match = found.matches[0]!;
    if (!replaceAll) {
      const others = othersAtLoosest(file, oldString, match.start, match.end);
      if (others !== null) return others;
      const kept = level.trailing
        ? null
        : keepingTrailing(file, oldString, newString, match.start, match.end, level);
      if (kept !== null) return kept;
    }
    return planTolerated(file, nonOverlapping(found.matches), newString, level);
  }
  return { kind: 'not-found', uneven };
}

/**
 * An ambiguity when the loosest level finds places other than the one at [start, end): the
 * one found and the others, in file order.
 */
function othersAtLoosest(file: FileText, oldString: string, start: number, end: number): Plan | null {
  const loosest = LADDER.at(-1)!;
  const found = matchesAt(file, oldString, loosest, MAX_PLACES);
  const others = found.matches.filter((m) => m.end <= start || m.start >= end);
  if (others.length === 0) return found.stopped ? { kind: 'too-many', level: loosest } : null;
  const [line, lastLine] = linesAt(file.text, [start, Math.max(start, end - 1)]);
  const places = [{ line: line!, lastLine: lastLine! }, ...others.map((m) => place(m.firstLine, m.lastLine))];
  places.sort((a, b) => a.line - b.line);
  return {
    kind: 'ambiguous',
    level: loosest,
    places: places.slice(0, MAX_PLACES),
    total: places.length,
    atLeast: found.stopped,
  };
}

function planTolerated(file: FileText, matches: Match[], newString: string, level: Level): Plan {
  const endings = lineEndings(file.text);
  const form = level.canon.nfc && !isAscii(newString) ? unicodeForm(file.text) : null;
  const edits: Edit[] = [];
  const differences = new Set<string>();
  let bytes = 0;
  for (const match of matches) {
    const eol =
      endings === 'crlf' ? '\r\n' : endings === 'lf' ? '\n' : file.lines[match.firstLine]!.eol || '\n';
    const result = transfer(match, newString, level, { eol, form });
    if ('unindentable' in result) {
      return {
        kind: 'unindentable',
        level,
        place: place(match.firstLine, match.lastLine),
        indent: result.unindentable,
      };
    }
    edits.push({ start: match.start, end: match.end, text: result.text });
    bytes += Buffer.byteLength(result.text);
    for (const d of match.differences) differences.add(d);
  }
  return { kind: 'edit', edits, level, differences: [...differences], bytes };
}

/**
 * A match at [start, end) that stops where only trailing whitespace is left of its line, taken
 * again at the first level that pairs trailing whitespace, so that the whitespace stays on its
 * line and does not follow the last line new_string adds (a Markdown line break would move).
 * Null when the match does not stop there. `level` is the level that matched (null: exactly).
 */
function keepingTrailing(
  file: FileText,
  oldString: string,
  newString: string,
  start: number,
  end: number,
  level: Level | null,
): Plan | null {
  if (!endsBeforeTrailing(file.text, end)) return null;
  const pairing = LADDER.find((l) => l.trailing)!;
  // The same place (its span may start earlier: at a CR, or at the trailing blanks before a
  // line break old_string starts with).
  const match = matchesAt(file, oldString, pairing).matches.find((m) => m.start <= start && end <= m.end);
  if (match === undefined) return null;
  const plan = planTolerated(file, [match], newString, pairing);
  return plan.kind === 'edit' ? { ...plan, level } : plan;
}

/** Whether only blanks (at least one) are left of the line at `offset`. */
function endsBeforeTrailing(content: string, offset: number): boolean {
  let i = offset;
  while (content[i] === ' ' || content[i] === '\t') i++;
  return i > offset && (i === content.length || content[i] === '\n' || content.startsWith('\r\n', i));
}

/** Starts of the non-overlapping exact occurrences of old_string, left to right. */
function exactStarts(content: string, oldString: string): number[] {
  const starts: number[] = [];
  for (let i = content.indexOf(oldString); i !== -1; i = content.indexOf(oldString, i + oldString.length)) {
    starts.push(i);
  }
  return starts;
}

function exactPlaces(content: string, oldString: string, starts: number[]): Place[] {
  const lines = linesAt(
    content,
    starts.slice(0, MAX_PLACES).flatMap((s) => [s, s + Math.max(0, oldString.length - 1)]),
  );
  const places: Place[] = [];
  for (let i = 0; i < lines.length; i += 2) places.push({ line: lines[i]!, lastLine: lines[i + 1]! });
  return places;
}

/** The exact match, as edit_file always did it: new_string as given, in the file's line endings. */
function planExact(content: string, starts: number[], oldString: string, newString: string): Plan {
  const endings = lineEndings(content);
  const text = endings === 'crlf' ? toCrlf(toLf(newString)) : endings === 'lf' ? toLf(newString) : newString;
  const edits = starts.map((start) => {
    // A match that starts at the LF of a CRLF takes the CR too: the line break is replaced whole.
    const takesCr = content[start] === '\n' && content[start - 1] === '\r';
    return { start: takesCr ? start - 1 : start, end: start + oldString.length, text };
  });
  return {
    kind: 'edit',
    edits,
    level: null,
    differences: [],
    bytes: Buffer.byteLength(text) * edits.length,
  };
}

/**
 * Where old_string first matches `content`, and how strictly: 0 exactly, n at the n-th level of
 * the ladder; null when nowhere.
 */
export function firstMatch(content: string, oldString: string): { place: Place; rank: number } | null {
  const exact = content.indexOf(oldString);
  if (exact !== -1) return { place: exactPlaces(content, oldString, [exact])[0]!, rank: 0 };
  const file = new FileText(content);
  for (const [i, level] of LADDER.entries()) {
    const match = matchesAt(file, oldString, level, 1).matches[0];
    if (match) return { place: place(match.firstLine, match.lastLine), rank: i + 1 };
  }
  return null;
}

/** The rank of `level` as firstMatch counts it. */
export const rankOf = (level: Level | null): number => (level === null ? 0 : LADDER.indexOf(level) + 1);

/** Applies non-overlapping edits (in order) to `content`. */
export function applyEdits(content: string, edits: readonly Edit[]): string {
  const parts: string[] = [];
  let previous = 0;
  for (const edit of edits) {
    parts.push(content.slice(previous, edit.start), edit.text);
    previous = edit.end;
  }
  parts.push(content.slice(previous));
  return parts.join('');
}

/** With replace_all, every match from left to right that does not overlap the one before. */
function nonOverlapping(matches: Match[]): Match[] {
  const out: Match[] = [];
  for (const match of matches) {
    if (out.length === 0 || match.start >= out.at(-1)!.end) out.push(match);
  }
  return out;
}

const place = (first: number, last: number): Place => ({ line: first + 1, lastLine: last + 1 });

/** 'NFD' or 'NFC' when the file is written in one form only (and not both: plain ASCII). */
function unicodeForm(text: string): 'NFC' | 'NFD' | null {
  const nfc = text === text.normalize('NFC');
  const nfd = text === text.normalize('NFD');
  return nfc === nfd ? null : nfc ? 'NFC' : 'NFD';
}

/** 1-based line numbers of the characters at `indexes` (ascending), in one pass over the text. */
function linesAt(text: string, indexes: number[]): number[] {
  const lines: number[] = [];
  let line = 1;
  let newline = text.indexOf('\n');
  for (const index of indexes) {
    while (newline !== -1 && newline < index) {
      line++;
      newline = text.indexOf('\n', newline + 1);
    }
    lines.push(line);
  }
  return lines;
}
