/**
 * Loop safety (docs/automations.mdx): docwright's own changes never start an automation, or a merged docs
 * pull request would start a job that opens the next one. A change is docwright's own when its
 * head branch starts with the project's branch prefix, or when every one of its commits carries
 * the `Generated-By: docwright` trailer that docwright writes (src/git/commit.ts).
 *
 * Trailers are read as git reads them (`git interpret-trailers --parse`), not searched for:
 * a commit that quotes "Generated-By: docwright" in its body, or has it in its title, is not
 * docwright's; trailer paragraphs added after docwright's own count with it (closingTrailers). A push has no head branch, so the merge commit a host writes when it merges one
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

/** A message's lines, and its paragraphs after the title as [start, end) line ranges, in order. */
function paragraphsOf(message: string): { lines: string[]; paragraphs: [number, number][] } {
  const lines = message.replace(/\r\n?/g, '\n').split('\n');
  const blank = (i: number) => lines[i]!.trim() === '';
  let i = 0;
  // The title paragraph is never a trailer block.
  while (i < lines.length && !blank(i)) i++;
  const paragraphs: [number, number][] = [];
  while (i < lines.length) {
    while (i < lines.length && blank(i)) i++;
    const start = i;
    while (i < lines.length && !blank(i)) i++;
    if (i > start) paragraphs.push([start, i]);
  }
  return { lines, paragraphs };
}

/**
 * The trailers of one paragraph when git would take it for a trailer block: every line of it a
 * trailer (lines starting with whitespace continue the one before), or a line git generates
 * (`Signed-off-by:`) among them and trailers at least a quarter of its lines. Comment lines
 * (`#`) are passed over. An empty list when it is no block.
 */
function trailerBlock(lines: readonly string[]): Trailer[] {
  const trailers: Trailer[] = [];
  let trailerLines = 0;
  let otherLines = 0;
  let generatedByGit = false;
  /** Whether the line before was a trailer (a continuation line counts with it). */
  let last: Trailer | 'other' | null = null;
  for (const line of lines) {
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

/**
 * The trailers of a commit message, as git finds them (`git interpret-trailers --parse`): those
 * of its last paragraph, never of the first (the title), when that paragraph is a trailer block.
 */
export function parseTrailers(message: string): Trailer[] {
  const { lines, paragraphs } = paragraphsOf(message);
  const last = paragraphs.at(-1);
  return last ? trailerBlock(lines.slice(last[0], last[1])) : [];
}

/**
 * The trailers of every trailer block that ends the message: the last paragraph's, and those of
 * the trailer-only paragraphs right before it. Git reads the last one only, but a co-author tool,
 * `git commit --trailer` after an editor, or a host's squash adds its trailers as a paragraph of
 * their own after docwright's (`Generated-By: docwright`, a blank line, `Co-authored-by: …`);
 * the commit is still docwright's. A paragraph of prose after the trailer ends the search: a
 * message that goes on after quoting it is not.
 */
export function closingTrailers(message: string): Trailer[] {
  const { lines, paragraphs } = paragraphsOf(message);
  const found: Trailer[] = [];
  for (let p = paragraphs.length - 1; p >= 0; p--) {
    const block = trailerBlock(lines.slice(paragraphs[p]![0], paragraphs[p]![1]));
    if (block.length === 0) break;
    found.unshift(...block);
  }
  return found;
}

/** Whether the message carries `Generated-By: docwright` as a trailer (closingTrailers). */
export function generatedByDocwright(message: string): boolean {
  return closingTrailers(message).some(
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
  /** Whether `commits` is all of them (default true): a part cannot show that every one is docwright's. */
  commitsComplete?: boolean;
}

/** Whether the change is docwright's own (`own-change`), for a project's `branchPrefix`. */
export function isOwnChange(change: ChangeOrigin, branchPrefix: string): boolean {
  const ownBranch = (branch: string | null) =>
    branchPrefix !== '' && branch?.startsWith(branchPrefix) === true;
  if (ownBranch(change.headRef)) return true;
  return (
    change.commits.length > 0 &&
    change.commitsComplete !== false &&
    change.commits.every((c) => generatedByDocwright(c.message) || ownBranch(mergedBranchOf(c.message)))
  );
}
