/**
 * Changes through GitLab's REST API (v4): a merge request (`/merge_requests/:iid`, its `/diffs`
 * and `/commits`), a commit (`/repository/commits/:sha` and its `/diff`), a range
 * (`/repository/compare`), notes on merge requests, and the merged merge requests and pushes of
 * a branch (`/merge_requests?state=merged`, `/repository/commits?first_parent=true`,
 * `/repository/commits/:sha/merge_requests`).
 */
import type { Redact } from '../../redact.ts';
import {
  boundCommits,
  type Change,
  type ChangeCommit,
  commitChange,
  countDiffLines,
  FileCollector,
  type FileInput,
  type GetChangeOptions,
  hunksOf,
  limitsOf,
  type MergedPullRequest,
  rangeText,
  splitMessage,
  webLink,
} from './change.ts';
import type { CodeHost } from './host.ts';
import { hostChanges } from './host-changes.ts';
import { eachPage, type JsonApi } from './http.ts';
import { MAX_COMMITS_WALKED } from './merged-changes.ts';

interface GlMergeRequest {
  iid: number;
  title: string;
  description: string | null;
  state: 'opened' | 'closed' | 'locked' | 'merged';
  author: { username: string } | null;
  source_branch: string;
  target_branch: string;
  sha: string | null;
  merge_commit_sha: string | null;
  squash_commit_sha?: string | null;
  merged_at: string | null;
  updated_at: string;
  labels: string[];
  web_url: string;
  diff_refs: { base_sha: string | null; head_sha: string | null } | null;
  /** A string, "1000+" past GitLab's limit. */
  changes_count: string | null;
}

interface GlDiff {
  old_path: string;
  new_path: string;
  a_mode: string;
  b_mode: string;
  diff: string;
  new_file: boolean;
  renamed_file: boolean;
  deleted_file: boolean;
}

interface GlCommit {
  id: string;
  title: string;
  message: string;
  author_name: string;
  parent_ids: string[];
  authored_date?: string | null;
  committed_date: string | null;
  web_url: string;
}

interface GlCompare {
  commit: GlCommit | null;
  commits: GlCommit[];
  diffs: GlDiff[];
  compare_timeout: boolean;
  web_url?: string;
}

const PER_PAGE = 100;
const BINARY = /^Binary files .* differ$/m;

/**
 * A file of GitLab's diffs. GitLab counts no lines: they are counted from the diff. An empty
 * diff is one GitLab collapsed for its size — or a pure rename or mode change, which have none:
 * only those are taken at their word (no lines); otherwise the counts are unknown.
 */
function fileInput(diff: GlDiff): FileInput {
  const previousPath = diff.renamed_file ? diff.old_path : null;
  const status = diff.new_file
    ? 'added'
    : diff.deleted_file
      ? 'removed'
      : diff.renamed_file
        ? 'renamed'
        : 'modified';
  const path = diff.deleted_file ? diff.old_path : diff.new_path;
  if (BINARY.test(diff.diff)) {
    return { path, previousPath, status, additions: 0, deletions: 0, binary: true, diff: null };
  }
  const hunks = hunksOf(diff.diff);
  const noContent = status === 'renamed' || (status === 'modified' && diff.a_mode !== diff.b_mode);
  const collapsed = hunks === '' && !noContent;
  const counts = collapsed ? { additions: null, deletions: null } : countDiffLines(hunks);
  return {
    path,
    previousPath,
    status,
    ...counts,
    binary: false,
    diff: hunks || null,
    hostTruncated: collapsed,
  };
}

const gitlabState = (state: GlMergeRequest['state']) =>
  state === 'merged' ? 'merged' : state === 'opened' || state === 'locked' ? 'open' : 'closed';

export function gitLabChanges(context: {
  request: JsonApi;
  /** `project/path`, for messages. */
  path: string;
  /** The project's web URL (links to notes). */
  webUrl: string;
  host: string;
  redact: Redact;
}): Pick<CodeHost, 'getChange' | 'commentOnChange' | 'listMergedChanges'> {
  const { request, path, host, redact } = context;

  /** Diffs of a list endpoint, page by page, into `files` until it is full. */
  async function readDiffs(endpoint: string, files: FileCollector, signal?: AbortSignal) {
    const outcome = await eachPage<GlDiff>(request, endpoint, {
      sizeParam: 'per_page',
      perPage: PER_PAGE,
      maxPages: Math.ceil(files.room / PER_PAGE) + 1,
      signal,
      visit: (diff) => {
        files.add(fileInput(diff));
        return !files.full;
      },
    });
    return outcome;
  }

  async function mergeRequest(iid: number, options: GetChangeOptions): Promise<Change> {
    const limits = limitsOf(options);
    const { signal } = options;
    const mr = (await request<GlMergeRequest>('GET', `/merge_requests/${iid}`, { signal })).body;
    const files = new FileCollector(limits);
    const outcome = await readDiffs(`/merge_requests/${iid}/diffs`, files, signal);
    const listed: ChangeCommit[] = [];
    let total = 0;
    // GitLab lists a merge request's commits newest first.
    const commitsOutcome = await eachPage<GlCommit>(request, `/merge_requests/${iid}/commits`, {
      sizeParam: 'per_page',
      perPage: PER_PAGE,
      maxPages: Math.ceil(limits.maxCommits / PER_PAGE),
      signal,
      visit: (commit) => {
        total++;
        if (listed.length < limits.maxCommits) listed.push({ sha: commit.id, message: commit.message });
        return true;
      },
    });
    const counted =
      mr.changes_count !== null && /^\d+$/.test(mr.changes_count ?? '') ? Number(mr.changes_count) : null;
    const totalFiles = counted ?? (outcome === 'end' ? files.offered : null);
    const totalCommits = commitsOutcome === 'end' ? total : null;
    const commits = boundCommits(listed.reverse(), limits, totalCommits);
    return {
      kind: 'pull-request',
      number: mr.iid,
      url: webLink(mr.web_url),
      title: mr.title,
      description: mr.description ?? '',
      author: mr.author?.username ?? null,
      state: gitlabState(mr.state),
      baseRef: mr.target_branch,
      headRef: mr.source_branch,
      baseSha: mr.diff_refs?.base_sha ?? null,
      headSha: mr.diff_refs?.head_sha ?? mr.sha ?? '',
      files: files.files,
      totalFiles,
      commits: commits.commits,
      totalCommits,
      notes: [
        ...files.notes(totalFiles),
        ...(counted === null && mr.changes_count ? [`GitLab counts ${mr.changes_count} changed files`] : []),
        ...commits.notes,
      ],
    };
  }

  async function commit(sha: string, options: GetChangeOptions): Promise<Change> {
    const limits = limitsOf(options);
    const { signal } = options;
    const found = (
      await request<GlCommit>('GET', `/repository/commits/${encodeURIComponent(sha)}`, { signal })
    ).body;
    const files = new FileCollector(limits);
    const outcome = await readDiffs(
      `/repository/commits/${encodeURIComponent(found.id)}/diff`,
      files,
      signal,
    );
    const { title, description } = splitMessage(found.message);
    const totalFiles = outcome === 'end' ? files.offered : null;
    return commitChange({
      kind: 'commit',
      url: webLink(found.web_url),
      title,
      description,
      author: found.author_name ?? null,
      baseSha: found.parent_ids[0] ?? null,
      headSha: found.id,
      files: files.files,
      totalFiles,
      commits: boundCommits([{ sha: found.id, message: found.message }], limits, 1).commits,
      totalCommits: 1,
      notes: [
        ...files.notes(totalFiles),
        ...(totalFiles === null ? [`the commit changes more than ${files.files.length} files`] : []),
      ],
    });
  }

  async function range(base: string, head: string, options: GetChangeOptions): Promise<Change> {
    const limits = limitsOf(options);
    const { signal } = options;
    const compare = (
      await request<GlCompare>('GET', '/repository/compare', {
        query: { from: base, to: head, straight: false },
        signal,
      })
    ).body;
    const files = new FileCollector(limits);
    for (const diff of compare.diffs ?? []) files.add(fileInput(diff));
    const commits = boundCommits(
      (compare.commits ?? []).map((c) => ({ sha: c.id, message: c.message })),
      limits,
      compare.commits?.length ?? 0,
    );
    const headSha = compare.commit?.id ?? compare.commits?.at(-1)?.id ?? '';
    return commitChange({
      kind: 'range',
      url: webLink(compare.web_url),
      ...rangeText(base, head, compare.commits?.length ?? 0),
      author: null,
      // GitLab's comparison does not name the merge base it diffs from.
      baseSha: null,
      headSha,
      files: files.files,
      totalFiles: files.offered,
      commits: commits.commits,
      totalCommits: compare.commits?.length ?? 0,
      notes: [
        ...files.notes(files.offered),
        ...(compare.compare_timeout
          ? ['GitLab timed out comparing: the list of files may be incomplete']
          : []),
        ...commits.notes,
      ],
    });
  }

  return hostChanges(
    { host, repository: path, redact, noun: 'merge request', mark: '!' },
    {
      pullRequest: mergeRequest,
      commit,
      range,
      async comment(number, body, signal) {
        const { body: note } = await request('POST', `/merge_requests/${number}/notes`, {
          body: { body },
          signal,
        });
        const id = (note as { id: number }).id;
        // A note's answer carries no link; this is the one GitLab's pages use.
        return { id, url: webLink(`${context.webUrl}/-/merge_requests/${number}#note_${id}`) };
      },
      mergedChanges: ({ ref, signal, since }) => ({
        async eachPullRequest(visit) {
          const outcome = await eachPage<GlMergeRequest>(request, '/merge_requests', {
            query: {
              state: 'merged',
              target_branch: ref,
              order_by: 'updated_at',
              sort: 'desc',
              updated_after: since.mergedAt,
            },
            sizeParam: 'per_page',
            perPage: PER_PAGE,
            maxPages: 10,
            signal,
            visit: (mr) => visit({ updatedAt: mr.updated_at, merged: merged(mr, ref) }),
          });
          return { complete: outcome !== 'limit' };
        },
        async eachCommit(visit) {
          const outcome = await eachPage<GlCommit>(request, '/repository/commits', {
            query: { ref_name: ref, first_parent: true },
            sizeParam: 'per_page',
            perPage: PER_PAGE,
            maxPages: MAX_COMMITS_WALKED / PER_PAGE,
            signal,
            visit: (commit) =>
              visit({
                sha: commit.id,
                parents: commit.parent_ids,
                title: commit.title,
                authoredAt: commit.authored_date ?? null,
                committedAt: commit.committed_date,
                url: webLink(commit.web_url),
              }),
          });
          return { complete: outcome !== 'limit' };
        },
        async partOfMergedPullRequest({ sha }) {
          const { body } = await request<GlMergeRequest[]>(
            'GET',
            `/repository/commits/${sha}/merge_requests`,
            { signal },
          );
          return Array.isArray(body) && body.some((mr) => merged(mr, ref) !== null);
        },
      }),
    },
  );
}

/** A merge request's merge into `ref`, or null when it was not merged there. */
function merged(mr: GlMergeRequest, ref: string): MergedPullRequest | null {
  if (mr.state !== 'merged' || mr.target_branch !== ref) return null;
  return {
    number: mr.iid,
    title: mr.title,
    headRef: mr.source_branch,
    headSha: mr.sha ?? null,
    // A fast-forward merge makes no commit of its own: its commits are found as the merge request's.
    mergeCommitSha: mr.merge_commit_sha ?? mr.squash_commit_sha ?? null,
    mergedAt: mr.merged_at ?? mr.updated_at,
    labels: mr.labels ?? [],
    url: webLink(mr.web_url),
  };
}
