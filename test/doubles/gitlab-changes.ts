/**
 * The GitLab double's answers about changes, from a real git repository (git-repository.ts), in
 * the documented shapes of GitLab's REST API v4: a merge request in full, its diffs (binary
 * files as git's "Binary files … differ", diffs over GitLab's size limit collapsed to an empty
 * string) and commits (newest first), a commit and its diff, a comparison, the commits of a
 * branch, the merge requests of a commit, and notes; paged with `x-next-page` and friends.
 */
import type { CommitInfo, DiffEntry, GitRepository } from './git-repository.ts';
import type { HostAnswer, HostRequest } from './host-double.ts';
import { paginate } from './host-double.ts';

export interface GitLabMergeState {
  id: number;
  iid: number;
  title: string;
  description: string | null;
  sourceBranch: string;
  targetBranch: string;
  state: 'opened' | 'closed' | 'merged';
  labels: string[];
  author: string;
  createdAt: string;
  updatedAt: string;
  mergedAt: string | null;
  mergeCommitSha: string | null;
  squashCommitSha: string | null;
  /** Frozen when merged or closed. */
  headSha: string | null;
  baseSha: string | null;
  landed: string[];
}

export interface GitLabNote {
  id: number;
  iid: number;
  body: string;
  author: string;
  createdAt: string;
}

/** GitLab collapses a file's diff larger than this (its default `max_diff_size` is 200 KB). */
export const GITLAB_DIFF_LIMIT = 200 * 1024;

/** The query parameters each endpoint documents (others are recorded as violations). */
export const CHANGE_PARAMS: Record<string, Set<string>> = {
  mergeRequest: new Set(['render_html', 'include_diverged_commits_count', 'include_rebase_in_progress']),
  diffs: new Set(['page', 'per_page', 'unidiff']),
  mergeRequestCommits: new Set(['page', 'per_page']),
  commit: new Set(['stats']),
  compare: new Set(['from', 'to', 'from_project_id', 'straight', 'unidiff']),
  commits: new Set([
    'ref_name',
    'since',
    'until',
    'path',
    'author',
    'all',
    'with_stats',
    'first_parent',
    'order',
    'trailers',
    'page',
    'per_page',
  ]),
  commitMergeRequests: new Set(['state', 'page', 'per_page']),
  notes: new Set(['body', 'created_at', 'internal', 'merge_request_diff_head_sha']),
};

export interface GitLabChangeContext {
  origin: string;
  path: string;
  projectId: number;
  git: GitRepository;
  mergeRequests: GitLabMergeState[];
  notes: GitLabNote[];
  nextId: () => number;
  now: () => string;
  /** A merge request as GitLab's lists show it. */
  mrJson: (mr: GitLabMergeState) => Record<string, unknown>;
}

/** One page of `items` with GitLab's pagination headers (default 20, at most 100). */
export function gitlabPage<T>(request: HostRequest, items: T[]) {
  const perPage = Math.min(100, Math.max(1, Number(request.query.get('per_page') ?? 20)));
  const page = Math.max(1, Number(request.query.get('page') ?? 1));
  const totalPages = Math.max(1, Math.ceil(items.length / perPage));
  return {
    items: paginate(items, page, perPage),
    headers: {
      'x-total': String(items.length),
      'x-total-pages': String(totalPages),
      'x-per-page': String(perPage),
      'x-page': String(page),
      'x-next-page': page < totalPages ? String(page + 1) : '',
      'x-prev-page': page > 1 ? String(page - 1) : '',
    },
  };
}

const notFound = (what: string): HostAnswer => ({ status: 404, body: { message: `404 ${what} Not Found` } });

export function gitLabChangeEndpoints(context: GitLabChangeContext) {
  const { origin, path, git } = context;
  const web = `${origin}/${path}`;

  function commitJson(info: CommitInfo, extra: Record<string, unknown> = {}) {
    const [title] = info.message.split('\n');
    return {
      id: info.sha,
      short_id: info.sha.slice(0, 8),
      created_at: info.committerDate,
      parent_ids: info.parents,
      title,
      message: info.message,
      author_name: info.authorName,
      author_email: info.authorEmail,
      authored_date: info.authorDate,
      committer_name: 'Fixture Committer',
      committer_email: 'committer@example.com',
      committed_date: info.committerDate,
      trailers: {},
      web_url: `${web}/-/commit/${info.sha}`,
      ...extra,
    };
  }

  function diffJson(entry: DiffEntry, unidiff: boolean) {
    const oldPath = entry.previousPath ?? entry.path;
    let diff = entry.binary ? `Binary files a/${oldPath} and b/${entry.path} differ\n` : entry.patch;
    if (diff.length > GITLAB_DIFF_LIMIT) diff = '';
    if (unidiff && diff !== '' && !entry.binary) {
      const from = entry.status === 'A' ? '/dev/null' : `a/${oldPath}`;
      const to = entry.status === 'D' ? '/dev/null' : `b/${entry.path}`;
      diff = `--- ${from}\n+++ ${to}\n${diff}`;
    }
    return {
      old_path: oldPath,
      new_path: entry.path,
      a_mode: entry.status === 'A' ? '0' : '100644',
      b_mode: entry.status === 'D' ? '0' : '100644',
      diff,
      new_file: entry.status === 'A',
      renamed_file: entry.status === 'R',
      deleted_file: entry.status === 'D',
      generated_file: false,
    };
  }

  function shas(mr: GitLabMergeState) {
    const head = mr.headSha ?? git.resolve(`refs/heads/${mr.sourceBranch}`) ?? '0'.repeat(40);
    const targetTip = git.resolve(`refs/heads/${mr.targetBranch}`) ?? '0'.repeat(40);
    const base = mr.baseSha ?? git.mergeBase(targetTip, head) ?? targetTip;
    return { head, base };
  }

  const mrCommits = (mr: GitLabMergeState) => {
    const { head, base } = shas(mr);
    return git.log([`${base}..${head}`]);
  };

  const unidiff = (request: HostRequest) => request.query.get('unidiff') === 'true';
  const findMr = (iid: string) => context.mergeRequests.find((m) => m.iid === Number(iid));

  return {
    /** The answer for `rest` (the path after `/projects/:id`), or undefined when it is not a change endpoint. */
    answer(
      rest: string,
      request: HostRequest,
      author: string,
      violation: (message: string) => void,
    ): HostAnswer | undefined {
      const check = (params: Set<string> | undefined) => {
        for (const name of request.query.keys())
          if (!params?.has(name)) violation(`unknown query parameter ${name}`);
      };
      let match = /^\/merge_requests\/(\d+)(\/diffs|\/commits|\/notes)?$/.exec(rest);
      if (match) {
        const mr = findMr(match[1]!);
        if (!mr) return notFound('');
        const { head, base } = shas(mr);
        if (!match[2] && request.method === 'GET') {
          check(CHANGE_PARAMS.mergeRequest);
          const files = git.diff(base, head);
          return {
            status: 200,
            body: {
              ...context.mrJson(mr),
              diff_refs: { base_sha: base, head_sha: head, start_sha: base },
              changes_count: String(files.length),
              user_notes_count: context.notes.filter((n) => n.iid === mr.iid).length,
            },
          };
        }
        if (match[2] === '/diffs' && request.method === 'GET') {
          check(CHANGE_PARAMS.diffs);
          const { items, headers } = gitlabPage(request, git.diff(base, head));
          return { status: 200, headers, body: items.map((entry) => diffJson(entry, unidiff(request))) };
        }
        if (match[2] === '/commits' && request.method === 'GET') {
          check(CHANGE_PARAMS.mergeRequestCommits);
          const { items, headers } = gitlabPage(request, mrCommits(mr));
          return { status: 200, headers, body: items.map((c) => commitJson(c)) };
        }
        if (match[2] === '/notes' && request.method === 'POST') {
          const body = (request.body ?? {}) as Record<string, unknown>;
          for (const name of Object.keys(body))
            if (!CHANGE_PARAMS.notes?.has(name)) violation(`unknown body parameter ${name}`);
          if (typeof body.body !== 'string' || body.body === '')
            return { status: 400, body: { error: 'body is missing' } };
          const note: GitLabNote = {
            id: context.nextId(),
            iid: mr.iid,
            body: body.body,
            author,
            createdAt: context.now(),
          };
          context.notes.push(note);
          mr.updatedAt = note.createdAt;
          return {
            status: 201,
            body: {
              id: note.id,
              type: null,
              body: note.body,
              attachment: null,
              author: {
                id: 1,
                username: author,
                name: author,
                state: 'active',
                web_url: `${origin}/${author}`,
              },
              created_at: note.createdAt,
              updated_at: note.createdAt,
              system: false,
              noteable_id: mr.id,
              noteable_type: 'MergeRequest',
              project_id: context.projectId,
              noteable_iid: mr.iid,
              resolvable: false,
              confidential: false,
              internal: false,
            },
          };
        }
        return undefined;
      }
      match = /^\/repository\/commits\/([^/]+)(\/diff|\/merge_requests)?$/.exec(rest);
      if (match && request.method === 'GET') {
        const sha = git.resolve(decodeURIComponent(match[1]!));
        if (!sha) return notFound('Commit');
        const info = git.info(sha);
        if (!match[2]) {
          check(CHANGE_PARAMS.commit);
          const files = git.diff(info.parents[0] ?? null, sha);
          const additions = files.reduce((n, f) => n + f.additions, 0);
          const deletions = files.reduce((n, f) => n + f.deletions, 0);
          return {
            status: 200,
            body: commitJson(info, {
              stats: { additions, deletions, total: additions + deletions },
              status: null,
              project_id: context.projectId,
            }),
          };
        }
        if (match[2] === '/diff') {
          check(CHANGE_PARAMS.diffs);
          const { items, headers } = gitlabPage(request, git.diff(info.parents[0] ?? null, sha));
          return { status: 200, headers, body: items.map((entry) => diffJson(entry, unidiff(request))) };
        }
        check(CHANGE_PARAMS.commitMergeRequests);
        const related = context.mergeRequests.filter(
          (mr) =>
            mr.landed.includes(sha) || mr.mergeCommitSha === sha || mrCommits(mr).some((c) => c.sha === sha),
        );
        return { status: 200, body: related.map((mr) => context.mrJson(mr)) };
      }
      if (rest === '/repository/commits' && request.method === 'GET') {
        check(CHANGE_PARAMS.commits);
        const start = git.resolve(request.query.get('ref_name') ?? 'HEAD');
        if (!start) return notFound('Reference');
        const since = request.query.get('since');
        const all = git
          .log([start], { firstParent: request.query.get('first_parent') === 'true' })
          .filter((c) => since === null || Date.parse(c.committerDate) >= Date.parse(since));
        const { items, headers } = gitlabPage(request, all);
        return { status: 200, headers, body: items.map((c) => commitJson(c)) };
      }
      if (rest === '/repository/compare' && request.method === 'GET') {
        check(CHANGE_PARAMS.compare);
        const from = git.resolve(request.query.get('from') ?? '');
        const to = git.resolve(request.query.get('to') ?? '');
        if (!from || !to) return notFound('Ref');
        const straight = request.query.get('straight') === 'true';
        const base = straight ? from : (git.mergeBase(from, to) ?? from);
        const commits = git.log([`${base}..${to}`]).reverse();
        return {
          status: 200,
          body: {
            commit: commitJson(git.info(to)),
            commits: commits.map((c) => commitJson(c)),
            diffs: git.diff(base, to).map((entry) => diffJson(entry, unidiff(request))),
            compare_timeout: false,
            compare_same_ref: from === to,
            web_url: `${web}/-/compare/${from}...${to}`,
          },
        };
      }
      return undefined;
    },
  };
}
