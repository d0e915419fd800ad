/**
 * Which lines of a page the run changed, for the checks that look only there (style, spelling:
 * SPEC §19). On the head, the lines the run added or rewrote; on the base, the lines it removed or
 * rewrote — so that a finding on a rewritten line that was already there is found on both sides
 * and counts as preexisting. The other side is the other state of the tree (`CheckInput.other`).
 */
import { diffLines } from 'diff';
import { normalizeRel } from '../site/repo-files.ts';
import type { CheckInput } from './types.ts';

/** 1-based numbers of the lines of `mine` that are not in `other` (a line diff). */
export function linesNotIn(mine: string, other: string): Set<number> {
  const lines = new Set<number>();
  let line = 1;
  for (const part of diffLines(other, mine)) {
    const count = part.count ?? 0;
    if (part.removed) continue;
    if (part.added) for (let i = 0; i < count; i++) lines.add(line + i);
    line += count;
  }
  return lines;
}

/**
 * The changed lines of `file` (its text `text` in `input.tree`): those not in the other state's
 * text of the same page (before or after a move), or null when every line counts (the other
 * state has no such page).
 */
export async function changedLines(
  input: CheckInput,
  file: string,
  text: string,
): Promise<Set<number> | null> {
  const move = input.changes.moved.find((m) => (input.state === 'head' ? m.to : m.from) === file);
  const counterpart = move ? (input.state === 'head' ? move.from : move.to) : file;
  const other = await input.other.readText(counterpart);
  return other === null ? null : linesNotIn(text, other);
}

/**
 * The pages a line check reads: what the run changed; on the base, the pages as they were
 * (a moved page under its old path), those the run created being absent there.
 */
export function pagesToCheck(input: CheckInput, isPage: (file: string) => boolean): string[] {
  const files = new Set(input.changes.changed.map(normalizeRel));
  if (input.state === 'base') for (const move of input.changes.moved) files.add(normalizeRel(move.from));
  return [...files].filter(isPage).sort();
}

/** Findings one check reports on one page at most: past that, the page needs rewriting, not a list. */
export const MAX_FINDINGS_PER_PAGE = 200;

/** Offsets where the lines of `text` start, for `lineOf`. */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** The 1-based line of an offset, from `lineStarts` (a binary search). */
export function lineOf(starts: number[], offset: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (starts[mid]! <= offset) low = mid;
    else high = mid - 1;
  }
  return low + 1;
}
