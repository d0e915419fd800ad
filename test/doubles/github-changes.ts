/**
 * The GitHub double's answers about changes, from a real git repository (git-repository.ts):
 * a pull request in full, its files (with `patch`) and commits, a commit with its files, a
 * comparison, the commits of a branch, the pull requests of a commit, and issue comments — in
 * the shapes of GitHub's published description (checked against it by github-api.ts), paged
 * with `Link` headers as GitHub pages them.
 */
import type { CommitInfo, DiffEntry, GitRepository } from './git-repository.ts';
import type { HostAnswer, HostRequest } from './host-double.ts';

export interface GitHubPullState {
  number: number;
  title: string;
  body: string | null;
  head: string;
  base: string;
  draft: boolean;
  state: 'open' | 'closed';
  labels: string[];
  user: string;
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
  mergedAt: string | null;
  mergeCommitSha: string | null;
  /** Frozen when the pull request is merged: its head and the merge base its files were diffed from. */
  headSha: string | null;
  baseSha: string | null;
  /** The commits the merge put on the base branch. */
  landed: string[];
}

export interface GitHubComment {
  id: number;
  issue: number;
  body: string;
  user: string;
  createdAt: string;
}

export interface ChangeContext {
  origin: string;
  /** `/api/v3` or ''. */
  prefix: string;
  owner: string;
  name: string;
  git: GitRepository;
  pulls: GitHubPullState[];
  comments: GitHubComment[];
  /** Commit author emails that belong to GitHub accounts (else the commit's `author` is null). */
  logins: Record<string, string>;
  nextId: () => number;
  now: () => string;
  /** A pull request as GitHub's lists show it (`pull-request-simple`). */
  pullJson: (pull: GitHubPullState) => Json;
}

type Json = Record<string, unknown>;

/** GitHub leaves the patch out of a file whose diff is larger than this. */
export const GITHUB_PATCH_LIMIT = 1024 * 1024;
/** GitHub lists at most this many files of a pull request, and of a comparison. */
const PULL_FILES_LIMIT = 3000;
const COMPARE_FILES_LIMIT = 300;

const notFound = (): HostAnswer => ({
  status: 404,
  body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' },
});

/** One page of `items` by `per_page` (default 30, at most 100) and `page`, with GitHub's `Link` header. */
export function githubPage<T>(request: HostRequest, origin: string, items: T[], defaultPerPage = 30) {
  const perPage = Math.min(100, Math.max(1, Number(request.query.get('per_page') ?? defaultPerPage)));
  const page = Math.max(1, Number(request.query.get('page') ?? 1));
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const link = (n: number, rel: string) => {
    const query = new URLSearchParams(request.query);
    query.set('page', String(n));
    query.set('per_page', String(perPage));
    return `<${origin}${request.path}?${query}>; rel="${rel}"`;
  };
  const links = [
    ...(page < last ? [link(page + 1, 'next'), link(last, 'last')] : []),
    ...(page > 1 ? [link(1, 'first'), link(page - 1, 'prev')] : []),
  ];
  return {
    items: items.slice((page - 1) * perPage, page * perPage),
    headers: links.length > 0 ? { link: links.join(', ') } : ({} as Record<string, string>),
  };
}

export function changeEndpoints(context: ChangeContext) {
  const { origin, prefix, owner, name, git } = context;
  const web = `${origin}/${owner}/${name}`;
  const api = `${origin}${prefix}/repos/${owner}/${name}`;

  const user = (login: string) => ({
    login,
    id: login.length * 1000 + login.charCodeAt(0),
    node_id: `U_${login}`,
    avatar_url: `${origin}/avatars/${login}`,
    url: `${origin}${prefix}/users/${login}`,
    html_url: `${origin}/${login}`,
    type: 'User',
    site_admin: false,
  });

  function commitJson(info: CommitInfo, extra: Json = {}) {
    const login = context.logins[info.authorEmail];
    return {
      sha: info.sha,
      node_id: `C_${info.sha}`,
      url: `${api}/commits/${info.sha}`,
      html_url: `${web}/commit/${info.sha}`,
      comments_url: `${api}/commits/${info.sha}/comments`,
      commit: {
        url: `${api}/git/commits/${info.sha}`,
        author: { name: info.authorName, email: info.authorEmail, date: info.authorDate },
        committer: { name: 'Fixture Committer', email: 'committer@example.com', date: info.committerDate },
        message: info.message,
        comment_count: 0,
        tree: {
          sha: git.git(['rev-parse', `${info.sha}^{tree}`]).trim(),
          url: `${api}/git/trees/${info.sha}`,
        },
      },
      author: login ? user(login) : null,
      committer: null,
      parents: info.parents.map((sha) => ({
        sha,
        url: `${api}/commits/${sha}`,
        html_url: `${web}/commit/${sha}`,
      })),
      ...extra,
    };
  }

  const STATUS: Record<string, string> = {
    A: 'added',
    D: 'removed',
    M: 'modified',
    R: 'renamed',
    C: 'copied',
    T: 'changed',
  };

  function fileJson(entry: DiffEntry, head: string) {
    // GitHub's patch is the file's hunks without the last line end; none for a binary file, a
    // pure rename, or a diff too large to show.
    const text = entry.patch.replace(/\n$/, '');
    const patch = text !== '' && text.length <= GITHUB_PATCH_LIMIT ? { patch: text } : {};
    return {
      sha: entry.blob,
      filename: entry.path,
      status: STATUS[entry.status] ?? 'modified',
      additions: entry.additions,
      deletions: entry.deletions,
      changes: entry.additions + entry.deletions,
      blob_url: `${web}/blob/${head}/${encodeURI(entry.path)}`,
      raw_url: `${web}/raw/${head}/${encodeURI(entry.path)}`,
      contents_url: `${api}/contents/${encodeURI(entry.path)}?ref=${head}`,
      ...patch,
      ...(entry.previousPath !== null ? { previous_filename: entry.previousPath } : {}),
    };
  }

  /** Head and base of a pull request: frozen once merged, the branches' tips while open. */
  function pullShas(pull: GitHubPullState) {
    const head = pull.headSha ?? git.resolve(`refs/heads/${pull.head}`) ?? '0'.repeat(40);
    const baseTip = git.resolve(`refs/heads/${pull.base}`) ?? '0'.repeat(40);
    const mergeBase = pull.baseSha ?? git.mergeBase(baseTip, head) ?? baseTip;
    return { head, baseTip, mergeBase };
  }

  /** The pull request's commits, oldest first, as GitHub lists them (at most 250). */
  const pullCommits = (pull: GitHubPullState) => {
    const { head, mergeBase } = pullShas(pull);
    return git
      .log([`${mergeBase}..${head}`])
      .reverse()
      .slice(0, 250);
  };

  /** Everything GitHub says about one pull request (`pull-request`), beyond the list's fields. */
  function pullDetail(pull: GitHubPullState) {
    const { head, baseTip, mergeBase } = pullShas(pull);
    const files = git.diff(mergeBase, head);
    const branch = (ref: string, sha: string) => ({
      label: `${owner}:${ref}`,
      ref,
      sha,
      user: user(owner),
      repo: { id: 1, name, full_name: `${owner}/${name}` },
    });
    return {
      head: branch(pull.head, head),
      base: branch(pull.base, pull.baseSha ?? baseTip),
      body: pull.body,
      created_at: pull.createdAt,
      updated_at: pull.updatedAt,
      closed_at: pull.closedAt,
      merged_at: pull.mergedAt,
      merge_commit_sha: pull.mergeCommitSha,
      merged: pull.mergedAt !== null,
      mergeable: null,
      comments: context.comments.filter((c) => c.issue === pull.number).length,
      review_comments: 0,
      commits: pullCommits(pull).length,
      additions: files.reduce((sum, f) => sum + f.additions, 0),
      deletions: files.reduce((sum, f) => sum + f.deletions, 0),
      changed_files: files.length,
    };
  }

  function commentJson(comment: GitHubComment) {
    return {
      id: comment.id,
      node_id: `IC_${comment.id}`,
      url: `${api}/issues/comments/${comment.id}`,
      html_url: `${web}/pull/${comment.issue}#issuecomment-${comment.id}`,
      body: comment.body,
      user: user(comment.user),
      created_at: comment.createdAt,
      updated_at: comment.createdAt,
      issue_url: `${api}/issues/${comment.issue}`,
      author_association: 'NONE',
    };
  }

  const findPull = (number: string | undefined) => context.pulls.find((p) => p.number === Number(number));

  return {
    pullDetail,
    /** The answer of one of the change operations, or undefined for another operation. */
    answer(
      operationId: string,
      params: Record<string, string>,
      request: HostRequest,
      login: string,
    ): HostAnswer | undefined {
      switch (operationId) {
        case 'pulls/list-files': {
          const pull = findPull(params.pull_number);
          if (!pull) return notFound();
          const { head, mergeBase } = pullShas(pull);
          const all = git.diff(mergeBase, head).slice(0, PULL_FILES_LIMIT);
          const { items, headers } = githubPage(request, origin, all);
          return { status: 200, headers, body: items.map((f) => fileJson(f, head)) };
        }
        case 'pulls/list-commits': {
          const pull = findPull(params.pull_number);
          if (!pull) return notFound();
          const { items, headers } = githubPage(request, origin, pullCommits(pull));
          return { status: 200, headers, body: items.map((c) => commitJson(c)) };
        }
        case 'repos/get-commit': {
          const sha = git.resolve(params.ref ?? '');
          if (!sha)
            return {
              status: 422,
              body: {
                message: `No commit found for SHA: ${params.ref}`,
                documentation_url: 'https://docs.github.com/rest',
                status: '422',
              },
            };
          const info = git.info(sha);
          const all = git.diff(info.parents[0] ?? null, sha);
          const { items, headers } = githubPage(request, origin, all, 300);
          const stats = {
            additions: all.reduce((s, f) => s + f.additions, 0),
            deletions: all.reduce((s, f) => s + f.deletions, 0),
          };
          return {
            status: 200,
            headers,
            body: commitJson(info, {
              stats: { ...stats, total: stats.additions + stats.deletions },
              files: items.map((f) => fileJson(f, sha)),
            }),
          };
        }
        case 'repos/compare-commits-with-basehead': {
          const [base, head] = (params.basehead ?? '').split('...');
          const baseSha = git.resolve(base ?? '');
          const headSha = git.resolve(head ?? '');
          if (!baseSha || !headSha || head === undefined) return notFound();
          const mergeBase = git.mergeBase(baseSha, headSha) ?? baseSha;
          const commits = git.log([`${mergeBase}..${headSha}`]).reverse();
          const behind = git.log([`${headSha}..${baseSha}`]).length;
          const paged = request.query.has('page') || request.query.has('per_page');
          const { items, headers } = paged
            ? githubPage(request, origin, commits, 250)
            : { items: commits.slice(0, 250), headers: {} };
          const page = Number(request.query.get('page') ?? 1);
          const files = git.diff(mergeBase, headSha).slice(0, COMPARE_FILES_LIMIT);
          return {
            status: 200,
            headers,
            body: {
              url: `${api}/compare/${params.basehead}`,
              html_url: `${web}/compare/${params.basehead}`,
              permalink_url: `${web}/compare/${owner}:${baseSha}...${owner}:${headSha}`,
              diff_url: `${web}/compare/${params.basehead}.diff`,
              patch_url: `${web}/compare/${params.basehead}.patch`,
              base_commit: commitJson(git.info(baseSha)),
              merge_base_commit: commitJson(git.info(mergeBase)),
              status:
                commits.length === 0
                  ? behind === 0
                    ? 'identical'
                    : 'behind'
                  : behind === 0
                    ? 'ahead'
                    : 'diverged',
              ahead_by: commits.length,
              behind_by: behind,
              total_commits: commits.length,
              commits: items.map((c) => commitJson(c)),
              // Only the first page lists the files.
              files: page === 1 ? files.map((f) => fileJson(f, headSha)) : [],
            },
          };
        }
        case 'repos/list-commits': {
          const start = git.resolve(request.query.get('sha') ?? 'HEAD');
          if (!start) return notFound();
          const since = request.query.get('since');
          const all = git
            .log([start])
            .filter((c) => since === null || Date.parse(c.committerDate) >= Date.parse(since));
          const { items, headers } = githubPage(request, origin, all);
          return { status: 200, headers, body: items.map((c) => commitJson(c)) };
        }
        case 'repos/list-pull-requests-associated-with-commit': {
          const sha = git.resolve(params.commit_sha ?? '');
          if (!sha)
            return { status: 422, body: { message: `No commit found for SHA: ${params.commit_sha}` } };
          const pulls = context.pulls.filter(
            (p) =>
              p.landed.includes(sha) || p.mergeCommitSha === sha || pullCommits(p).some((c) => c.sha === sha),
          );
          return { status: 200, body: pulls.map((p) => context.pullJson(p)) };
        }
        case 'issues/create-comment': {
          const pull = findPull(params.issue_number);
          if (!pull) return notFound();
          const body = (request.body ?? {}) as Json;
          const comment: GitHubComment = {
            id: context.nextId(),
            issue: pull.number,
            body: String(body.body),
            user: login,
            createdAt: context.now(),
          };
          context.comments.push(comment);
          pull.updatedAt = comment.createdAt;
          return {
            status: 201,
            headers: { location: `${api}/issues/comments/${comment.id}` },
            body: commentJson(comment),
          };
        }
        default:
          return undefined;
      }
    },
  };
}
