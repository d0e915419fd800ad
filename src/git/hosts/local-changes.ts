/**
 * Changes of a repository on this machine, through git itself: a commit (against its first
 * parent) or a range (from the merge base), their diffs read as git writes them and only as far
 * as the bounds, and the commits pushed to a branch. A local repository has no pull requests.
 */
import { GitError, git } from '../git.ts';
import { LineSplitter } from '../lines.ts';
import {
  boundCommits,
  type Change,
  type ChangeCommit,
  type ChangeFile,
  type ChangeLimits,
  commitChange,
  FileCollector,
  type GetChangeOptions,
  limitsOf,
  rangeText,
  splitMessage,
} from './change.ts';
import { GitDiffReader } from './git-diff.ts';
import { type CodeHost, HostError } from './host.ts';
import { hostChanges } from './host-changes.ts';
import { type BranchCommit, MAX_COMMITS_WALKED } from './merged-changes.ts';

const NO_PULL_REQUESTS = 'a local repository has no pull requests';

/** Records of `git log --format=…%x1e`, read as they come, until `take` answers false. */
async function eachRecord(
  dir: string,
  args: string[],
  take: (fields: string[]) => boolean,
  signal: AbortSignal | undefined,
): Promise<void> {
  let pending = '';
  let more = true;
  await git(args, {
    cwd: dir,
    signal,
    onStdout: (text) => {
      pending += text;
      for (let end = pending.indexOf('\x1e'); more && end >= 0; end = pending.indexOf('\x1e')) {
        more = take(pending.slice(0, end).replace(/^\n/, '').split('\0'));
        pending = pending.slice(end + 1);
      }
      return more;
    },
  });
}

/** The commit a revision names, or a `change-unavailable` error saying that git does not know it. */
async function resolveCommit(dir: string, revision: string, signal?: AbortSignal): Promise<string> {
  try {
    return (
      await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${revision}^{commit}`], {
        cwd: dir,
        signal,
      })
    ).trim();
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    const detail = error instanceof GitError && error.stderr.trim() ? `: ${error.stderr.trim()}` : '';
    throw new HostError('change-unavailable', `${revision} is not a commit of ${dir}${detail}`);
  }
}

/** The files from `from` (null: the empty tree) to `to`, read from git's diff within the bounds. */
async function diffFiles(
  dir: string,
  from: string | null,
  to: string,
  limits: ChangeLimits,
  signal?: AbortSignal,
) {
  const base = from ?? (await git(['hash-object', '-t', 'tree', '/dev/null'], { cwd: dir, signal })).trim();
  const range = [base, to, '--'];
  const common = ['-c', 'core.quotePath=false', 'diff', '--no-color', '--no-ext-diff', '--find-renames'];
  const files = new FileCollector(limits);
  const reader = new GitDiffReader({
    maxFileDiff: limits.maxFileDiff,
    maxRead: limits.maxDiffRead,
    onFile: (file) => {
      files.add({
        ...file,
        diff: file.binary || file.diff === '' ? null : file.diff,
        hostTruncated: file.truncated,
      });
      return !files.full;
    },
  });
  const lines = new LineSplitter((line) => reader.line(line));
  await git([...common, ...range], { cwd: dir, signal, onStdout: (text) => lines.push(text) });
  lines.end();
  reader.end();
  const complete = !reader.stopped;
  await markBinaryRenames(files.files, [...common, '--numstat', '-z', ...range], dir, signal);
  const stat = await git([...common, '--shortstat', ...range], { cwd: dir, signal });
  const total = Number(/(\d+) files? changed/.exec(stat)?.[1] ?? 0);
  const notes = files.notes(total);
  if (!complete && !files.full) notes.push('the diff was read only in part: it is too large');
  return { files: files.files, total, notes };
}

/**
 * Marks binary the renames git's diff shows no content of: a file renamed unchanged has no
 * `Binary files … differ` line, but `--numstat` counts a binary file as `-` whatever happened
 * to it. Only asked when the diff holds such a rename.
 */
async function markBinaryRenames(files: ChangeFile[], numstat: string[], dir: string, signal?: AbortSignal) {
  const unknown = new Map(
    files.filter((f) => f.status === 'renamed' && !f.binary && f.diff === null).map((f) => [f.path, f]),
  );
  if (unknown.size === 0) return;
  // "-\t-\t\0<from>\0<to>\0" for a binary rename; "<n>	<n>	<path>\0" for the others.
  const fields = (await git(numstat, { cwd: dir, signal })).split('\0');
  for (let i = 0; i < fields.length; i++) {
    const binary = fields[i]!.startsWith('-\t-\t');
    if (fields[i]!.endsWith('\t')) i += 2;
    const file = binary ? unknown.get(fields[i] ?? '') : undefined;
    if (file) file.binary = true;
  }
}

/** Commits of a range, oldest first, at most `maxCommits`, and how many there are. */
async function rangeCommits(dir: string, range: string, limits: ChangeLimits, signal?: AbortSignal) {
  const commits: ChangeCommit[] = [];
  await eachRecord(
    dir,
    ['log', '--reverse', '--format=%H%x00%B%x1e', range, '--'],
    ([sha, message]) => {
      commits.push({ sha: sha ?? '', message: message ?? '' });
      return commits.length < limits.maxCommits;
    },
    signal,
  );
  const total = Number((await git(['rev-list', '--count', range, '--'], { cwd: dir, signal })).trim());
  return { commits, total };
}

export function localChanges(
  dir: string,
): Pick<CodeHost, 'getChange' | 'commentOnChange' | 'listMergedChanges'> {
  async function commit(sha: string, options: GetChangeOptions): Promise<Change> {
    const limits = limitsOf(options);
    const { signal } = options;
    const full = await resolveCommit(dir, sha, signal);
    let fields: string[] = [];
    await eachRecord(
      dir,
      ['log', '-1', '--format=%H%x00%P%x00%an%x00%B%x1e', full, '--'],
      (f) => {
        fields = f;
        return false;
      },
      signal,
    );
    const [, parents = '', author = '', message = ''] = fields;
    const parent = parents.split(' ').filter(Boolean)[0] ?? null;
    const diff = await diffFiles(dir, parent, full, limits, signal);
    const { title, description } = splitMessage(message);
    return commitChange({
      kind: 'commit',
      url: null,
      title,
      description,
      author: author || null,
      baseSha: parent,
      headSha: full,
      files: diff.files,
      totalFiles: diff.total,
      commits: boundCommits([{ sha: full, message }], limits, 1).commits,
      totalCommits: 1,
      notes: diff.notes,
    });
  }

  async function range(base: string, head: string, options: GetChangeOptions): Promise<Change> {
    const limits = limitsOf(options);
    const { signal } = options;
    const [from, to] = [await resolveCommit(dir, base, signal), await resolveCommit(dir, head, signal)];
    let mergeBase: string;
    try {
      mergeBase = (await git(['merge-base', from, to], { cwd: dir, signal })).trim();
    } catch {
      throw new HostError('change-unavailable', `${base} and ${head} have no common history in ${dir}`);
    }
    const diff = await diffFiles(dir, mergeBase, to, limits, signal);
    const listed = await rangeCommits(dir, `${mergeBase}..${to}`, limits, signal);
    const commits = boundCommits(listed.commits, limits, listed.total);
    return commitChange({
      kind: 'range',
      url: null,
      ...rangeText(base, head, listed.total),
      author: null,
      baseSha: mergeBase,
      headSha: to,
      files: diff.files,
      totalFiles: diff.total,
      commits: commits.commits,
      totalCommits: listed.total,
      notes: [...diff.notes, ...commits.notes],
    });
  }

  return hostChanges(
    { host: 'this machine', repository: dir, redact: (text) => text, noun: 'pull request', mark: '#' },
    {
      async pullRequest() {
        throw new HostError('change-unavailable', NO_PULL_REQUESTS);
      },
      commit,
      range,
      async comment() {
        throw new HostError('change-unavailable', NO_PULL_REQUESTS);
      },
      mergedChanges: ({ ref, signal }) => ({
        eachPullRequest: async () => ({ complete: true }),
        async eachCommit(visit) {
          const tip = await resolveCommit(dir, `refs/heads/${ref}`, signal);
          let count = 0;
          await eachRecord(
            dir,
            ['log', '--first-parent', '--format=%H%x00%P%x00%aI%x00%cI%x00%s%x1e', tip, '--'],
            ([sha = '', parents = '', authoredAt = '', committedAt = '', title = '']) => {
              const commit: BranchCommit = {
                sha,
                parents: parents.split(' ').filter(Boolean),
                title,
                authoredAt: authoredAt || null,
                committedAt: committedAt || null,
                url: null,
              };
              return visit(commit) && ++count < MAX_COMMITS_WALKED;
            },
            signal,
          );
          return { complete: count < MAX_COMMITS_WALKED };
        },
        partOfMergedPullRequest: async () => false,
      }),
    },
  );
}
