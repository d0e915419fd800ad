/**
 * Changes through GitHub's REST API: a pull request (`/pulls/{n}`, its files with their
 * `patch`, its commits), a commit (`/commits/{sha}`, files page by page), a range
 * (`/compare/{base}...{head}`), comments (issue comments: a pull request is an issue), and the
 * merged pull requests and pushes of a branch (`/pulls?state=closed`, `/commits?sha=`,
 * `/commits/{sha}/pulls`).
 */
import {
  boundCommits,
  type Change,
  type ChangeCommit,
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
import type { CodeHost } from './host.ts';
import { hostChanges, type RepositoryApi } from './host-changes.ts';
import { eachPage, hasNextPage } from './http.ts';
import { MAX_COMMITS_WALKED } from './merged-changes.ts';

interface GhUser {
  login: string;
}

interface GhPull {
  number: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  merged_at: string | null;
  updated_at: string;
  merge_commit_sha: string | null;
  user: GhUser | null;
  html_url: string;
  head: { ref: string; sha: string };
  base: { ref: string; sha: string };
  labels: { name: string }[];
  changed_files?: number;
  commits?: number;
}

interface GhFile {
  filename: string;
  previous_filename?: string;
  status: string;
  additions: number;
  deletions: number;
  changes: number;
  patch?: string;
}

interface GhCommit {
  sha: string;
  html_url: string;
  commit: {
    message: string;
    author: { name?: string; date?: string } | null;
    committer: { date?: string } | null;
  };
  author: GhUser | Record<string, never> | null;
  parents: { sha: string }[];
  files?: GhFile[];
}

interface GhCompare {
  html_url: string;
  merge_base_commit: GhCommit;
  total_commits: number;
  commits: GhCommit[];
  files?: GhFile[];
}

/** Files per page: each carries its patch, so pages stay small. */
const FILES_PER_PAGE = 50;
/** GitHub lists at most this many files of a comparison. */
const COMPARE_FILES = 300;

/** A file of GitHub's lists. GitHub sends no `patch` for binary files and for diffs too large to show. */
function fileInput(file: GhFile): FileInput {
  const previousPath = file.previous_filename ?? null;
  const diff = typeof file.patch === 'string' ? file.patch : null;
  const binary = diff === null && file.changes === 0 && file.status !== 'renamed';
  return {
    path: file.filename,
    previousPath,
    status: fileStatus(file.status, previousPath),
    additions: file.additions,
    deletions: file.deletions,
    binary,
    diff,
    hostTruncated: diff === null && file.changes > 0,
  };
}

const login = (user: GhCommit['author']): string | null =>
  user && typeof (user as GhUser).login === 'string' ? (user as GhUser).login : null;

export function gitHubChanges(
  context: RepositoryApi,
): Pick<CodeHost, 'getChange' | 'commentOnChange' | 'listMergedChanges'> {
  const { request, repoPath, fullName, host, redact } = context;

  async function pullRequest(number: number, options: GetChangeOptions): Promise<Change> {
    const limits = limitsOf(options);
    const { signal } = options;
    const pr = (await request<GhPull>('GET', `${repoPath}/pulls/${number}`, { signal })).body;
    const files = new FileCollector(limits);
    await eachPage<GhFile>(request, `${repoPath}/pulls/${number}/files`, {
      sizeParam: 'per_page',
      perPage: FILES_PER_PAGE,
      maxPages: Math.ceil(limits.maxFiles / FILES_PER_PAGE),
      signal,
      visit: (file) => {
        files.add(fileInput(file));
        return !files.full;
      },
    });
    const listed: ChangeCommit[] = [];
    await eachPage<GhCommit>(request, `${repoPath}/pulls/${number}/commits`, {
      sizeParam: 'per_page',
      perPage: 100,
      maxPages: Math.ceil(limits.maxCommits / 100),
      signal,
      visit: (commit) => {
        listed.push({ sha: commit.sha, message: commit.commit.message });
        return listed.length < limits.maxCommits;
      },
    });
    const totalFiles = pr.changed_files ?? null;
    const commits = boundCommits(listed, limits, pr.commits ?? null);
    return {
      kind: 'pull-request',
      number: pr.number,
      url: webLink(pr.html_url),
      title: pr.title,
      description: pr.body ?? '',
      author: pr.user?.login ?? null,
      state: pr.merged_at ? 'merged' : pr.state === 'open' ? 'open' : 'closed',
      baseRef: pr.base.ref,
      headRef: pr.head.ref,
      baseSha: pr.base.sha,
      headSha: pr.head.sha,
      files: files.files,
      totalFiles,
      commits: commits.commits,
      totalCommits: pr.commits ?? null,
      notes: [...files.notes(totalFiles), ...commits.notes],
    };
  }

  async function commit(sha: string, options: GetChangeOptions): Promise<Change> {
    const limits = limitsOf(options);
    const { signal } = options;
    const files = new FileCollector(limits);
    let first: GhCommit | undefined;
    let complete = false;
    // The commit's files come page by page with the commit itself.
    const maxPages = Math.ceil(limits.maxFiles / FILES_PER_PAGE);
    for (let page = 1; page <= maxPages && !files.full; page++) {
      const answer = await request<GhCommit>('GET', `${repoPath}/commits/${encodeURIComponent(sha)}`, {
        query: { per_page: FILES_PER_PAGE, page },
        signal,
      });
      const { body } = answer;
      first ??= body;
      const batch = body.files ?? [];
      for (const file of batch) files.add(fileInput(file));
      complete = !hasNextPage(answer.headers, batch.length, FILES_PER_PAGE);
      if (complete) break;
    }
    const found = first as GhCommit;
    const { title, description } = splitMessage(found.commit.message);
    const totalFiles = complete ? files.offered : null;
    return commitChange({
      kind: 'commit',
      url: webLink(found.html_url),
      title,
      description,
      author: login(found.author) ?? found.commit.author?.name ?? null,
      baseSha: found.parents[0]?.sha ?? null,
      headSha: found.sha,
      files: files.files,
      totalFiles,
      commits: boundCommits([{ sha: found.sha, message: found.commit.message }], limits, 1).commits,
      totalCommits: 1,
      notes: [
        ...files.notes(totalFiles),
        ...(complete ? [] : [`the commit changes more than ${files.files.length} files`]),
      ],
    });
  }

  async function range(base: string, head: string, options: GetChangeOptions): Promise<Change> {
    const limits = limitsOf(options);
    const { signal } = options;
    const path = `${repoPath}/compare/${encodeURIComponent(base)}...${encodeURIComponent(head)}`;
    const compare = (await request<GhCompare>('GET', path, { query: { per_page: 100, page: 1 }, signal }))
      .body;
    let headSha = compare.commits.at(-1)?.sha ?? compare.merge_base_commit.sha;
    if (compare.total_commits > compare.commits.length) {
      // Commits come oldest first: the head is on the last page.
      const last = Math.ceil(compare.total_commits / 100);
      const tail = (await request<GhCompare>('GET', path, { query: { per_page: 100, page: last }, signal }))
        .body;
      headSha = tail.commits.at(-1)?.sha ?? headSha;
    }
    const files = new FileCollector(limits);
    for (const file of compare.files ?? []) files.add(fileInput(file));
    const cut = (compare.files?.length ?? 0) >= COMPARE_FILES;
    const totalFiles = cut ? null : files.offered;
    const commits = boundCommits(
      compare.commits.map((c) => ({ sha: c.sha, message: c.commit.message })),
      limits,
      compare.total_commits,
    );
    return commitChange({
      kind: 'range',
      url: webLink(compare.html_url),
      ...rangeText(base, head, compare.total_commits),
      author: null,
      baseSha: compare.merge_base_commit.sha,
      headSha,
      files: files.files,
      totalFiles,
      commits: commits.commits,
      totalCommits: compare.total_commits,
      notes: [
        ...files.notes(totalFiles),
        ...(cut ? [`GitHub lists at most ${COMPARE_FILES} files of a comparison`] : []),
        ...commits.notes,
      ],
    });
  }

  const commitsPath = `${repoPath}/commits`;
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
      mergedChanges: ({ ref, signal }) => ({
        async eachPullRequest(visit) {
          const outcome = await eachPage<GhPull>(request, `${repoPath}/pulls`, {
            query: { state: 'closed', base: ref, sort: 'updated', direction: 'desc' },
            sizeParam: 'per_page',
            perPage: 100,
            maxPages: 10,
            signal,
            visit: (pull) => visit({ updatedAt: pull.updated_at, merged: merged(pull, ref) }),
          });
          return { complete: outcome !== 'limit' };
        },
        async eachCommit(visit) {
          const outcome = await eachPage<GhCommit>(request, commitsPath, {
            query: { sha: ref },
            sizeParam: 'per_page',
            perPage: 100,
            maxPages: MAX_COMMITS_WALKED / 100,
            signal,
            visit: (commit) =>
              visit({
                sha: commit.sha,
                parents: commit.parents.map((p) => p.sha),
                title: splitMessage(commit.commit.message).title,
                authoredAt: commit.commit.author?.date ?? null,
                committedAt: commit.commit.committer?.date ?? null,
                url: webLink(commit.html_url),
              }),
          });
          return { complete: outcome !== 'limit' };
        },
        async partOfMergedPullRequest({ sha }) {
          const { body } = await request<GhPull[]>('GET', `${commitsPath}/${sha}/pulls`, {
            query: { per_page: 100 },
            signal,
          });
          return Array.isArray(body) && body.some((p) => merged(p, ref) !== null);
        },
      }),
    },
  );
}

/** A pull request's merge into `ref`, or null when it was not merged there. */
function merged(pull: GhPull, ref: string): MergedPullRequest | null {
  if (!pull.merged_at || pull.base.ref !== ref) return null;
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
