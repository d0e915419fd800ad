/** "Did you mean" for a path that does not exist: files whose names resemble it, best first. */
import path from 'node:path';
import { compareStrings } from './paths.ts';

/** Files compared by name, and the characters of a name compared. */
const MAX_CANDIDATES = 20_000;
const MAX_NAME_CHARS = 100;

/** Up to `limit` of `files` whose name resembles `relative`'s, best first; stops at `deadline`. */
export function similarFiles(
  relative: string,
  files: readonly string[],
  limit: number,
  deadline: number,
): string[] {
  const wanted = path.posix.basename(relative).toLowerCase().slice(0, MAX_NAME_CHARS);
  const wantedStem = stem(wanted);
  const scored: { file: string; score: number }[] = [];
  for (const [i, file] of files.slice(0, MAX_CANDIDATES).entries()) {
    if (i % 1_000 === 0 && Date.now() > deadline) break;
    const name = path.posix.basename(file).toLowerCase().slice(0, MAX_NAME_CHARS);
    const longest = Math.max(wanted.length, name.length, 1);
    // The distance is at least the difference in length: skip names that cannot score 0.5.
    let score =
      Math.abs(wanted.length - name.length) * 2 > longest ? 0 : 1 - levenshtein(wanted, name) / longest;
    const nameStem = stem(name);
    if (nameStem === wantedStem) score = Math.max(score, 0.9);
    else if (
      Math.min(nameStem.length, wantedStem.length) >= 4 &&
      (nameStem.includes(wantedStem) || wantedStem.includes(nameStem))
    ) {
      score = Math.max(score, 0.6);
    }
    if (score >= 0.5) scored.push({ file, score: score + sharedDirectoryBonus(relative, file) });
  }
  scored.sort((a, b) => b.score - a.score || compareStrings(a.file, b.file));
  return scored.slice(0, limit).map((s) => s.file);
}

function stem(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}

function sharedDirectoryBonus(a: string, b: string): number {
  return path.posix.dirname(a) === path.posix.dirname(b) ? 0.05 : 0;
}

/** Edit distance, two rows. */
function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    [previous, current] = [current, previous];
  }
  return previous[b.length]!;
}
