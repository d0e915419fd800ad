// A change computed from a context repository's mirror (src/git/change-diff.ts): the mirror is
// fetched one commit deep at the change's head, as a run opens it; the pull request's base (its
// base branch's tip, which moved on after the branch was made) is fetched when first needed, the
// mirror deepened until their merge base is found, and the paths and one file's diff are what
// the head added since then, as the hosts show a pull request. Real git over HTTP on loopback,
// with credentials in the environment.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openContextRepository } from '../../src/git/context-repository.ts';
import { gitCredentialEnv } from '../../src/git/credentials.ts';
import { git } from '../../src/git/git.ts';
import { MirrorCache } from '../../src/git/mirror.ts';
import { type GitHttpServer, startGitHttpServer } from '../doubles/git-http-server.ts';
import { temporaryDirectory } from '../helpers/temp.ts';

const USER = 'x-access-token';
const TOKEN = 'dwtest_CHANGEDIFF_7hQ2mZ9vB1nC4kP8';

let server: GitHttpServer;
let remote: string;
let cacheDir: string;
let cache: MirrorCache;
let base: string;
let head: string;

/** A commit of `files` over `parent` in the served repository, under `ref`. */
function commitUpstream(ref: string, parent: string, files: Record<string, string>, message: string): string {
  const work = temporaryDirectory('docwright-change-diff-upstream-');
  const run = (args: string[], input?: string) =>
    execFileSync('git', args, {
      cwd: path.join(server.root, 'app.git'),
      input,
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_INDEX_FILE: path.join(work, 'index'),
        GIT_AUTHOR_NAME: 'Upstream',
        GIT_AUTHOR_EMAIL: 'upstream@example.com',
        GIT_COMMITTER_NAME: 'Upstream',
        GIT_COMMITTER_EMAIL: 'upstream@example.com',
      },
    }).trim();
  run(['read-tree', parent]);
  for (const [file, content] of Object.entries(files)) {
    const id = run(['hash-object', '-w', '--stdin'], content);
    run(['update-index', '--add', '--cacheinfo', `100644,${id},${file}`]);
  }
  const commit = run(['commit-tree', run(['write-tree']), '-p', parent, '-m', message]);
  run(['update-ref', `refs/heads/${ref}`, commit]);
  rmSync(work, { recursive: true, force: true });
  return commit;
}

before(async () => {
  server = await startGitHttpServer({ tokens: { [TOKEN]: 'read' }, username: USER });
  remote = await server.createRepository('app', { 'README.md': '# App\n', 'src/index.ts': 'export {};\n' });
  const start = server.git('app', 'rev-parse', 'main').trim();
  head = commitUpstream('feature', start, { 'src/feature.ts': 'export const feature = 1;\n' }, 'Feature');
  // The base branch moves on after the branch was made: a pull request's base is its tip.
  let tip = start;
  for (let i = 0; i < 3; i++) tip = commitUpstream('main', tip, { 'README.md': `# App ${i}\n` }, `Main ${i}`);
  base = tip;
  cacheDir = temporaryDirectory('docwright-change-diff-cache-');
  cache = new MirrorCache({ dir: cacheDir, maxBytes: 1 << 30 });
});
after(async () => {
  await server?.close();
  rmSync(cacheDir, { recursive: true, force: true });
});

describe('a change from the mirror', () => {
  test("paths and a file's diff since the merge base, the base fetched and the mirror deepened as needed", async () => {
    const env = gitCredentialEnv(remote, { username: USER, token: TOKEN });
    const opened = await openContextRepository({ cache, project: 'proj_diff', remote, env, commit: head });
    try {
      const gitDir = cache.pathOf('proj_diff', remote);
      const has = (commit: string) =>
        git(['cat-file', '-e', `${commit}^{commit}`], { cwd: gitDir }).then(
          () => true,
          () => false,
        );
      assert.equal(await has(base), false, 'the mirror holds the head only');
      const paths = await opened.reader.changedPaths(base, head, 100);
      assert.deepEqual(paths, { files: [{ path: 'src/feature.ts', status: 'added' }], total: 1 });
      assert.equal(await has(base), true);
      const diff = await opened.reader.pathDiff(base, head, 'src/feature.ts', 1_000);
      assert.deepEqual(diff, {
        path: 'src/feature.ts',
        status: 'added',
        binary: false,
        oldSize: null,
        newSize: 26,
        diff: '@@ -0,0 +1 @@\n+export const feature = 1;\n',
        chars: 41,
      });
      // The base's own changes are not the change's: README.md moved on on main only.
      assert.equal(await opened.reader.pathDiff(base, head, 'README.md', 1_000), null);
      const cut = await opened.reader.pathDiff(base, head, 'src/feature.ts', 20);
      assert.equal(cut?.diff, '@@ -0,0 +1 @@\n');
      assert.equal(cut?.chars, 41, 'the real size, not the part kept');
    } finally {
      await opened.close();
    }
  });
});
