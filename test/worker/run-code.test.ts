// The code of one run (src/pipeline/run-code.ts): the project's own code outside docsDir from the
// run's sparse checkout — at its base, or at the head of the job's change of the docs repository —
// and context repositories from their mirrors; a context repository that cannot be fetched is left
// out unless the job documents a change of it. Real git over HTTP on loopback.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { AgentChange } from '../../src/agent/change.ts';
import { checkoutForRun } from '../../src/git/checkout.ts';
import { gitCredentialEnv } from '../../src/git/credentials.ts';
import { MirrorCache } from '../../src/git/mirror.ts';
import { openRunCode } from '../../src/pipeline/run-code.ts';
import { type GitHttpServer, startGitHttpServer } from '../doubles/git-http-server.ts';
import { temporaryDirectory } from '../helpers/temp.ts';

const USER = 'x-access-token';
const TOKEN = 'dwtest_RUNCODE_5tR8yU1iO3pA6sD9';

let server: GitHttpServer;
before(async () => {
  server = await startGitHttpServer({ tokens: { [TOKEN]: 'read' }, username: USER });
});
after(async () => {
  await server.close();
});

/** Commits `files` on `branch` of the served repository (from main); returns the commit. */
function commitOn(repo: string, branch: string, files: Record<string, string>): string {
  const work = temporaryDirectory('docwright-run-code-index-');
  const run = (args: string[], input?: string) =>
    execFileSync('git', args, {
      cwd: path.join(server.root, `${repo}.git`),
      input,
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_INDEX_FILE: path.join(work, 'index'),
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_AUTHOR_NAME: 'Dev',
        GIT_AUTHOR_EMAIL: 'dev@example.com',
        GIT_COMMITTER_NAME: 'Dev',
        GIT_COMMITTER_EMAIL: 'dev@example.com',
      },
    }).trim();
  run(['read-tree', 'main']);
  for (const [file, content] of Object.entries(files)) {
    const id = run(['hash-object', '-w', '--stdin'], content);
    run(['update-index', '--add', '--cacheinfo', `100644,${id},${file}`]);
  }
  const commit = run(['commit-tree', run(['write-tree']), '-p', 'main', '-m', 'Change']);
  run(['update-ref', `refs/heads/${branch}`, commit]);
  return commit;
}

const text = (file: { kind: string; bytes?: Uint8Array }) =>
  file.kind === 'file' ? Buffer.from(file.bytes!).toString('utf8') : file.kind;

describe('the code of a run', () => {
  test('own code at the base or at the change head, a context repository, and the checkout stays sparse', async () => {
    const remote = await server.createRepository('mono', {
      'docs/index.mdx': '# Home\n',
      'src/server.ts': 'export const port = 80;\n',
    });
    const head = commitOn('mono', 'feature', { 'src/server.ts': 'export const port = 8080;\n' });
    const apiRemote = await server.createRepository('api', { 'lib/a.ts': 'export const a = 1;\n' });
    const env = gitCredentialEnv(remote, { username: USER, token: TOKEN });
    const cache = new MirrorCache({
      dir: temporaryDirectory('docwright-run-code-cache-'),
      maxBytes: 1 << 30,
    });
    const checkout = await checkoutForRun({
      remote,
      ref: 'main',
      branch: 'docwright/run-code',
      env,
      tmpDir: temporaryDirectory('docwright-run-code-tmp-'),
      mirror: { cache, project: 'proj_rc' },
      sparse: ['docs'],
    });
    const onDisk = () =>
      readdirSync(checkout.dir, { recursive: true })
        .map(String)
        .filter((f) => !f.startsWith('.git'))
        .sort();
    const before = onDisk();
    const signal = new AbortController().signal;
    const common = {
      checkout,
      env,
      redact: (t: string) => t,
      docsDir: 'docs',
      cache,
      project: 'proj_rc',
      maxFileBytes: 1 << 20,
      signal,
    };
    const unavailable: string[] = [];
    try {
      const atBase = await openRunCode({
        ...common,
        context: {
          contextRepositories: [
            { name: 'api', url: apiRemote, env },
            { name: 'gone', url: `${server.baseUrl}/nothing-here.git`, env },
          ],
          changes: [],
        },
        onUnavailable: (name) => unavailable.push(name),
      });
      try {
        assert.deepEqual(atBase.description.repositories, ['docs', 'api', 'gone']);
        // Context repositories no change of the job names are fetched when first read, not before.
        const fetchedApi = () => server.requests.filter((r) => r.url.includes('/api.git/')).length;
        assert.equal(fetchedApi(), 0, 'not fetched before it is read');
        assert.equal(text(await atBase.reader.read('docs', 'src/server.ts')), 'export const port = 80;\n');
        assert.equal(text(await atBase.reader.read('api', 'lib/a.ts')), 'export const a = 1;\n');
        assert.ok(fetchedApi() > 0);
        assert.deepEqual(unavailable, []);
        await assert.rejects(atBase.reader.read('gone', 'x.ts'), /"gone" cannot be read now/);
        await assert.rejects(atBase.reader.read('gone', 'y.ts'), /"gone" cannot be read now/);
        assert.deepEqual(unavailable, ['gone'], 'told once');
      } finally {
        await atBase.close();
      }
      const atHead = await openRunCode({
        ...common,
        context: { contextRepositories: [], changes: [], docsCommit: head },
      });
      try {
        assert.equal(text(await atHead.reader.read('docs', 'src/server.ts')), 'export const port = 8080;\n');
      } finally {
        await atHead.close();
      }
      assert.deepEqual(onDisk(), before, 'the checkout stays sparse and unchanged');
      assert.ok(!before.some((f) => f.startsWith('src')));

      // A context repository the job documents a change of must be there.
      const change = { repository: 'gone' } as AgentChange;
      await assert.rejects(
        openRunCode({
          ...common,
          context: {
            contextRepositories: [{ name: 'gone', url: `${server.baseUrl}/nothing-here.git`, env }],
            changes: [change],
          },
        }),
        (error: Error & { code?: string }) =>
          typeof error.code === 'string' && !error.message.includes(TOKEN),
      );
    } finally {
      await checkout.remove();
    }
  });
});
