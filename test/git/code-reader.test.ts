// Reading code from the mirror cache (docs/code-context.mdx): a context repository's mirror fetched at a
// commit or ref with trees only, blobs fetched lazily as they are read or searched, a second job
// fetching only what changed, a sparse docs checkout that stays sparse while its code is read,
// and every answer bounded. Real git over HTTP on loopback, with credentials in the environment.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { checkoutForRun } from '../../src/git/checkout.ts';
import { GitCodeReader } from '../../src/git/code-reader.ts';
import { openContextRepository } from '../../src/git/context-repository.ts';
import { gitCredentialEnv } from '../../src/git/credentials.ts';
import { git } from '../../src/git/git.ts';
import { MirrorCache } from '../../src/git/mirror.ts';
import { type GitHttpServer, startGitHttpServer } from '../doubles/git-http-server.ts';
import { temporaryDirectory } from '../helpers/temp.ts';

const USER = 'x-access-token';
const TOKEN = 'dwtest_CODEREADER_4kP9xQ2mZ7vB1nC8';

const FILES: Record<string, string> = {
  'README.md': '# API\n',
  'docs/index.mdx': '# Home\n',
  'src/index.ts': 'export function start(port: number) {\n  return port;\n}\n',
  'src/big.txt': `${'x'.repeat(3000)}\n`,
  'src/bin.dat': 'a\u0000b',
  ...Object.fromEntries(
    Array.from({ length: 30 }, (_, i) => [`src/mod${i}.ts`, `export const value${i} = ${i};\n`]),
  ),
};

let server: GitHttpServer;
let remote: string;
let repo: string;
let count = 0;
let cacheDir: string;
let cache: MirrorCache;
const env = () => gitCredentialEnv(remote, { username: USER, token: TOKEN });

before(async () => {
  server = await startGitHttpServer({ tokens: { [TOKEN]: 'read' }, username: USER });
});
after(async () => {
  await server.close();
});
beforeEach(async () => {
  repo = `code${++count}`;
  remote = await server.createRepository(repo, FILES);
  cacheDir = temporaryDirectory('docwright-code-cache-');
  cache = new MirrorCache({ dir: cacheDir, maxBytes: 1 << 30 });
});
afterEach(() => {
  rmSync(cacheDir, { recursive: true, force: true });
});

/** Objects in the repository at `gitDir`. */
async function objects(gitDir: string): Promise<Set<string>> {
  const listed = await git(['cat-file', '--batch-all-objects', '--batch-check=%(objectname)'], {
    cwd: gitDir,
  });
  return new Set(listed.split('\n').filter(Boolean));
}

/** Lands a commit on the served repository's main branch. */
function landUpstream(files: Record<string, string>): string {
  const work = temporaryDirectory('docwright-code-upstream-');
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
        GIT_AUTHOR_NAME: 'Upstream',
        GIT_AUTHOR_EMAIL: 'upstream@example.com',
        GIT_COMMITTER_NAME: 'Upstream',
        GIT_COMMITTER_EMAIL: 'upstream@example.com',
      },
    }).trim();
  run(['read-tree', 'main']);
  for (const [file, content] of Object.entries(files)) {
    const id = run(['hash-object', '-w', '--stdin'], content);
    run(['update-index', '--add', '--cacheinfo', `100644,${id},${file}`]);
  }
  const parent = run(['rev-parse', 'main']);
  const commit = run(['commit-tree', run(['write-tree']), '-p', parent, '-m', 'Upstream']);
  run(['update-ref', 'refs/heads/main', commit, parent]);
  return commit;
}

const open = (extra: { commit?: string; ref?: string } = {}) =>
  openContextRepository({ cache, project: 'proj_code', remote, env: env(), ...extra });

describe('the git code reader', () => {
  test('lists, reads and searches a context repository, fetching blobs only when they are read', async () => {
    const opened = await open();
    try {
      const gitDir = cache.pathOf('proj_code', remote);
      const before = await objects(gitDir);
      // Trees and the commit only: none of the 35 files' blobs.
      assert.equal(before.size < 12, true, `only trees were fetched (${before.size} objects)`);
      assert.equal(opened.commit, server.git(repo, 'rev-parse', 'main').trim());

      const listed = await opened.reader.list('src', { max: 5 });
      assert.equal(listed.total, 33);
      assert.deepEqual(listed.files.length, 5);
      assert.ok(listed.files.every((f) => f.startsWith('src/')));
      assert.equal((await opened.reader.list('nowhere', { max: 5 })).exists, false);
      assert.deepEqual((await opened.reader.list('src/index.ts', { max: 5 })).files, ['src/index.ts']);

      const requests = server.requests.length;
      const read = await opened.reader.read('src/index.ts', 1024);
      assert.equal(read.kind, 'file');
      assert.equal(read.kind === 'file' && read.bytes.toString('utf8'), FILES['src/index.ts']);
      // Read-ahead: the file and the other files of its folder, in one round trip; nothing else.
      const folder = server
        .git(repo, 'ls-tree', 'main', 'src/')
        .trim()
        .split('\n')
        .map((line) => line.split(/\s+/)[2]!);
      const added = [...(await objects(gitDir))].filter((o) => !before.has(o)).sort();
      assert.deepEqual(added, [...new Set(folder)].sort());
      assert.equal(server.requests.slice(requests).filter((r) => r.method === 'POST').length, 1);
      const neighbour = await opened.reader.read('src/mod1.ts', 1024);
      assert.equal(neighbour.kind === 'file' && neighbour.bytes.toString('utf8'), FILES['src/mod1.ts']);
      assert.equal(
        server.requests.slice(requests).filter((r) => r.method === 'POST').length,
        1,
        'a neighbour costs no round trip',
      );
      const elsewhere = await opened.reader.read('docs/index.mdx', 1024);
      assert.equal(elsewhere.kind === 'file' && elsewhere.bytes.toString('utf8'), FILES['docs/index.mdx']);

      assert.deepEqual(await opened.reader.read('src', 1024), { kind: 'directory' });
      assert.deepEqual(await opened.reader.read('src/none.ts', 1024), { kind: 'missing' });
      assert.deepEqual(await opened.reader.read('src/big.txt', 1024), { kind: 'too-large', size: 3001 });
      // The size was read without fetching more than that blob's header's blob.
      const seen: string[] = [];
      const scan = await opened.reader.scan(
        'src',
        { maxFiles: 100, maxBytes: 1 << 20, maxFileBytes: 1024, filter: (p) => p.endsWith('.ts') },
        (file, bytes) => {
          seen.push(`${file}:${bytes.length}`);
          return undefined;
        },
      );
      assert.equal(scan.scanned, 31);
      assert.equal(scan.stopped, null);
      assert.ok(seen.includes(`src/index.ts:${FILES['src/index.ts']!.length}`));
      // No token on any command line or in the mirror's configuration.
      assert.doesNotMatch(readFileSync(path.join(gitDir, 'config'), 'utf8'), new RegExp(TOKEN));
      assert.ok(server.requests.some((r) => r.headers.authorization !== undefined));
    } finally {
      await opened.close();
    }
  });

  test('a scan stops at its bounds and skips files over the size limit', async () => {
    const opened = await open();
    try {
      const byFiles = await opened.reader.scan(
        '.',
        { maxFiles: 4, maxBytes: 1 << 20, maxFileBytes: 1 << 20 },
        () => undefined,
      );
      assert.equal(byFiles.scanned, 4);
      assert.equal(byFiles.stopped?.reason, 'files');
      const byBytes = await opened.reader.scan(
        'src',
        { maxFiles: 100, maxBytes: 40, maxFileBytes: 1 << 20, batch: 2 },
        () => undefined,
      );
      assert.equal(byBytes.stopped?.reason, 'bytes');
      assert.ok(byBytes.scanned <= 3, `stopped after about 40 bytes (${byBytes.scanned} files)`);
      const tooLarge = await opened.reader.scan(
        'src',
        { maxFiles: 100, maxBytes: 1 << 20, maxFileBytes: 100 },
        () => undefined,
      );
      assert.equal(tooLarge.skippedTooLarge, 1);
      const byCaller = await opened.reader.scan(
        '.',
        { maxFiles: 100, maxBytes: 1 << 20, maxFileBytes: 1 << 20 },
        () => false,
      );
      assert.equal(byCaller.scanned, 1);
      const late = await opened.reader.scan(
        '.',
        { maxFiles: 100, maxBytes: 1 << 20, maxFileBytes: 1 << 20, deadline: Date.now() - 1 },
        () => undefined,
      );
      assert.equal(late.stopped?.reason, 'deadline');
      assert.equal(late.scanned, 0);
    } finally {
      await opened.close();
    }
  });

  test('reads of one folder at the same time share its read-ahead: one round trip for all', async () => {
    const opened = await open();
    try {
      const before = server.requests.length;
      const reads = await Promise.all(
        ['src/index.ts', 'src/mod1.ts', 'src/mod2.ts'].map((file) => opened.reader.read(file, 1024)),
      );
      assert.deepEqual(
        reads.map((read) => read.kind === 'file' && read.bytes.toString('utf8')),
        [FILES['src/index.ts'], FILES['src/mod1.ts'], FILES['src/mod2.ts']],
      );
      assert.equal(server.requests.slice(before).filter((r) => r.method === 'POST').length, 1);
    } finally {
      await opened.close();
    }
  });

  test('a file of a folder a search fetched is read without a further round trip', async () => {
    // A fresh mirror's reader reads ahead without asking git what is missing: not once a search
    // fetched files.
    const opened = await open();
    try {
      await opened.reader.scan('src', { maxFiles: 100, maxBytes: 1 << 20, maxFileBytes: 1 << 20 }, () => {
        return undefined;
      });
      const before = server.requests.length;
      const read = await opened.reader.read('src/mod3.ts', 1024);
      assert.equal(read.kind === 'file' && read.bytes.toString('utf8'), FILES['src/mod3.ts']);
      assert.equal(server.requests.length, before);
    } finally {
      await opened.close();
    }
  });

  test('a folder whose tree is too large to hold whole is still read ahead, in one round trip', async () => {
    // About 1.4 MiB of tree: listed by ls-tree instead of held by the object reader.
    const names = Array.from(
      { length: 24_000 },
      (_, i) => `generated-module-${String(i).padStart(6, '0')}.ts`,
    );
    const stream = [
      'commit refs/heads/main',
      'committer Upstream <upstream@example.com> 1700000000 +0000',
      'data 5',
      'Large',
      `from ${server.git(repo, 'rev-parse', 'main').trim()}`,
      ...names.flatMap((name, i) => {
        const content = `export const n${i} = ${i};\n`;
        return [`M 100644 inline gen/${name}`, `data ${Buffer.byteLength(content)}`, content];
      }),
      '',
    ].join('\n');
    execFileSync('git', ['fast-import', '--quiet'], {
      cwd: path.join(server.root, `${repo}.git`),
      input: stream,
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    });
    const opened = await open();
    try {
      const before = server.requests.length;
      const reads = [];
      for (const i of [5, 6, 7]) reads.push(await opened.reader.read(`gen/${names[i]}`, 1024));
      assert.deepEqual(
        reads.map((read) => read.kind === 'file' && read.bytes.toString('utf8')),
        [5, 6, 7].map((i) => `export const n${i} = ${i};\n`),
      );
      assert.equal(server.requests.slice(before).filter((r) => r.method === 'POST').length, 1);
    } finally {
      await opened.close();
    }
  });

  test('a read whose fetch failed fails, and the next read of its folder fetches again', async () => {
    const opened = await open();
    const served = path.join(server.root, `${repo}.git`);
    try {
      renameSync(served, `${served}.away`);
      try {
        await assert.rejects(opened.reader.read('src/index.ts', 1024));
      } finally {
        renameSync(`${served}.away`, served);
      }
      const read = await opened.reader.read('src/mod4.ts', 1024);
      assert.equal(read.kind === 'file' && read.bytes.toString('utf8'), FILES['src/mod4.ts']);
    } finally {
      await opened.close();
    }
  });

  test('a batch fetch brings the scanned blobs in one round trip, not one per file', async () => {
    const opened = await open();
    try {
      const before = server.requests.length;
      await opened.reader.scan(
        'src',
        { maxFiles: 100, maxBytes: 1 << 20, maxFileBytes: 1 << 20 },
        () => undefined,
      );
      const fetches = server.requests.slice(before).filter((r) => r.method === 'POST').length;
      assert.ok(fetches <= 2, `${fetches} requests for 33 blobs`);
    } finally {
      await opened.close();
    }
  });

  test('a second job on the mirror fetches only what changed, at the change head', async () => {
    const first = await open();
    const gitDir = cache.pathOf('proj_code', remote);
    await first.reader.read('src/index.ts', 1024);
    await first.close();
    const before = await objects(gitDir);
    const head = landUpstream({
      'src/index.ts': 'export function start(port = 8080) {\n  return port;\n}\n',
    });
    const second = await open({ commit: head });
    try {
      assert.equal(second.commit, head);
      const added = [...(await objects(gitDir))].filter((o) => !before.has(o));
      // The new commit, the root tree, src/ and the changed file: nothing else.
      assert.equal(added.length, 4, `fetched ${added.length} objects`);
      const changedBlob = server.git(repo, 'rev-parse', `${head}:src/index.ts`).trim();
      assert.ok(added.includes(changedBlob), 'the changed file came with the change');
      const read = await second.reader.read('src/index.ts', 1024);
      assert.match(read.kind === 'file' ? read.bytes.toString('utf8') : '', /port = 8080/);
      // The old commit is still readable from the same mirror.
      const old = new GitCodeReader({ cwd: gitDir, commit: first.commit, env: env() });
      const oldRead = await old.read('src/index.ts', 1024);
      old.close();
      assert.match(oldRead.kind === 'file' ? oldRead.bytes.toString('utf8') : '', /port: number/);
    } finally {
      await second.close();
    }
  });

  test('a held mirror is not evicted; once closed it is', async () => {
    const opened = await open();
    const small = new MirrorCache({ dir: cacheDir, maxBytes: 0 });
    assert.deepEqual(await small.evict(), []);
    await opened.close();
    assert.deepEqual(await small.evict(), [cache.pathOf('proj_code', remote)]);
  });

  test('an unknown ref or bad credentials fail with a host error', async () => {
    await assert.rejects(open({ ref: 'no-such-branch' }), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'ref-not-found');
      return true;
    });
    await assert.rejects(
      openContextRepository({
        cache,
        project: 'p',
        remote,
        env: gitCredentialEnv(remote, { username: USER, token: 'wrong' }),
      }),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, 'host-auth-failed');
        assert.doesNotMatch(error.message, /wrong/);
        return true;
      },
    );
  });

  test('the code of a sparse docs checkout is read from its objects, and the checkout stays sparse', async () => {
    const tmp = temporaryDirectory('docwright-code-run-');
    const checkout = await checkoutForRun({
      remote,
      ref: 'main',
      branch: 'docwright/code',
      env: env(),
      tmpDir: tmp,
      mirror: { cache, project: 'proj_docs' },
      sparse: ['docs'],
    });
    try {
      const onDisk = () =>
        readdirSync(checkout.dir, { recursive: true })
          .map(String)
          .filter((f) => !f.startsWith('.git'))
          .sort();
      const before = onDisk();
      assert.ok(!before.includes('src'), 'src/ is not checked out');
      const sparseList = await git(['sparse-checkout', 'list'], { cwd: checkout.dir });
      const reader = new GitCodeReader({ cwd: checkout.dir, commit: checkout.base, env: env() });
      try {
        const read = await reader.read('src/index.ts', 1024);
        assert.equal(read.kind === 'file' && read.bytes.toString('utf8'), FILES['src/index.ts']);
        let matched = 0;
        await reader.scan(
          'src',
          { maxFiles: 100, maxBytes: 1 << 20, maxFileBytes: 1 << 20 },
          (_file, bytes) => {
            if (bytes.includes('value1')) matched++;
            return undefined;
          },
        );
        assert.ok(matched > 0);
      } finally {
        reader.close();
      }
      assert.deepEqual(onDisk(), before);
      assert.equal(await git(['sparse-checkout', 'list'], { cwd: checkout.dir }), sparseList);
      assert.equal((await git(['status', '--porcelain'], { cwd: checkout.dir })).trim(), '');
    } finally {
      await checkout.remove();
    }
  });
});
