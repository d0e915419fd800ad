/**
 * new_string written back through a tolerated match: the pieces the model kept from old_string
 * come out exactly as the file has them (its line endings, indentation, trailing whitespace,
 * quotes and Unicode form), and only what it changed is new — that part given the file's line
 * endings, re-indented by the same shift as old_string, and in the file's Unicode form.
 */
import { diffArrays } from 'diff';
import { reindent } from './indent.ts';
import type { Level } from './ladder.ts';
import type { Match } from './match.ts';
import { BLANK_INDENT, EOL, INDENT, LAST_INDENT, TRAIL, tokenize } from './tokens.ts';

/** Past these, what differs is taken as all removed and all new, not diffed. */
const MAX_DIFF_TOKENS = 50_000;
const MAX_EDIT_LENGTH = 1_000;

export interface Style {
  /** The line ending new lines get. */
  eol: string;
  /** The file's Unicode form, given to new text at the levels that compare in NFC. */
  form: 'NFC' | 'NFD' | null;
}

/** The text that replaces the match, or the line of new_string that cannot be re-indented. */
export function transfer(
  match: Match,
  newString: string,
  level: Level,
  style: Style,
): { text: string } | { unindentable: string } {
  const newTokens = tokenize(newString, level, match.shape);
  const out: string[] = [];
  for (const step of align(match.tokens, newTokens)) {
    if (typeof step === 'number') {
      out.push(match.texts[step]!);
      continue;
    }
    if (step === EOL) out.push(style.eol);
    else if (step === BLANK_INDENT) continue;
    else if (step.startsWith(LAST_INDENT)) {
      // Whitespace that ends new_string, at the start of a line: the trailing whitespace of a
      // blank line when nothing follows it on the line, else an indentation, shifted as far as
      // the shift allows.
      const blanks = step.slice(LAST_INDENT.length);
      if (match.endsLine) out.push(match.trailDrift ? '' : blanks);
      else out.push(reindent(match.reindent, blanks) ?? '');
    } else if (step.startsWith(INDENT)) {
      const indent = reindent(match.reindent, step.slice(INDENT.length));
      if (indent === null) return { unindentable: step.slice(INDENT.length) };
      out.push(indent);
    } else if (step.startsWith(TRAIL)) out.push(match.trailDrift ? '' : step.slice(TRAIL.length));
    else out.push(level.canon.nfc && style.form ? step.normalize(style.form) : step);
  }
  return { text: out.join('') };
}

/**
 * The new tokens in order, each kept one given as the index of its old token (whose file text
 * stands for it). Lines are aligned first, then the tokens of lines that changed: a line kept
 * whole comes out as that line of the file, not pieced together from its neighbours.
 */
function align(old: string[], next: string[]): (number | string)[] {
  const oldLines = cut(old);
  const newLines = cut(next);
  const steps: (number | string)[] = [];
  let removed: number[] = [];
  let added: string[] = [];
  const flush = () => {
    if (removed.length > 0 || added.length > 0) {
      for (const step of alignTokens(
        removed.map((i) => old[i]!),
        added,
      )) {
        steps.push(typeof step === 'number' ? removed[step]! : step);
      }
    }
    removed = [];
    added = [];
  };
  let oldIndex = 0;
  let newIndex = 0;
  for (const change of diff(
    oldLines.map((l) => l.key),
    newLines.map((l) => l.key),
  )) {
    for (let n = 0; n < change.count; n++) {
      if (change.added) for (const i of newLines[newIndex++]!.tokens) added.push(next[i]!);
      else if (change.removed) for (const i of oldLines[oldIndex++]!.tokens) removed.push(i);
      else {
        flush();
        for (const i of oldLines[oldIndex++]!.tokens) steps.push(i);
        newIndex++;
      }
    }
  }
  flush();
  return steps;
}

/** Token indexes of each line (its line break included), and a key to compare lines by. */
function cut(tokens: string[]): { tokens: number[]; key: string }[] {
  const lines: { tokens: number[]; key: string }[] = [];
  let current: number[] = [];
  const end = () => {
    lines.push({ tokens: current, key: current.map((i) => tokens[i]).join('\u0001') });
    current = [];
  };
  for (let i = 0; i < tokens.length; i++) {
    current.push(i);
    if (tokens[i] === EOL) end();
  }
  if (current.length > 0) end();
  return lines;
}

/** Like align, for tokens without lines: the kept ones as indexes into `old`. */
function alignTokens(old: string[], next: string[]): (number | string)[] {
  let head = 0;
  while (head < old.length && head < next.length && old[head] === next[head]) head++;
  let tail = 0;
  while (
    tail < old.length - head &&
    tail < next.length - head &&
    old[old.length - 1 - tail] === next[next.length - 1 - tail]
  ) {
    tail++;
  }
  const steps: (number | string)[] = [];
  for (let i = 0; i < head; i++) steps.push(i);
  let index = head;
  for (const change of diff(old.slice(head, old.length - tail), next.slice(head, next.length - tail))) {
    if (change.added) for (const token of change.value) steps.push(token);
    else if (change.removed) index += change.count;
    else for (let i = 0; i < change.count; i++) steps.push(index++);
  }
  for (let i = old.length - tail; i < old.length; i++) steps.push(i);
  return steps;
}

/**
 * The changes from `a` to `b`; past the bounds, all of `a` removed and all of `b` added (a
 * diff costs time in proportion to size times differences).
 */
function diff(
  a: string[],
  b: string[],
): { added: boolean; removed: boolean; count: number; value: string[] }[] {
  const changes =
    a.length + b.length <= MAX_DIFF_TOKENS ? diffArrays(a, b, { maxEditLength: MAX_EDIT_LENGTH }) : undefined;
  if (changes !== undefined) return changes;
  return [
    { added: false, removed: true, count: a.length, value: a },
    { added: true, removed: false, count: b.length, value: b },
  ];
}
