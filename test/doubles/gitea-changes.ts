/**
 * The Gitea double's answers about changes, from a real git repository (git-repository.ts), in
 * the shapes of Gitea's swagger (1.22): a pull request in full, its files (`ChangedFile`, line
 * counts but no patch), its raw `.diff` (streamed as the client reads, so a test can tell that
 * a client stopped early), its commits (newest first), a commit (`/git/commits/{sha}`, files as
 * `CommitAffectedFiles` without renames, as Gitea lists them) and its `.diff`, a comparison
 * (commits only), the commits of a branch, the pull request a commit merged (by its merge commit
 * only, as Gitea finds it), and comments.
 */
import type { CommitInfo, DiffEntry, GitRepository } from './git-repository.ts';
import type { HostAnswer, HostRequest } from './host-double.ts';
import { paginate } from './host-double.ts';

export interface GiteaPullState {
  number: number;
  title: string;
  body: string;
  head: string;
  base: string;
  state: 'open' | 'closed';
  labels: number[];
  user: string;
  createdAt: string;
  updatedAt: string;
  merged: boolean;
  mergedAt: string | null;
  mergeCommitSha: string | null;
  headSha: string | null;
  baseSha: string | null;
}

export interface GiteaComment {
  id: number;
  issue: number;
  body: string;
  user: string;
  createdAt: string;
}

/** The query parameters each endpoint documents (others are recorded as violations). */
export const CHANGE_PARAMS: Record<string, Set<string>> = {
  pull: new Set(),
  files: new Set(['skip-to', 'whitespace', 'page', 'limit']),
  diff: new Set(['binary']),
  pullCommits: new Set(['page', 'limit', 'verification', 'files']),
  commit: new Set(['stat', 'verification', 'files']),
  compare: new Set(),
  commits: new Set(['sha', 'path', 'stat', 'verification', 'files', 'page', 'limit', 'not']),
  commitPull: new Set(),
};

export interface GiteaChangeContext {
  origin: string;
  owner: string;
  name: string;
  repoId: number;
  git: GitRepository;
  pulls: GiteaPullState[];
  comments: GiteaComment[];
  nextId: () => number;
  now: () => string;
  /** A pull request as Gitea's lists show it. */
  pullJson: (pull: GiteaPullState) => Record<string, unknown>;
}

/** One page (`limit` default 30, at most 50) with Gitea's headers: `Link`, `X-Total-Count`, `X-HasMore`. */
export function giteaPage<T>(request: HostRequest, origin: string, items: T[]) {
  const limit = Math.min(50, Math.max(1, Number(request.query.get('limit') ?? 30)));
  const page = Math.max(1, Number(request.query.get('page') ?? 1));
  const last = Math.max(1, Math.ceil(items.length / limit));
  const headers: Record<string, string> = {
    'x-total-count': String(items.length),
    'x-hasmore': String(page < last),
  };
  if (page < last) {
    const query = new URLSearchParams(request.query);
    query.set('page', String(page + 1));
    headers.link = `<${origin}${request.path}?${query}>; rel="next"`;
  }
  return { items: paginate(items, page, limit), headers };
}

/** A long text in pieces of 64 KiB, so that a streamed answer is written as the client reads. */
function* pieces(text: string, size = 64 * 1024) {
  for (let at = 0; at < text.length; at += size) yield text.slice(at, at + size);
}

const STATUS: Record<string, string> = { A: 'added', D: 'deleted', R: 'renamed', C: 'copied' };

export function giteaChangeEndpoints(context: GiteaChangeContext) {
  const { origin, owner, name, git } = context;
  const web = `${origin}/${owner}/${name}`;
  const api = `${origin}/api/v1/repos/${owner}/${name}`;
  const user = (login: string) => ({
    id: login.length,
    login,
    full_name: login,
    email: `${login}@example.com`,
    html_url: `${origin}/${login}`,
  });

  function commitJson(info: CommitInfo, options: { files?: boolean } = {}) {
    const files = options.files
      ? git.diff(info.parents[0] ?? null, info.sha).flatMap((entry) =>
          // Gitea lists a commit's files without finding renames: a removal and an addition.
          entry.status === 'R'
            ? [
                { filename: entry.previousPath!, status: 'removed' },
                { filename: entry.path, status: 'added' },
              ]
            : [
                {
                  filename: entry.path,
                  status: entry.status === 'A' ? 'added' : entry.status === 'D' ? 'removed' : 'modified',
                },
              ],
        )
      : undefined;
    return {
      url: `${api}/git/commits/${info.sha}`,
      sha: info.sha,
      created: info.committerDate,
      html_url: `${web}/commit/${info.sha}`,
      commit: {
        url: `${api}/git/commits/${info.sha}`,
        author: { name: info.authorName, email: info.authorEmail, date: info.authorDate },
        committer: { name: 'Fixture Committer', email: 'committer@example.com', date: info.committerDate },
        message: `${info.message}\n`,
        tree: { url: `${api}/git/trees/${info.sha}`, sha: info.sha, created: info.committerDate },
      },
      author: null,
      committer: null,
      parents: info.parents.map((sha) => ({
        url: `${api}/git/commits/${sha}`,
        sha,
        created: info.committerDate,
      })),
      ...(files ? { files } : {}),
    };
  }

  function changedFileJson(entry: DiffEntry, head: string) {
    const status =
      STATUS[entry.status] ?? (entry.additions === 0 && entry.deletions === 0 ? 'unchanged' : 'changed');
    return {
      filename: entry.path,
      ...(entry.previousPath !== null ? { previous_filename: entry.previousPath } : {}),
      status,
      additions: entry.additions,
      deletions: entry.deletions,
      changes: entry.additions + entry.deletions,
      html_url: `${web}/src/commit/${head}/${encodeURI(entry.path)}`,
      contents_url: `${api}/contents/${encodeURI(entry.path)}?ref=${head}`,
      raw_url: `${web}/raw/commit/${head}/${encodeURI(entry.path)}`,
    };
  }

  function shas(pull: GiteaPullState) {
    const head = pull.headSha ?? git.resolve(`refs/heads/${pull.head}`) ?? '0'.repeat(40);
    const baseTip = git.resolve(`refs/heads/${pull.base}`) ?? '0'.repeat(40);
    const base = pull.baseSha ?? git.mergeBase(baseTip, head) ?? baseTip;
    return { head, base, baseTip };
  }

  const findPull = (index: string) => context.pulls.find((p) => p.number === Number(index));
  const notFound = (): HostAnswer => ({
    status: 404,
    body: { message: "The target couldn't be found.", url: `${origin}/api/swagger`, errors: [] },
  });

  return {
    /** The answer for `rest` (the path after `/repos/{owner}/{repo}`), or undefined. */
    answer(
      rest: string,
      request: HostRequest,
      login: string,
      violation: (message: string) => void,
    ): HostAnswer | undefined {
      const check = (params: Set<string> | undefined) => {
        for (const param of request.query.keys())
          if (!params?.has(param)) violation(`unknown query parameter ${param}`);
      };
      let match = /^\/pulls\/(\d+)(\.diff|\/files|\/commits)?$/.exec(rest);
      if (match && request.method === 'GET') {
        const pull = findPull(match[1]!);
        if (!pull) return notFound();
        const { head, base, baseTip } = shas(pull);
        if (!match[2]) {
          check(CHANGE_PARAMS.pull);
          const files = git.diff(base, head);
          return {
            status: 200,
            body: {
              ...context.pullJson(pull),
              merge_base: base,
              changed_files: files.length,
              additions: files.reduce((n, f) => n + f.additions, 0),
              deletions: files.reduce((n, f) => n + f.deletions, 0),
              head: { label: pull.head, ref: pull.head, sha: head, repo_id: context.repoId },
              base: {
                label: pull.base,
                ref: pull.base,
                sha: pull.baseSha ?? baseTip,
                repo_id: context.repoId,
              },
            },
          };
        }
        if (match[2] === '/files') {
          check(CHANGE_PARAMS.files);
          const { items, headers } = giteaPage(request, origin, git.diff(base, head));
          return { status: 200, headers, body: items.map((entry) => changedFileJson(entry, head)) };
        }
        if (match[2] === '/commits') {
          check(CHANGE_PARAMS.pullCommits);
          const { items, headers } = giteaPage(request, origin, git.log([`${base}..${head}`]));
          return { status: 200, headers, body: items.map((c) => commitJson(c)) };
        }
        check(CHANGE_PARAMS.diff);
        return { status: 200, text: pieces(git.rawDiff(base, head)) };
      }
      match = /^\/git\/commits\/([^/.]+)(\.diff)?$/.exec(rest);
      if (match && request.method === 'GET') {
        const sha = git.resolve(decodeURIComponent(match[1]!));
        if (!sha) return notFound();
        const info = git.info(sha);
        if (match[2]) {
          check(CHANGE_PARAMS.diff);
          return { status: 200, text: pieces(git.rawDiff(info.parents[0] ?? null, sha)) };
        }
        check(CHANGE_PARAMS.commit);
        return { status: 200, body: commitJson(info, { files: request.query.get('files') !== 'false' }) };
      }
      match = /^\/compare\/(.+)$/.exec(rest);
      if (match && request.method === 'GET') {
        check(CHANGE_PARAMS.compare);
        const [from, to] = decodeURIComponent(match[1]!).split('...');
        const fromSha = git.resolve(from ?? '');
        const toSha = to === undefined ? null : git.resolve(to);
        if (!fromSha || !toSha) return notFound();
        const commits = git.log([`${git.mergeBase(fromSha, toSha) ?? fromSha}..${toSha}`]);
        return {
          status: 200,
          body: {
            total_commits: commits.length,
            commits: commits.map((c) => commitJson(c, { files: true })),
          },
        };
      }
      if (rest === '/commits' && request.method === 'GET') {
        check(CHANGE_PARAMS.commits);
        const start = git.resolve(request.query.get('sha') ?? 'HEAD');
        if (!start) return notFound();
        const { items, headers } = giteaPage(request, origin, git.log([start]));
        return {
          status: 200,
          headers,
          body: items.map((c) => commitJson(c, { files: request.query.get('files') !== 'false' })),
        };
      }
      match = /^\/commits\/([^/]+)\/pull$/.exec(rest);
      if (match && request.method === 'GET') {
        check(CHANGE_PARAMS.commitPull);
        const pull = context.pulls.find((p) => p.mergeCommitSha !== null && p.mergeCommitSha === match![1]);
        return pull ? { status: 200, body: context.pullJson(pull) } : notFound();
      }
      match = /^\/issues\/(\d+)\/comments$/.exec(rest);
      if (match && request.method === 'POST') {
        const pull = findPull(match[1]!);
        if (!pull) return notFound();
        const body = (request.body ?? {}) as Record<string, unknown>;
        for (const field of Object.keys(body)) if (field !== 'body') violation(`unknown body field ${field}`);
        if (typeof body.body !== 'string') {
          return {
            status: 422,
            body: [{ fieldNames: ['Body'], classification: 'RequiredError', message: 'Required' }],
          };
        }
        const comment: GiteaComment = {
          id: context.nextId(),
          issue: pull.number,
          body: body.body,
          user: login,
          createdAt: context.now(),
        };
        context.comments.push(comment);
        pull.updatedAt = comment.createdAt;
        return {
          status: 201,
          body: {
            id: comment.id,
            html_url: `${web}/pulls/${pull.number}#issuecomment-${comment.id}`,
            pull_request_url: `${web}/pulls/${pull.number}`,
            issue_url: '',
            user: user(login),
            original_author: '',
            original_author_id: 0,
            body: comment.body,
            assets: [],
            created_at: comment.createdAt,
            updated_at: comment.createdAt,
          },
        };
      }
      return undefined;
    },
  };
}
