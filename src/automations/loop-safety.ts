/**
 * Loop safety (docs/automations.mdx): docwright's own changes never start an automation, or a merged docs
 * pull request would start a job that opens the next one. A change is docwright's own when its
 * head branch starts with the project's branch prefix, or when every one of its commits carries
 * the `Generated-By: docwright` trailer that docwright writes (src/git/commit.ts).
 *
 * Trailers are read as git reads them (`git interpret-trailers --parse`), not searched for:
 * a commit that quotes "Generated-By: docwright" in its body, or has it in its title, is not
 * docwright's. A push has no head branch, so the merge commit a host writes when it merges one
 * of docwright's pull requests counts as docwright's when its host's default message names a
 * branch under the prefix ("Merge pull request #5 from acme/docwright/…", "Merge branch
 * 'docwright/…' into 'main'", "Merge pull request '…' (#5) from docwright/… into main").
 */

/** The trailer docwright's commits carry. */
export const GENERATED_BY = { key: 'Generated-By', value: 'docwright' } as const;

export interface Trailer {
  key: string;
  value: string;
}

/** `Key: value` with git's token characters; spaces may stand before the colon. */
const TRAILER_LINE = /^([A-Za-z0-9-]+)[ \t]*:[ \t]*(.*)$/;
/** Lines git itself writes into a trailer block, which let a block hold other lines too. */
const GIT_GENERATED = [/^Signed-off-by:/i, /^\(cherry picked from commit /];

/**
 * The trailers of a commit message, as git finds them: in its last paragraph, never in the first
 * (the title), when every line of that paragraph is a trailer (lines starting with whitespace
 * continue the one before), or when a line git generates (`Signed-off-by:`) is among them and
 * they are at least a quarter of its lines. Comment lines (`#`) are passed over.
 */
export function parseTrailers(message: string): Trailer[] {
  const lines = message.replace(/\r\n?/g, '\n').split('\n');
  const blank = (i: number) => lines[i]!.trim() === '';
  let end = lines.length;
  while (end > 0 && blank(end - 1)) end--;
  let titleEnd = 0;
  while (titleEnd < end && !blank(titleEnd)) titleEnd++;
  let start = end;
  // The title paragraph is never a trailer block: nothing after it is no block at all.
  while (start > titleEnd && !blank(start - 1)) start--;

  const trailers: Trailer[] = [];
  let trailerLines = 0;
  let otherLines = 0;
  let generatedByGit = false;
  /** Whether the line before was a trailer (a continuation line counts with it). */
  let last: Trailer | 'other' | null = null;
  for (const line of lines.slice(start, end)) {
    if (line.startsWith('#')) continue;
    if (/^[ \t]/.test(line) && last !== null) {
      if (last === 'other') otherLines++;
      else {
        trailerLines++;
        last.value = `${last.value} ${line.trim()}`.trim();
      }
      continue;
    }
    const match = TRAILER_LINE.exec(line);
    if (GIT_GENERATED.some((prefix) => prefix.test(line))) generatedByGit = true;
    if (match) {
      last = { key: match[1]!, value: match[2]!.trim() };
      trailers.push(last);
      trailerLines++;
    } else if (line.startsWith('(cherry picked from commit ')) {
      last = 'other';
      trailerLines++;
    } else {
      last = 'other';
      otherLines++;
    }
  }
  const isBlock =
    trailerLines > 0 && (otherLines === 0 || (generatedByGit && trailerLines * 3 >= otherLines));
  return isBlock ? trailers : [];
}

/** Whether the message carries `Generated-By: docwright` as a trailer. */
export function generatedByDocwright(message: string): boolean {
  return parseTrailers(message).some(
    (t) =>
      t.key.toLowerCase() === GENERATED_BY.key.toLowerCase() && t.value.toLowerCase() === GENERATED_BY.value,
  );
}

/** The default merge messages of the hosts (and of git), and where they name the merged branch. */
const MERGE_MESSAGES = [
  // GitHub: "Merge pull request #42 from owner/branch"
  /^Merge pull request #\d+ from [^\s/]+\/(\S+)/,
  // GitLab and git: "Merge branch 'branch' into 'main'", "Merge branch 'branch'"
  /^Merge branch '([^'\n]+)'/,
  // Gitea and Forgejo: "Merge pull request 'title' (#15) from branch into main" (from a fork: owner:branch)
  /^Merge pull request '.*' \(#\d+\) from (?:[^\s:]+:)?(\S+) into \S+$/,
];

/** The branch a merge commit's default message says it merged, or null. */
export function mergedBranchOf(message: string): string | null {
  const title = message.replace(/\r\n?/g, '\n').split('\n', 1)[0]!.trim();
  for (const pattern of MERGE_MESSAGES) {
    const match = pattern.exec(title);
    if (match) return match[1]!;
  }
  return null;
}

export interface ChangeOrigin {
  /** The branch the change was merged from; null for a push. */
  headRef: string | null;
  /** The change's commits (as many as are known). */
  commits: readonly { message: string }[];
}

/** Whether the change is docwright's own (`own-change`), for a project's `branchPrefix`. */
export function isOwnChange(change: ChangeOrigin, branchPrefix: string): boolean {
  const ownBranch = (branch: string | null) =>
    branchPrefix !== '' && branch?.startsWith(branchPrefix) === true;
  if (ownBranch(change.headRef)) return true;
  return (
    change.commits.length > 0 &&
    change.commits.every((c) => generatedByDocwright(c.message) || ownBranch(mergedBranchOf(c.message)))
  );
}
