/**
 * Changes through the Gitea/Forgejo API (`/api/v1`): a pull request (`/pulls/{n}`, its `/files`
 * with their line counts, and its raw `.diff` read line by line for the hunks), a commit
 * (`/git/commits/{sha}` and its `.diff`), a range (`/compare/{base}...{head}`: commits and the
 * files they touch; Gitea's API gives no diff of a range), comments (a pull request is an
 * issue), and the merged pull requests and pushes of a branch (`/pulls?state=closed`,
 * `/commits?sha=`, `/commits/{sha}/pull`).
 */
import {
  boundCommits,
  type Change,
  type ChangeCommit,
  type ChangeLimits,
  commitChange,
  FileCollector,
  type FileInput,
  fileStatus,
  type GetChangeOptions,
  limitsOf,
  type MergedPullRequest,
  rangeText,
  splitMessage,
  webLink,
} from './change.ts';
import { type DiffFile, GitDiffReader } from './git-diff.ts';
import type { CodeHost } from './host.ts';
import { hostChanges, type RepositoryApi } from './host-changes.ts';
import { eachPage, HttpFailure, type JsonApi } from './http.ts';
import { type BranchCommit, MAX_COMMITS_WALKED } from './merged-changes.ts';

interface GtUser {
  login: string;
}

interface GtPull {
  number: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  merged: boolean;
  merged_at: string | null;
  updated_at: string;
  merge_commit_sha: string | null;
  merge_base?: string;
  user: GtUser | null;
  html_url: string;
  head: { ref: string; sha: string };
  base: { ref: string; sha: string };
  labels: { name: string }[] | null;
  changed_files?: number;
}

interface GtChangedFile {
  filename: string;
  previous_filename?: string;
  status: string;
  additions: number;
  deletions: number;
}

interface GtCommit {
  sha: string;
  html_url: string;
  commit: {
    message: string;
    author: { name?: string; date?: string } | null;
    committer: { date?: string } | null;
  };
  author: GtUser | null;
  parents: { sha: string }[] | null;
  files?: { filename: string; status?: string }[] | null;
}

interface GtCompare {
  total_commits: number;
  commits: GtCommit[];
}

/** Gitea's largest page (its `MAX_RESPONSE_ITEMS` default). */
const PER_PAGE = 50;

/**
 * Reads a raw diff within the bounds (see `GitDiffReader`), until `enough` says so or after
 * `maxFiles` files; the rest of the answer is left unread.
 */
async function readRawDiff(
  request: JsonApi,
  path: string,
  limits: ChangeLimits,
  signal: AbortSignal | undefined,
  enough: (file: DiffFile) => boolean = () => false,
): Promise<{ files: DiffFile[]; complete: boolean }> {
  const files: DiffFile[] = [];
  const reader = new GitDiffReader({
    maxFileDiff: limits.maxFileDiff,
    maxRead: limits.maxDiffRead,
    onFile: (file) => {
      files.push(file);
      return !enough(file) && files.length < limits.maxFiles;
    },
  });
  const answer = await request.lines(path, {
    headers: { accept: 'text/plain' },
    signal,
    onLine: (line) => reader.line(line),
  });
  reader.end();
  return { files, complete: answer.complete && !reader.stopped };
}

/** A file of Gitea's lists, with what the raw diff says of it (when it was read that far). */
function fileInput(
  listed: {
    path: string;
    previousPath: string | null;
    status: string;
    additions: number | null;
    deletions: number | null;
  },
  diff: DiffFile | undefined,
): FileInput {
  if (!diff) {
    return {
      path: listed.path,
      previousPath: listed.previousPath,
      status: fileStatus(listed.status, listed.previousPath),
      additions: listed.additions,
      deletions: listed.deletions,
      binary: false,
      diff: null,
      hostTruncated: listed.additions === null || listed.additions + (listed.deletions ?? 0) > 0,
    };
  }
  return {
    path: diff.path,
    previousPath: diff.previousPath ?? listed.previousPath,
    status: diff.status,
    additions: listed.additions ?? diff.additions,
    deletions: listed.deletions ?? diff.deletions,
    binary: diff.binary,
    diff: diff.binary || diff.diff === '' ? null : diff.diff,
    hostTruncated: diff.truncated,
  };
}

export function giteaChanges(
  context: RepositoryApi,
): Pick<CodeHost, 'getChange' | 'commentOnChange' | 'listMergedChanges'> {
  const { request, repoPath, fullName, host, redact } = context;

  async function pullRequest(number: number, options: GetChangeOptions): Promise<Change> {
    const limits = limitsOf(options);
    const { signal } = options;
    const pr = (await request<GtPull>('GET', `${repoPath}/pulls/${number}`, { signal })).body;
    const listed: GtChangedFile[] = [];
    const outcome = await eachPage<GtChangedFile>(request, `${repoPath}/pulls/${number}/files`, {
      sizeParam: 'limit',
      perPage: PER_PAGE,
      maxPages: Math.ceil(limits.maxFiles / PER_PAGE),
      signal,
      visit: (file) => {
        listed.push(file);
        return listed.length < limits.maxFiles;
      },
    });
    // The raw diff is read only until every listed file's part has gone by.
    const wanted = new Set(listed.map((f) => f.filename));
    let matched = 0;
    const raw = await readRawDiff(request, `${repoPath}/pulls/${number}.diff`, limits, signal, (file) => {
      if (wanted.has(file.path)) matched++;
      return matched >= wanted.size;
    });
    const diffs = new Map(raw.files.map((f) => [f.path, f]));
    const files = new FileCollector(limits);
    for (const file of listed) {
      const diff = diffs.get(file.filename);
      files.add(
        fileInput(
          {
            path: file.filename,
            previousPath: file.previous_filename || null,
            status: file.status,
            additions: file.additions,
            deletions: file.deletions,
          },
          diff,
        ),
      );
    }
    const commitsListed: ChangeCommit[] = [];
    let total = 0;
    const commitsOutcome = await eachPage<GtCommit>(request, `${repoPath}/pulls/${number}/commits`, {
      query: { verification: false, files: false },
      sizeParam: 'limit',
      perPage: PER_PAGE,
      maxPages: Math.ceil(limits.maxCommits / PER_PAGE),
      signal,
      visit: (commit) => {
        total++;
        if (commitsListed.length < limits.maxCommits)
          commitsListed.push({ sha: commit.sha, message: commit.commit.message });
        return true;
      },
    });
    const totalFiles = pr.changed_files ?? (outcome === 'end' ? listed.length : null);
    const totalCommits = commitsOutcome === 'end' ? total : null;
    // Gitea lists a pull request's commits newest first.
    const commits = boundCommits(commitsListed.reverse(), limits, totalCommits);
    return {
      kind: 'pull-request',
      number: pr.number,
      url: webLink(pr.html_url),
      title: pr.title,
      description: pr.body ?? '',
      author: pr.user?.login ?? null,
      state: pr.merged ? 'merged' : pr.state === 'open' ? 'open' : 'closed',
      baseRef: pr.base.ref,
      headRef: pr.head.ref,
      baseSha: pr.merge_base || pr.base.sha || null,
      headSha: pr.head.sha,
      files: files.files,
      totalFiles,
      commits: commits.commits,
      totalCommits,
      notes: [...files.notes(totalFiles), ...commits.notes],
    };
  }

  async function commit(sha: string, options: GetChangeOptions): Promise<Change> {
    const limits = limitsOf(options);
    const { signal } = options;
    const found = (
      await request<GtCommit>('GET', `${repoPath}/git/commits/${encodeURIComponent(sha)}`, {
        query: { stat: false, verification: false, files: true },
        signal,
      })
    ).body;
    const raw = await readRawDiff(request, `${repoPath}/git/commits/${found.sha}.diff`, limits, signal);
    const files = new FileCollector(limits);
    const affected = found.files ?? [];
    // The raw diff knows renames, counts and binary files; what it did not reach comes from the list.
    for (const diff of raw.files)
      files.add(
        fileInput(
          { path: diff.path, previousPath: null, status: '', additions: null, deletions: null },
          diff,
        ),
      );
    for (const file of affected) {
      if (files.full) break;
      if (raw.files.some((f) => f.path === file.filename || f.previousPath === file.filename)) continue;
      files.add(
        fileInput(
          {
            path: file.filename,
            previousPath: null,
            status: file.status ?? '',
            additions: null,
            deletions: null,
          },
          undefined,
        ),
      );
    }
    const { title, description } = splitMessage(found.commit.message);
    const totalFiles = raw.complete ? raw.files.length : affected.length > 0 ? affected.length : null;
    return commitChange({
      kind: 'commit',
      url: webLink(found.html_url),
      title,
      description,
      author: found.author?.login ?? found.commit.author?.name ?? null,
      baseSha: found.parents?.[0]?.sha ?? null,
      headSha: found.sha,
      files: files.files,
      totalFiles,
      commits: boundCommits([{ sha: found.sha, message: found.commit.message }], limits, 1).commits,
      totalCommits: 1,
      notes: [
        ...files.notes(totalFiles),
        ...(raw.complete ? [] : ['the diff was read only in part: it is too large']),
      ],
    });
  }

  async function range(base: string, head: string, options: GetChangeOptions): Promise<Change> {
    const limits = limitsOf(options);
    const { signal } = options;
    const compare = (
      await request<GtCompare>(
        'GET',
        `${repoPath}/compare/${encodeURIComponent(base)}...${encodeURIComponent(head)}`,
        {
          signal,
        },
      )
    ).body;
    const tip = (
      await request<GtCommit>('GET', `${repoPath}/git/commits/${encodeURIComponent(head)}`, {
        query: { stat: false, verification: false, files: false },
        signal,
      })
    ).body;
    // Gitea lists the commits newest first; the files are those the commits touch, the last status winning.
    const commits = [...(compare.commits ?? [])].reverse();
    const touched = new Map<string, string>();
    for (const c of commits) for (const file of c.files ?? []) touched.set(file.filename, file.status ?? '');
    const files = new FileCollector(limits);
    for (const [path, status] of touched) {
      files.add({
        path,
        previousPath: null,
        status: fileStatus(status, null),
        additions: null,
        deletions: null,
        binary: false,
        diff: null,
      });
    }
    const bounded = boundCommits(
      commits.map((c) => ({ sha: c.sha, message: c.commit.message })),
      limits,
      compare.total_commits,
    );
    return commitChange({
      kind: 'range',
      url: null,
      ...rangeText(base, head, compare.total_commits),
      author: null,
      baseSha: null,
      headSha: tip.sha,
      files: files.files,
      totalFiles: touched.size,
      commits: bounded.commits,
      totalCommits: compare.total_commits,
      notes: [
        ...files.notes(touched.size),
        "Gitea's API gives no diff of a range: the files are those its commits touch, without their lines",
        ...bounded.notes,
      ],
    });
  }

  return hostChanges(
    { host, repository: fullName, redact, noun: 'pull request', mark: '#' },
    {
      pullRequest,
      commit,
      range,
      async comment(number, body, signal) {
        const { body: comment } = await request('POST', `${repoPath}/issues/${number}/comments`, {
          body: { body },
          signal,
        });
        const created = comment as { id: number; html_url?: string };
        return { id: created.id, url: webLink(created.html_url) };
      },
      mergedChanges: ({ ref, signal }) => {
        /** The commits of merged pull requests, by when they were written and their title (a rebase keeps both). */
        const written = new Map<number, Set<string>>();
        async function writtenIn(pull: MergedPullRequest) {
          let found = written.get(pull.number);
          if (!found) {
            const seen = new Set<string>();
            await eachPage<GtCommit>(request, `${repoPath}/pulls/${pull.number}/commits`, {
              query: { verification: false, files: false },
              sizeParam: 'limit',
              perPage: PER_PAGE,
              maxPages: 5,
              signal,
              visit: (c) => {
                seen.add(`${c.commit.author?.date ?? ''} ${splitMessage(c.commit.message).title}`);
                return true;
              },
            });
            found = seen;
            written.set(pull.number, found);
          }
          return found;
        }
        return {
          async eachPullRequest(visit) {
            const outcome = await eachPage<GtPull>(request, `${repoPath}/pulls`, {
              query: { state: 'closed', sort: 'recentupdate' },
              sizeParam: 'limit',
              perPage: PER_PAGE,
              maxPages: 20,
              signal,
              visit: (pull) => visit({ updatedAt: pull.updated_at, merged: merged(pull, ref) }),
            });
            return { complete: outcome !== 'limit' };
          },
          async eachCommit(visit) {
            const outcome = await eachPage<GtCommit>(request, `${repoPath}/commits`, {
              query: { sha: ref, stat: false, verification: false, files: false },
              sizeParam: 'limit',
              perPage: PER_PAGE,
              maxPages: MAX_COMMITS_WALKED / PER_PAGE,
              signal,
              visit: (commit) =>
                visit({
                  sha: commit.sha,
                  parents: (commit.parents ?? []).map((p) => p.sha),
                  title: splitMessage(commit.commit.message).title,
                  authoredAt: commit.commit.author?.date ?? null,
                  committedAt: commit.commit.committer?.date ?? null,
                  url: webLink(commit.html_url),
                }),
            });
            return { complete: outcome !== 'limit' };
          },
          async partOfMergedPullRequest(commit: BranchCommit, pulls) {
            try {
              const { body } = await request<GtPull>('GET', `${repoPath}/commits/${commit.sha}/pull`, {
                signal,
              });
              if (merged(body, ref)) return true;
            } catch (error) {
              if (!(error instanceof HttpFailure) || error.status !== 404) throw error;
            }
            // Gitea links only a merge's own commit to its pull request: the other commits of a
            // rebase merge are known by when they were written and their title.
            const key = `${commit.authoredAt ?? ''} ${commit.title}`;
            for (const pull of pulls) if ((await writtenIn(pull)).has(key)) return true;
            return false;
          },
        };
      },
    },
  );
}

/** A pull request's merge into `ref`, or null when it was not merged there. */
function merged(pull: GtPull, ref: string): MergedPullRequest | null {
  if (!pull.merged || !pull.merged_at || pull.base?.ref !== ref) return null;
  return {
    number: pull.number,
    title: pull.title,
    headRef: pull.head.ref,
    headSha: pull.head.sha ?? null,
    mergeCommitSha: pull.merge_commit_sha ?? null,
    mergedAt: pull.merged_at,
    labels: (pull.labels ?? []).map((l) => l.name),
    url: webLink(pull.html_url),
  };
}
