import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import lockfile from 'proper-lockfile';
import { type CheckoutOptions, checkoutForRun } from '../../src/git/checkout.ts';
import { commitFiles, commitMessage } from '../../src/git/commit.ts';
import { gitCredentialEnv } from '../../src/git/credentials.ts';
import { git } from '../../src/git/git.ts';
import { MirrorCache, mirrorCreatedAt } from '../../src/git/mirror.ts';
import { pushBranch } from '../../src/git/push.ts';
import { type GitHttpServer, startGitHttpServer } from '../doubles/git-http-server.ts';

const USER = 'x-access-token';
const TOKEN = 'dwtest_MIRROR_8hG2kP4xQ7mZ1vB5nC3t';
const AUTHOR = { name: 'docwright[bot]', email: 'docwright@example.com' };

let server: GitHttpServer;
let remote: string;
let repo: string;
let count = 0;
let tmpRoot: string;
let cacheDir: string;
let cache: MirrorCache;

/** A monorepo in miniature: source files, and a docs site under docs/ (with its config at the root). */
const FILES: Record<string, string> = {
  'README.md': '# Project\n',
  'mint.json': '{"name": "root config"}\n',
  'docs/docs.json': '{"name": "Docs", "navigation": {"pages": ["index", "guide"]}}\n',
  'docs/index.mdx': '# Home\n\nLine one.\n',
  'docs/guide.mdx': '# Guide\n',
  'docs/nested/deep.mdx': '# Deep\n',
  '.mintlify/AGENTS.md': 'Write plainly.\n',
  ...Object.fromEntries(
    Array.from({ length: 40 }, (_, i) => [`src/pkg${i % 4}/file-${i}.ts`, `export const v${i} = ${i};\n`]),
  ),
};

const env = () => gitCredentialEnv(remote, { username: USER, token: TOKEN });
const options = (branch: string, extra: Partial<CheckoutOptions> = {}): CheckoutOptions => ({
  remote,
  ref: 'main',
  branch,
  env: env(),
  tmpDir: tmpRoot,
  mirror: { cache, project: 'proj_1' },
  ...extra,
});
const mirrorDir = () => cache.pathOf('proj_1', remote);
const served = (...args: string[]) => server.git(repo, ...args).trim();

/** Every object in the mirror, by id. */
async function mirrorObjects(): Promise<Set<string>> {
  const listed = await git(['cat-file', '--batch-all-objects', '--batch-check=%(objectname)'], {
    cwd: mirrorDir(),
  });
  return new Set(listed.split('\n').filter(Boolean));
}

/** Lands a commit on the served repository's main branch, as a person pushing would. */
function landUpstream(files: Record<string, string>, message: string): void {
  const work = mkdtempSync(path.join(tmpdir(), 'docwright-mirror-upstream-'));
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
  try {
    run(['read-tree', 'main']);
    for (const [file, content] of Object.entries(files)) {
      const id = run(['hash-object', '-w', '--stdin'], content);
      run(['update-index', '--add', '--cacheinfo', `100644,${id},${file}`]);
    }
    const parent = run(['rev-parse', 'main']);
    const commit = run(['commit-tree', run(['write-tree']), '-p', parent, '-m', message]);
    run(['update-ref', 'refs/heads/main', commit, parent]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The files on disk in a checkout (its `.git` link left out). */
const filesIn = (dir: string) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name !== '.git')
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();

before(async () => {
  server = await startGitHttpServer({ tokens: { [TOKEN]: 'write' }, username: USER });
});
after(async () => {
  await server.close();
});
beforeEach(async () => {
  repo = `mono${++count}`;
  remote = await server.createRepository(repo, FILES);
  tmpRoot = mkdtempSync(path.join(tmpdir(), 'docwright-mirror-test-'));
  cacheDir = mkdtempSync(path.join(tmpdir(), 'docwright-mirror-cache-'));
  cache = new MirrorCache({ dir: cacheDir, maxBytes: 1 << 30 });
});
afterEach(() => {
  rmSync(tmpRoot, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
});

describe('mirror cache', () => {
  test('a second run reuses the mirror and fetches only the objects that changed', async () => {
    const first = await checkoutForRun(options('docwright/one', { sparse: ['docs'] }));
    await first.remove();
    const createdAt = await mirrorCreatedAt(mirrorDir());
    const before = await mirrorObjects();

    // Upstream: one page in docs/ and one source file change.
    landUpstream(
      { 'docs/guide.mdx': '# Guide\n\nNew paragraph.\n', 'src/pkg1/file-1.ts': 'changed\n' },
      'Upstream',
    );
    const requestsBefore = server.requests.length;
    const second = await checkoutForRun(options('docwright/two', { sparse: ['docs'] }));
    try {
      assert.equal(second.base, served('rev-parse', 'main'));
      assert.equal(
        readFileSync(path.join(second.dir, 'docs/guide.mdx'), 'utf8'),
        '# Guide\n\nNew paragraph.\n',
      );
      assert.equal(await mirrorCreatedAt(mirrorDir()), createdAt, 'the same mirror, not a new one');
      const added = [...(await mirrorObjects())].filter((id) => !before.has(id));
      // What changed: the commit, the root tree, src/, src/pkg1/ and docs/ trees, and the one page
      // the sparse checkout needs (the source file's new blob is outside it and never fetched).
      const expected = [
        served('rev-parse', 'main'),
        served('rev-parse', 'main^{tree}'),
        served('rev-parse', 'main:src'),
        served('rev-parse', 'main:src/pkg1'),
        served('rev-parse', 'main:docs'),
        served('rev-parse', 'main:docs/guide.mdx'),
      ].sort();
      assert.deepEqual(added.sort(), expected);
      const uploads = server.requests.slice(requestsBefore).filter((r) => r.url.endsWith('/git-upload-pack'));
      assert.ok(uploads.length >= 2, 'fetched into the mirror, and the page fetched on checkout');
    } finally {
      await second.remove();
    }
    assert.deepEqual(readdirSync(tmpRoot), []);
    assert.ok(
      !existsSync(path.join(mirrorDir(), 'worktrees')) ||
        readdirSync(path.join(mirrorDir(), 'worktrees')).length === 0,
    );
  });

  test('a sparse checkout holds the docs folder and the site configs; its commit keeps the whole tree', async () => {
    const checkout = await checkoutForRun(options('docwright/sparse', { sparse: ['docs', '.mintlify'] }));
    try {
      assert.equal(checkout.sparse, true);
      assert.deepEqual(filesIn(checkout.dir), [
        '.mintlify/AGENTS.md',
        'README.md',
        'docs/docs.json',
        'docs/guide.mdx',
        'docs/index.mdx',
        'docs/nested/deep.mdx',
        'mint.json',
      ]);
      writeFileSync(path.join(checkout.dir, 'docs/guide.mdx'), '# Guide\n\nEdited.\n');
      writeFileSync(path.join(checkout.dir, 'docs/new.mdx'), '# New\n');
      assert.equal(
        await commitFiles(checkout, {
          files: ['docs/guide.mdx', 'docs/new.mdx'],
          message: commitMessage('Edit', 'Summary.'),
          author: AUTHOR,
        }),
        true,
      );
      await pushBranch(checkout);
      // Files outside the cone are not on disk, and git takes them for neither deleted nor changed.
      assert.equal((await git(['status', '--porcelain'], { cwd: checkout.dir })).trim(), '');
    } finally {
      await checkout.remove();
    }
    const listing = (ref: string) =>
      new Map(
        served('ls-tree', '-r', ref)
          .split('\n')
          .map((line) => {
            const [meta = '', file = ''] = line.split('\t');
            return [file, meta] as const;
          }),
      );
    const base = listing('main');
    const pushed = listing('docwright/sparse');
    const changed = [...new Set([...base.keys(), ...pushed.keys()])].filter(
      (f) => base.get(f) !== pushed.get(f),
    );
    assert.deepEqual(
      changed.sort(),
      ['docs/guide.mdx', 'docs/new.mdx'],
      'base tree + the edit, nothing else',
    );
    assert.equal(pushed.size, Object.keys(FILES).length + 1);
  });

  test('concurrent runs on one mirror, in this process and another, all check out and push', async () => {
    const second = new MirrorCache({ dir: cacheDir, maxBytes: 1 << 30 });
    const branches = ['a', 'b', 'c', 'd'].map((x) => `docwright/con-${x}`);
    const inProcess = branches.map(async (branch, i) => {
      const checkout = await checkoutForRun({
        ...options(branch, { sparse: ['docs'] }),
        mirror: { cache: i % 2 ? second : cache, project: 'proj_1' },
        likelyNew: true,
      });
      try {
        writeFileSync(path.join(checkout.dir, 'docs/index.mdx'), `# Home\n\n${branch}\n`);
        await commitFiles(checkout, {
          files: ['docs/index.mdx'],
          message: commitMessage(branch, 'x'),
          author: AUTHOR,
        });
        await pushBranch(checkout);
      } finally {
        await checkout.remove();
      }
    });
    // A second process checks out from the same mirror meanwhile (it takes the same lock).
    const script = `
      const { checkoutForRun } = await import(${JSON.stringify(path.resolve('src/git/checkout.ts'))});
      const { MirrorCache } = await import(${JSON.stringify(path.resolve('src/git/mirror.ts'))});
      const cache = new MirrorCache({ dir: process.env.CACHE_DIR, maxBytes: 1 << 30 });
      for (let i = 0; i < 3; i++) {
        const c = await checkoutForRun({ remote: process.env.REMOTE, ref: 'main', branch: 'docwright/other-' + i,
          env: JSON.parse(process.env.GIT_ENV), tmpDir: process.env.TMP_ROOT, mirror: { cache, project: 'proj_1' }, sparse: ['docs'] });
        await c.remove();
      }
      console.log('done');
    `;
    const other = new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
        env: {
          ...process.env,
          CACHE_DIR: cacheDir,
          REMOTE: remote,
          GIT_ENV: JSON.stringify(env()),
          TMP_ROOT: tmpRoot,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (c) => {
        out += c;
      });
      child.stderr.on('data', (c) => {
        out += c;
      });
      child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`child failed: ${out}`))));
    });
    await Promise.all([...inProcess, other]);
    for (const branch of branches)
      assert.equal(served('show', `${branch}:docs/index.mdx`), `# Home\n\n${branch}`);
    await git(['fsck', '--no-progress', '--connectivity-only'], { cwd: mirrorDir() });
    assert.deepEqual(readdirSync(tmpRoot), []);
    assert.equal(readdirSync(cacheDir).filter((n) => n.endsWith('.git')).length, 1, 'one mirror');
  });

  test('a checkout waits while another process holds the mirror, and goes on once it is released', async () => {
    await (await checkoutForRun(options('docwright/warm', { sparse: ['docs'] }))).remove();
    // Another process's hold on the mirror (its lock directory, as proper-lockfile keeps it).
    const release = await lockfile.lock(mirrorDir(), { realpath: false });
    let done = false;
    const waiting = checkoutForRun(options('docwright/waits', { sparse: ['docs'] })).then((c) => {
      done = true;
      return c;
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.equal(done, false, 'the checkout waits for the lock');
      const worktrees = path.join(mirrorDir(), 'worktrees');
      assert.equal(
        existsSync(worktrees) ? readdirSync(worktrees).length : 0,
        0,
        'no worktree was added meanwhile',
      );
    } finally {
      await release();
    }
    const checkout = await waiting;
    try {
      assert.equal(readFileSync(path.join(checkout.dir, 'docs/index.mdx'), 'utf8'), '# Home\n\nLine one.\n');
    } finally {
      await checkout.remove();
    }
  });

  for (const [damage, harm] of [
    ['half-made (no marker)', (dir: string) => rmSync(path.join(dir, 'docwright-mirror.json'))],
    [
      'packs overwritten with garbage',
      (dir: string) => {
        const packs = path.join(dir, 'objects/pack');
        for (const name of readdirSync(packs)) writeFileSync(path.join(packs, name), 'garbage');
      },
    ],
    ['objects removed', (dir: string) => rmSync(path.join(dir, 'objects'), { recursive: true })],
    [
      'HEAD and config garbled',
      (dir: string) => {
        writeFileSync(path.join(dir, 'HEAD'), 'nonsense\n');
        writeFileSync(path.join(dir, 'config'), '[[[ not a config\n');
      },
    ],
  ] as const) {
    test(`a mirror that is ${damage} is rebuilt and the run succeeds`, async () => {
      const first = await checkoutForRun(options('docwright/x', { sparse: ['docs'] }));
      await first.remove();
      const createdAt = await mirrorCreatedAt(mirrorDir());
      harm(mirrorDir());
      await new Promise((resolve) => setTimeout(resolve, 5));
      const failures: unknown[] = [];
      const again = await checkoutForRun(
        options('docwright/y', { sparse: ['docs'], onMirrorFailure: (e) => failures.push(e) }),
      );
      try {
        assert.equal(readFileSync(path.join(again.dir, 'docs/index.mdx'), 'utf8'), '# Home\n\nLine one.\n');
        assert.equal(again.base, served('rev-parse', 'main'));
        writeFileSync(path.join(again.dir, 'docs/index.mdx'), '# Home\n\nRepaired.\n');
        await commitFiles(again, {
          files: ['docs/index.mdx'],
          message: commitMessage('t', 's'),
          author: AUTHOR,
        });
        await pushBranch(again);
      } finally {
        await again.remove();
      }
      assert.equal(served('show', 'docwright/y:docs/index.mdx'), '# Home\n\nRepaired.');
      const rebuiltAt = await mirrorCreatedAt(mirrorDir());
      assert.ok(rebuiltAt !== undefined && rebuiltAt !== createdAt, 'the mirror was made anew');
      if (damage !== 'half-made (no marker)') assert.ok(failures.length >= 1, 'the failure was reported');
      await git(['fsck', '--no-progress', '--connectivity-only'], { cwd: mirrorDir() });
    });
  }

  test('a damaged mirror another run still works in is not rebuilt under it: the new run clones instead', async () => {
    const working = await checkoutForRun(options('docwright/working', { sparse: ['docs'] }));
    try {
      rmSync(path.join(mirrorDir(), 'docwright-mirror.json'));
      const failures: unknown[] = [];
      const other = await checkoutForRun(
        options('docwright/other', { sparse: ['docs'], onMirrorFailure: (e) => failures.push(e) }),
      );
      try {
        assert.equal(other.gitDir, path.join(other.dir, '.git'), 'a clone of its own');
        assert.match(String(failures[0]), /another run uses it/);
      } finally {
        await other.remove();
      }
      // The run that was working in the mirror still commits and pushes from it.
      writeFileSync(path.join(working.dir, 'docs/index.mdx'), '# Home\n\nStill here.\n');
      await commitFiles(working, {
        files: ['docs/index.mdx'],
        message: commitMessage('t', 's'),
        author: AUTHOR,
      });
      await pushBranch(working);
    } finally {
      await working.remove();
    }
    assert.equal(served('show', 'docwright/working:docs/index.mdx'), '# Home\n\nStill here.');
  });

  test('a mirror that cannot be used at all (its folder is a file) falls back to a clone', async () => {
    writeFileSync(path.join(cacheDir, 'blocker'), 'x');
    const blocked = new MirrorCache({ dir: path.join(cacheDir, 'blocker'), maxBytes: 1 << 30 });
    const failures: unknown[] = [];
    const checkout = await checkoutForRun({
      ...options('docwright/fallback'),
      mirror: { cache: blocked, project: 'proj_1' },
      onMirrorFailure: (e) => failures.push(e),
    });
    try {
      assert.equal(readFileSync(path.join(checkout.dir, 'docs/index.mdx'), 'utf8'), '# Home\n\nLine one.\n');
      assert.equal(checkout.gitDir, path.join(checkout.dir, '.git'), 'a clone of its own');
      assert.equal(failures.length, 2, 'tried, and tried again after a rebuild');
    } finally {
      await checkout.remove();
    }
  });

  test('eviction removes idle mirrors, least recently used first, down to the size limit', async () => {
    const remotes: string[] = [];
    for (const name of ['e1', 'e2', 'e3']) {
      remotes.push(await server.createRepository(`${repo}-${name}`, FILES));
    }
    const use = async (url: string, project: string) => {
      const checkout = await checkoutForRun({
        ...options('docwright/e'),
        remote: url,
        mirror: { cache, project },
      });
      return checkout;
    };
    for (const [i, url] of remotes.entries()) await (await use(url, `p${i}`)).remove();
    const paths = remotes.map((url, i) => cache.pathOf(`p${i}`, url));
    // p2 is in use by a run (a live worktree): never evicted.
    const live = await use(remotes[2]!, 'p2');
    // p0 used last; p1 least recently, then p2.
    utimesSync(path.join(paths[1]!, 'docwright-mirror.json'), new Date(1000), new Date(1000));
    utimesSync(path.join(paths[2]!, 'docwright-mirror.json'), new Date(2000), new Date(2000));
    const size = (dir: string) =>
      readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .reduce((n, e) => n + statSync(path.join(e.parentPath, e.name)).size, 0);
    const sizes = paths.map(size);
    // Room for one mirror and a bit: p1 (oldest) goes, p2 is in use, then p0 would go if still over.
    const limited = new MirrorCache({ dir: cacheDir, maxBytes: Math.max(...sizes) + 100 });
    const removed = await limited.evict();
    try {
      assert.ok(removed.includes(paths[1]!), 'the least recently used mirror went first');
      assert.ok(!removed.includes(paths[2]!), 'a mirror in use stays');
      assert.ok(existsSync(paths[2]!));
      assert.ok(!existsSync(paths[1]!));
      assert.deepEqual(removed, [paths[1]!, paths[0]!], 'removed in LRU order until under the limit');
      assert.deepEqual(
        readdirSync(cacheDir).filter((n) => n.includes('.removing-')),
        [],
      );
    } finally {
      await live.remove();
    }
    // A mirror another process holds is skipped; with everything idle and no room, all others go.
    const release = await lockfile.lock(paths[2]!, { realpath: false });
    try {
      assert.deepEqual(await new MirrorCache({ dir: cacheDir, maxBytes: 0 }).evict(), []);
    } finally {
      await release();
    }
    assert.deepEqual(await new MirrorCache({ dir: cacheDir, maxBytes: 0 }).evict(), [paths[2]!]);
    // The next run simply makes its mirror again.
    await (await use(remotes[0]!, 'p0')).remove();
    assert.ok(existsSync(paths[0]!));
  });

  test('the mirror holds no credentials: not in its config, its files or its refs', async () => {
    const checkout = await checkoutForRun(options('docwright/scan', { sparse: ['docs'] }));
    try {
      writeFileSync(path.join(checkout.dir, 'docs/index.mdx'), '# Scanned\n');
      await commitFiles(checkout, {
        files: ['docs/index.mdx'],
        message: commitMessage('t', 's'),
        author: AUTHOR,
      });
      await pushBranch(checkout);
      const forms = [
        TOKEN,
        Buffer.from(TOKEN).toString('base64'),
        Buffer.from(`${USER}:${TOKEN}`).toString('base64'),
      ];
      const files = [cacheDir, checkout.dir]
        .flatMap((dir) => readdirSync(dir, { recursive: true, withFileTypes: true }))
        .filter((e) => e.isFile());
      assert.ok(
        files.some((e) => e.name === 'config'),
        'the mirror config is scanned',
      );
      for (const entry of files) {
        const content = readFileSync(path.join(entry.parentPath, entry.name)).toString('latin1');
        for (const form of forms)
          assert.ok(!content.includes(form), `${entry.parentPath}/${entry.name} holds the token`);
      }
      assert.equal((await git(['config', 'remote.origin.url'], { cwd: mirrorDir() })).trim(), remote);
    } finally {
      await checkout.remove();
    }
  });
});
