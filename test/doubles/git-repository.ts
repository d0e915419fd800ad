/**
 * A real bare git repository for the code-host doubles to answer from: commits made with git's
 * plumbing (no work tree, so 10,000 files take one `hash-object` and one `update-index`), merges
 * the way the hosts make them (merge commit, squash, rebase), and the facts the hosts' APIs
 * report — diffs, counts, logs, merge bases — read from git's own machine-readable output, never
 * from docwright's parsers. Commit times come from a clock that moves one minute per commit, so
 * tests can place a cursor between two commits. Serve it over HTTP by creating it in
 * `startGitHttpServer(…).root`.
 *
 *   const repo = createGitRepository({ 'README.md': '# api\n' });
 *   const base = repo.head('main');
 *   repo.commit('feature', { 'src/a.ts': 'export {}\n' }, { from: 'main', message: 'Add a' });
 *   repo.diff(base, repo.head('feature')) // [{ path: 'src/a.ts', status: 'A', additions: 1, … }]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface CommitInfo {
  sha: string;
  parents: string[];
  /** The whole message. */
  message: string;
  authorName: string;
  authorEmail: string;
  authorDate: string;
  committerDate: string;
}

export interface DiffEntry {
  path: string;
  previousPath: string | null;
  /** git's letter: A, M, D, R (a rename), C (a copy), T (type change). */
  status: string;
  additions: number;
  deletions: number;
  binary: boolean;
  /** The file's hunks, from its first `@@` ('' for binary files and pure renames). */
  patch: string;
  /** The blob after the change (before it, for a deletion). */
  blob: string;
}

/** path → new content; `null` deletes the file. */
export type FileChanges = Record<string, string | Buffer | null>;

export interface GitRepository {
  /** The bare repository. */
  dir: string;
  git(args: string[], input?: string): string;
  /** The commit a branch or any revision names, or null. */
  resolve(revision: string): string | null;
  /** The tip of `branch` (throws when there is none). */
  head(branch: string): string;
  /**
   * Commits `changes` on `branch` (created from `from` when it does not exist yet), moving the
   * branch; returns the commit. Renames are a deletion and an addition of the same content.
   */
  commit(
    branch: string,
    changes: FileChanges,
    options?: { from?: string; message?: string; author?: { name: string; email: string } },
  ): string;
  /** Merges `head` into `base` as a host would; returns every commit the merge put on `base`, the last one last. */
  merge(base: string, head: string, method: 'merge' | 'squash' | 'rebase', message: string): string[];
  mergeBase(a: string, b: string): string | null;
  info(sha: string): CommitInfo;
  /** Commits of `revisions` (git log's arguments, e.g. `['a..b']`), newest first. */
  log(revisions: string[], options?: { firstParent?: boolean }): CommitInfo[];
  /** The files changed from `from` (null: nothing, for a root commit) to `to`, as git diff finds them (renames too). */
  diff(from: string | null, to: string): DiffEntry[];
  /** `git diff -M from to` as git prints it (headers, hunks, `Binary files … differ`). */
  rawDiff(from: string | null, to: string): string;
  /** The time the next commit will have. */
  now(): Date;
  /** Moves the clock on (e.g. past a cursor). */
  tick(ms: number): void;
  close(): void;
}

const IDENTITY = { name: 'Fixture Author', email: 'author@example.com' };

export function createGitRepository(
  files: FileChanges,
  options: { dir?: string; branch?: string; start?: Date } = {},
): GitRepository {
  const owned = options.dir === undefined;
  const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), 'docwright-git-repository-'));
  const scratch = mkdtempSync(path.join(tmpdir(), 'docwright-git-scratch-'));
  let clock = (options.start ?? new Date('2025-01-01T00:00:00Z')).getTime();
  let counter = 0;

  const git = (args: string[], input?: string, env: Record<string, string> = {}): string =>
    execFileSync('git', args, {
      cwd: dir,
      encoding: 'utf8',
      input,
      maxBuffer: 512 * 1024 * 1024,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        ...process.env,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        LC_ALL: 'C',
        ...env,
      },
    });

  mkdirSync(dir, { recursive: true });
  git(['init', '-q', '--bare', '-b', options.branch ?? 'main']);
  git(['config', 'http.receivepack', 'true']);
  git(['config', 'uploadpack.allowFilter', 'true']);
  git(['config', 'uploadpack.allowAnySHA1InWant', 'true']);

  const resolve = (revision: string): string | null => {
    try {
      return git(['rev-parse', '--verify', '--quiet', `${revision}^{commit}`]).trim() || null;
    } catch {
      return null;
    }
  };

  /** Author and committer at the clock's time, which then moves a minute on (a rebase keeps the author's). */
  const stamp = (author: { name: string; email: string; date?: string } = IDENTITY) => {
    const date = new Date(clock).toISOString();
    clock += 60_000;
    return {
      GIT_AUTHOR_NAME: author.name,
      GIT_AUTHOR_EMAIL: author.email,
      GIT_AUTHOR_DATE: author.date ?? date,
      GIT_COMMITTER_NAME: 'Fixture Committer',
      GIT_COMMITTER_EMAIL: 'committer@example.com',
      GIT_COMMITTER_DATE: date,
    };
  };

  function tree(parent: string | null, changes: FileChanges): string {
    const index = path.join(scratch, `index-${++counter}`);
    const env = { GIT_INDEX_FILE: index };
    git(parent ? ['read-tree', parent] : ['read-tree', '--empty'], undefined, env);
    const writes = Object.entries(changes).filter(
      (entry): entry is [string, string | Buffer] => entry[1] !== null,
    );
    const blobs = path.join(scratch, `blobs-${counter}`);
    const sources = writes.map(([, content], i) => {
      const file = path.join(blobs, String(i));
      mkdirSync(blobs, { recursive: true });
      writeFileSync(file, content);
      return file;
    });
    const shas =
      sources.length > 0
        ? git(['hash-object', '-w', '--stdin-paths'], `${sources.join('\n')}\n`)
            .trim()
            .split('\n')
        : [];
    const lines = [
      ...writes.map(([file], i) => `100644 ${shas[i]}\t${file}`),
      ...Object.entries(changes)
        .filter(([, content]) => content === null)
        .map(([file]) => `0 ${'0'.repeat(40)}\t${file}`),
    ];
    if (lines.length > 0) git(['update-index', '--index-info'], `${lines.join('\n')}\n`, env);
    const written = git(['write-tree'], undefined, env).trim();
    rmSync(index, { force: true });
    rmSync(blobs, { recursive: true, force: true });
    return written;
  }

  function commitTree(
    treeSha: string,
    parents: string[],
    message: string,
    author: { name: string; email: string; date?: string } = IDENTITY,
  ): string {
    const args = ['commit-tree', treeSha, ...parents.flatMap((p) => ['-p', p])];
    return git(args, message, stamp(author)).trim();
  }

  const repo: GitRepository = {
    dir,
    git: (args, input) => git(args, input),
    resolve,
    head(branch) {
      const sha = resolve(`refs/heads/${branch}`);
      if (!sha) throw new Error(`no branch ${branch}`);
      return sha;
    },
    commit(branch, changes, commitOptions = {}) {
      const parent =
        resolve(`refs/heads/${branch}`) ?? (commitOptions.from ? repo.head(commitOptions.from) : null);
      const sha = commitTree(
        tree(parent, changes),
        parent ? [parent] : [],
        commitOptions.message ?? `Change ${Object.keys(changes).join(', ').slice(0, 60)}`,
        commitOptions.author,
      );
      git(['update-ref', `refs/heads/${branch}`, sha]);
      return sha;
    },
    merge(base, head, method, message) {
      const baseTip = repo.head(base);
      const headTip = repo.head(head);
      const landed: string[] = [];
      if (method === 'rebase') {
        let onto = baseTip;
        for (const commit of repo.log([`${baseTip}..${headTip}`]).reverse()) {
          // A cherry-pick without a work tree: the commit's own diff applied to the new base's index.
          const index = path.join(scratch, `index-${++counter}`);
          const env = { GIT_INDEX_FILE: index };
          git(['read-tree', onto], undefined, env);
          const patch = git(['diff', '--binary', '--full-index', commit.parents[0]!, commit.sha]);
          if (patch !== '') git(['apply', '--cached'], patch, env);
          const treeSha = git(['write-tree'], undefined, env).trim();
          rmSync(index, { force: true });
          onto = commitTree(treeSha, [onto], commit.message, {
            name: commit.authorName,
            email: commit.authorEmail,
            date: commit.authorDate,
          });
          landed.push(onto);
        }
      } else {
        const treeSha = git(['merge-tree', '--write-tree', baseTip, headTip]).split('\n')[0]!.trim();
        landed.push(commitTree(treeSha, method === 'merge' ? [baseTip, headTip] : [baseTip], message));
      }
      git(['update-ref', `refs/heads/${base}`, landed.at(-1)!]);
      return landed;
    },
    mergeBase(a, b) {
      try {
        return git(['merge-base', a, b]).trim() || null;
      } catch {
        return null;
      }
    },
    info(sha) {
      return repo.log(['-1', sha])[0]!;
    },
    log(revisions, logOptions = {}) {
      const format = '%H%x00%P%x00%an%x00%ae%x00%aI%x00%cI%x00%B%x1e';
      const args = [
        'log',
        `--format=${format}`,
        ...(logOptions.firstParent ? ['--first-parent'] : []),
        ...revisions,
        '--',
      ];
      return git(args)
        .split('\x1e')
        .map((record) => record.replace(/^\n/, ''))
        .filter((record) => record !== '')
        .map((record) => {
          const [sha, parents, authorName, authorEmail, authorDate, committerDate, message] =
            record.split('\0');
          return {
            sha: sha!,
            parents: parents ? parents.split(' ') : [],
            message: message!.replace(/\n$/, ''),
            authorName: authorName!,
            authorEmail: authorEmail!,
            authorDate: new Date(authorDate!).toISOString(),
            committerDate: new Date(committerDate!).toISOString(),
          };
        });
    },
    diff(from, to) {
      const base = from ?? git(['hash-object', '-t', 'tree', '/dev/null']).trim();
      const common = ['-M', '--no-color', '--no-ext-diff', base, to, '--'];
      // One entry per file in each output, in the same (path) order.
      const raw = git(['diff', '-z', '--raw', '--no-abbrev', ...common]).split('\0');
      const numstat = git(['diff', '-z', '--numstat', ...common]).split('\0');
      const patches = `\n${git(['diff', '--full-index', ...common])}`.split('\ndiff --git ').slice(1);
      const entries: DiffEntry[] = [];
      for (let i = 0, n = 0; i < raw.length - 1; n++) {
        const [, , srcBlob, dstBlob, letters] = raw[i]!.slice(1).split(' ');
        const status = letters!.slice(0, 1);
        const twoPaths = status === 'R' || status === 'C';
        const first = raw[i + 1]!;
        const second = twoPaths ? raw[i + 2]! : null;
        i += twoPaths ? 3 : 2;
        // numstat: "added\tdeleted\tpath" or, for a rename, "added\tdeleted\t" then two paths.
        const [added, deleted] = numstat[0]!.split('\t');
        numstat.splice(0, twoPaths ? 3 : 1);
        const patch = patches[n] ?? '';
        const hunk = patch.indexOf('\n@@');
        entries.push({
          path: second ?? first,
          previousPath: twoPaths ? first : null,
          status,
          additions: added === '-' ? 0 : Number(added),
          deletions: deleted === '-' ? 0 : Number(deleted),
          binary: added === '-',
          patch: hunk < 0 ? '' : `${patch.slice(hunk + 1).replace(/\n$/, '')}\n`,
          blob: status === 'D' ? srcBlob! : dstBlob!,
        });
      }
      return entries;
    },
    rawDiff(from, to) {
      const base = from ?? git(['hash-object', '-t', 'tree', '/dev/null']).trim();
      return git(['diff', '-M', '--no-color', '--no-ext-diff', base, to, '--']);
    },
    now: () => new Date(clock),
    tick(ms) {
      clock += ms;
    },
    close() {
      rmSync(scratch, { recursive: true, force: true });
      if (owned) rmSync(dir, { recursive: true, force: true });
    },
  };
  if (Object.keys(files).length > 0)
    repo.commit(options.branch ?? 'main', files, { message: 'Initial commit' });
  return repo;
}
