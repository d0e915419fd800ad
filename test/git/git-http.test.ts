import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { inspect } from 'node:util';
import { type Checkout, type CheckoutOptions, checkoutForRun } from '../../src/git/checkout.ts';
import { commitFiles, commitMessage } from '../../src/git/commit.ts';
import { gitCredentialEnv } from '../../src/git/credentials.ts';
import { GitError, git } from '../../src/git/git.ts';
import { HostError } from '../../src/git/hosts/host.ts';
import { MirrorCache } from '../../src/git/mirror.ts';
import { pushBranch } from '../../src/git/push.ts';
import { createRedactor, redactDeep } from '../../src/redact.ts';
import { type GitHttpServer, startGitHttpServer } from '../doubles/git-http-server.ts';

const USER = 'x-access-token';
const WRITE_TOKEN = 'dwtest_WRITE_9f3Kq2LmX7vB4nR8sT1w';
const READ_TOKEN = 'dwtest_READ_5cHj8PzQ2yA6eW3uN0kD';
const AUTHOR = { name: 'docwright[bot]', email: 'docwright@example.com' };

/** Every form in which the write token could leak. */
const WRITE_FORMS = [
  WRITE_TOKEN,
  Buffer.from(WRITE_TOKEN).toString('base64'),
  Buffer.from(`${USER}:${WRITE_TOKEN}`).toString('base64'),
];

let server: GitHttpServer;
let remote: string;
let tmpRoot: string;
let repoCount = 0;
/** Every test of the first two suites runs twice: cloning the remote, and from a project mirror. */
const WAYS = ['clone', 'mirror'] as const;
let mirrorDir: string | undefined;
let mirror: CheckoutOptions['mirror'];
/** From a mirror, sparse: git's cone mode keeps the root's files (all these tests use) checked out. */
let sparse: string[] | undefined;

const env = (token: string) => gitCredentialEnv(remote, { username: USER, token });

/** Every branch these runs find on the remote is one an earlier run (docwright) pushed, unless `extra` says otherwise. */
const ownBranch = async () => true;

async function run(
  branch: string,
  token = WRITE_TOKEN,
  extra: { signal?: AbortSignal; ownsBranch?: () => Promise<boolean> } = {},
) {
  return checkoutForRun({
    remote,
    ref: 'main',
    branch,
    env: env(token),
    tmpDir: tmpRoot,
    mirror,
    sparse,
    ownsBranch: ownBranch,
    ...extra,
  });
}

/** Uses a mirror in this suite's tests (in a folder of its own, so that checkouts are counted alone). */
function useWay(way: (typeof WAYS)[number]) {
  beforeEach(() => {
    if (way === 'clone') return;
    mirrorDir = mkdtempSync(path.join(tmpdir(), 'docwright-git-http-mirrors-'));
    mirror = { cache: new MirrorCache({ dir: mirrorDir, maxBytes: 1 << 30 }), project: 'project' };
    sparse = ['docs'];
  });
  afterEach(() => {
    if (mirrorDir) rmSync(mirrorDir, { recursive: true, force: true });
    mirrorDir = undefined;
    mirror = undefined;
    sparse = undefined;
  });
}

async function commit(checkout: Checkout, files: Record<string, string>, title = 'Update docs') {
  for (const [file, content] of Object.entries(files)) writeFileSync(path.join(checkout.dir, file), content);
  return commitFiles(checkout, {
    files: Object.keys(files),
    message: commitMessage(title, 'Summary.'),
    author: AUTHOR,
  });
}

const remoteFile = (branch: string, file: string) => server.git(repo(), 'show', `${branch}:${file}`);
const remoteSubjects = (range: string) =>
  server.git(repo(), 'log', '--format=%s', range).trim().split('\n').filter(Boolean);
const repo = () => `docs${repoCount}`;

/** Every branch of the remote with its tip. */
const remoteRefs = () => server.git(repo(), 'for-each-ref', '--format=%(refname) %(objectname)');

/** Gives the remote `develop` (a base other than the default branch) and `feature/theirs` (no branch of docwright's); returns its refs. */
function branchesOfOthers(): string {
  server.git(repo(), 'branch', 'develop', 'main');
  server.git(repo(), 'branch', 'feature/theirs', 'main');
  return remoteRefs();
}

function assertNoTempCheckouts() {
  assert.deepEqual(readdirSync(tmpRoot), [], 'every temporary checkout is removed');
}

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<HostError> {
  const error = await promise.then(
    () => assert.fail(`expected ${code}`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof HostError, `expected a HostError, got ${String(error)}`);
  assert.equal(error.code, code, error.message);
  return error;
}

before(async () => {
  server = await startGitHttpServer({
    tokens: { [WRITE_TOKEN]: 'write', [READ_TOKEN]: 'read' },
    username: USER,
  });
});

after(async () => {
  await server.close();
});

beforeEach(async () => {
  repoCount++;
  remote = await server.createRepository(repo(), {
    'index.mdx': '# Home\n\nLine one.\n',
    'guide.mdx': '# Guide\n',
  });
  tmpRoot = mkdtempSync(path.join(tmpdir(), 'docwright-git-http-test-'));
});

afterEach(() => {
  rmSync(tmpRoot, { recursive: true, force: true });
});

for (const way of WAYS)
  describe(`git over smart HTTP with credentials in the environment (${way})`, () => {
    useWay(way);
    test('clone, commit only the given files, push; a follow-up adds a commit to the branch', async () => {
      const first = await run('docwright/abc');
      try {
        assert.equal(first.existing, false);
        writeFileSync(path.join(first.dir, 'stray.txt'), 'not part of the run\n');
        assert.equal(await commit(first, { 'index.mdx': '# Home\n\nLine one, edited.\n' }, 'First'), true);
        await pushBranch(first);
      } finally {
        await first.remove();
      }
      assertNoTempCheckouts();
      assert.equal(remoteFile('docwright/abc', 'index.mdx'), '# Home\n\nLine one, edited.\n');
      assert.equal(
        server.git(repo(), 'show', '--format=', '--name-only', 'docwright/abc').trim(),
        'index.mdx',
        'only the given file is committed',
      );
      assert.match(
        server.git(repo(), 'log', '-1', '--format=%B', 'docwright/abc'),
        /Generated-By: docwright/,
      );
      assert.equal(
        server.git(repo(), 'log', '-1', '--format=%an <%ae>', 'docwright/abc').trim(),
        'docwright[bot] <docwright@example.com>',
      );

      const followUp = await run('docwright/abc');
      try {
        assert.equal(followUp.existing, true);
        assert.equal(followUp.base, server.git(repo(), 'rev-parse', 'docwright/abc').trim());
        assert.equal(await commit(followUp, { 'guide.mdx': '# Guide\n\nMore.\n' }, 'Second'), true);
        await pushBranch(followUp);
      } finally {
        await followUp.remove();
      }
      assertNoTempCheckouts();
      assert.deepEqual(remoteSubjects('main..docwright/abc'), ['Second', 'First']);
    });

    test('commits deletions, moves and odd names exactly; nothing changed commits nothing; the message is cleaned', async () => {
      const checkout = await run('docwright/moves');
      try {
        const at = (file: string) => path.join(checkout.dir, file);
        // Rewriting a file with its own content is no change.
        writeFileSync(at('guide.mdx'), '# Guide\n');
        const unchanged = { files: ['guide.mdx', 'never-existed.mdx'], message: 'x', author: AUTHOR };
        assert.equal(await commitFiles(checkout, unchanged), false);

        renameSync(at('guide.mdx'), at('-moved guide*.mdx'));
        rmSync(at('index.mdx'));
        writeFileSync(at(':(glob)odd.mdx'), 'odd\n');
        writeFileSync(at('stray.mdx'), 'not part of the run\n');
        const committed = await commitFiles(checkout, {
          files: ['guide.mdx', '-moved guide*.mdx', 'index.mdx', ':(glob)odd.mdx'],
          message: commitMessage('  Move \r\n the guide  ', 'Line one.   \r\n\r\n\r\n\r\nLine two.\t\n'),
          author: AUTHOR,
        });
        assert.equal(committed, true);
        const status = await git(['status', '--porcelain', '--untracked-files=all'], { cwd: checkout.dir });
        assert.equal(status, '?? stray.mdx\n', 'the index matches the commit; only the stray file is left');
        await pushBranch(checkout);
      } finally {
        await checkout.remove();
      }
      assert.deepEqual(server.git(repo(), 'ls-tree', '--name-only', 'docwright/moves').trim().split('\n'), [
        '-moved guide*.mdx',
        ':(glob)odd.mdx',
      ]);
      assert.equal(
        server.git(repo(), 'log', '-1', '--format=%B', 'docwright/moves'),
        'Move the guide\n\nLine one.\n\nLine two.\n\nGenerated-By: docwright\n\n',
      );
      assert.equal(
        server.git(repo(), 'rev-parse', 'docwright/moves~1').trim(),
        server.git(repo(), 'rev-parse', 'main').trim(),
      );
    });

    test('a likely-new branch is cloned while the refs are listed; one that exists after all is used instead', async () => {
      const fresh = await checkoutForRun({
        remote,
        ref: 'main',
        branch: 'docwright/new',
        env: env(WRITE_TOKEN),
        tmpDir: tmpRoot,
        likelyNew: true,
        mirror,
      });
      try {
        assert.equal(fresh.existing, false);
        assert.equal(fresh.base, server.git(repo(), 'rev-parse', 'main').trim());
        assert.equal(
          await commit(fresh, { 'index.mdx': '# Home\n\nFirst attempt.\n' }, 'First attempt'),
          true,
        );
        await pushBranch(fresh);
      } finally {
        await fresh.remove();
      }
      // A retried first run whose branch was pushed before the crash.
      const again = await checkoutForRun({
        remote,
        ref: 'main',
        branch: 'docwright/new',
        env: env(WRITE_TOKEN),
        tmpDir: tmpRoot,
        likelyNew: true,
        mirror,
        ownsBranch: ownBranch,
      });
      try {
        assert.equal(again.existing, true);
        assert.equal(again.base, server.git(repo(), 'rev-parse', 'docwright/new').trim());
        assert.equal(readFileSync(path.join(again.dir, 'index.mdx'), 'utf8'), '# Home\n\nFirst attempt.\n');
      } finally {
        await again.remove();
      }
      await rejectsWith(
        checkoutForRun({
          remote,
          ref: 'no-such-branch',
          branch: 'docwright/x',
          env: env(WRITE_TOKEN),
          tmpDir: tmpRoot,
          likelyNew: true,
          mirror,
        }),
        'ref-not-found',
      );
      await rejectsWith(
        checkoutForRun({
          remote,
          ref: 'main',
          branch: 'docwright/x',
          env: env('wrong-token'),
          tmpDir: tmpRoot,
          likelyNew: true,
          mirror,
        }),
        'host-auth-failed',
      );
      assertNoTempCheckouts();
    });

    test('a wrong token fails with host-auth-failed', async () => {
      const error = await rejectsWith(run('docwright/x', 'dwtest_WRONG_token_0000'), 'host-auth-failed');
      assert.ok(!error.message.includes('dwtest_WRONG_token_0000'));
      assertNoTempCheckouts();
      const last = server.requests.at(-1)!;
      assert.equal(last.status, 401);
    });

    test('a read-only token may clone but pushing fails with host-permission-denied', async () => {
      const checkout = await run('docwright/ro', READ_TOKEN);
      try {
        await commit(checkout, { 'index.mdx': 'changed\n' });
        await rejectsWith(pushBranch(checkout), 'host-permission-denied');
      } finally {
        await checkout.remove();
      }
      assertNoTempCheckouts();
      assert.equal(server.git(repo(), 'branch', '--list', 'docwright/ro').trim(), '');
    });

    test('a missing base ref fails with ref-not-found', async () => {
      await rejectsWith(
        checkoutForRun({
          remote,
          ref: 'no-such-branch',
          branch: 'docwright/m',
          env: env(WRITE_TOKEN),
          tmpDir: tmpRoot,
          mirror,
        }),
        'ref-not-found',
      );
      assertNoTempCheckouts();
    });

    test('a branch that moved meanwhile: the run rebases onto it and pushes', async () => {
      const seed = await run('docwright/moving');
      await commit(seed, { 'guide.mdx': '# Guide\n\nSeed.\n' }, 'Seed');
      await pushBranch(seed);
      await seed.remove();

      const mine = await run('docwright/moving');
      const theirs = await run('docwright/moving');
      try {
        await commit(theirs, { 'guide.mdx': '# Guide\n\nTheirs.\n' }, 'Theirs');
        await pushBranch(theirs);
        await commit(mine, { 'index.mdx': '# Home\n\nMine.\n' }, 'Mine');
        await pushBranch(mine);
      } finally {
        await mine.remove();
        await theirs.remove();
      }
      assertNoTempCheckouts();
      assert.deepEqual(remoteSubjects('main..docwright/moving'), ['Mine', 'Theirs', 'Seed']);
      assert.equal(remoteFile('docwright/moving', 'index.mdx'), '# Home\n\nMine.\n');
      assert.equal(remoteFile('docwright/moving', 'guide.mdx'), '# Guide\n\nTheirs.\n');
      assert.equal(
        server.git(repo(), 'log', '-1', '--format=%an|%cn', 'docwright/moving').trim(),
        'docwright[bot]|docwright[bot]',
      );
    });

    test('a new branch that another run of the project created meanwhile is rebased onto as well', async () => {
      const mine = await run('docwright/race');
      const theirs = await run('docwright/race');
      try {
        await commit(theirs, { 'guide.mdx': 'Theirs.\n' }, 'Theirs');
        await pushBranch(theirs);
        await commit(mine, { 'index.mdx': 'Mine.\n' }, 'Mine');
        await pushBranch(mine);
      } finally {
        await mine.remove();
        await theirs.remove();
      }
      assert.deepEqual(remoteSubjects('main..docwright/race'), ['Mine', 'Theirs']);
    });

    test('a conflicting move fails with push-rejected and leaves the remote branch alone', async () => {
      const mine = await run('docwright/conflict');
      const theirs = await run('docwright/conflict');
      try {
        await commit(theirs, { 'index.mdx': '# Home\n\nTheir line.\n' }, 'Theirs');
        await pushBranch(theirs);
        const theirTip = server.git(repo(), 'rev-parse', 'docwright/conflict').trim();
        await commit(mine, { 'index.mdx': '# Home\n\nMy line.\n' }, 'Mine');
        await rejectsWith(pushBranch(mine), 'push-rejected');
        assert.equal(server.git(repo(), 'rev-parse', 'docwright/conflict').trim(), theirTip);
      } finally {
        await mine.remove();
        await theirs.remove();
      }
      assertNoTempCheckouts();
    });

    test('a branch that appeared meanwhile and is not docwright’s is left alone, even where pushing would fast-forward it', async () => {
      const mine = await run('docwright/late', WRITE_TOKEN, { ownsBranch: async () => false });
      try {
        await commit(mine, { 'index.mdx': 'Mine.\n' }, 'Mine');
        // Someone creates the branch at the base: a plain push would be a fast-forward onto it.
        server.git(repo(), 'branch', 'docwright/late', 'main');
        const theirTip = server.git(repo(), 'rev-parse', 'docwright/late').trim();
        await rejectsWith(pushBranch(mine), 'branch-exists');
        assert.equal(server.git(repo(), 'rev-parse', 'docwright/late').trim(), theirTip);
      } finally {
        await mine.remove();
      }
      assertNoTempCheckouts();
    });

    test('the checkout refuses the base branch, the default branch and a branch docwright did not create', async () => {
      const before = branchesOfOthers();
      const checkout = (branch: string, ref = 'main') =>
        checkoutForRun({ remote, ref, branch, env: env(WRITE_TOKEN), tmpDir: tmpRoot, mirror, sparse });
      assert.match(
        (await rejectsWith(checkout('main'), 'branch-not-allowed')).message,
        /never pushes to main: it is the job's base branch/,
      );
      assert.match(
        (await rejectsWith(checkout('main', 'develop'), 'branch-not-allowed')).message,
        /never pushes to main: it is the repository's default branch/,
      );
      assert.match(
        (await rejectsWith(checkout('feature/theirs'), 'branch-exists')).message,
        /feature\/theirs already exists and docwright did not create it/,
      );
      assert.equal(remoteRefs(), before);
      assertNoTempCheckouts();
    });

    test('the pusher refuses them too, whatever the checkout was made for (defence in depth)', async () => {
      const before = branchesOfOthers();
      const bypassed = async (ref: string, change: Partial<Checkout>, code: string) => {
        const checkout = await checkoutForRun({
          remote,
          ref,
          branch: 'docwright/bypassed',
          env: env(WRITE_TOKEN),
          tmpDir: tmpRoot,
          mirror,
          sparse,
        });
        try {
          // Its credentials ride along for the pusher, but never show when it is logged.
          const secrets = Object.values(checkout.context?.env ?? {}).filter((v) => v.length >= 16);
          assert.ok(secrets.length > 0, 'the credentials are in the context');
          for (const shown of [inspect(checkout, { depth: 5, showHidden: true }), JSON.stringify(checkout)]) {
            assert.ok(!secrets.some((secret) => shown.includes(secret)), shown);
          }
          await commit(checkout, { 'index.mdx': 'Unreviewed.\n' }, 'Unreviewed');
          Object.assign(checkout, change);
          await rejectsWith(pushBranch(checkout), code);
        } finally {
          await checkout.remove();
        }
      };
      await bypassed('main', { branch: 'main' }, 'branch-not-allowed');
      await bypassed('develop', { branch: 'main' }, 'branch-not-allowed');
      await bypassed('main', { branch: 'feature/theirs', existing: true }, 'branch-exists');
      await bypassed('main', { branch: 'feature/theirs' }, 'branch-exists');
      assert.equal(remoteRefs(), before, 'nothing was pushed anywhere');
      assertNoTempCheckouts();
    });

    test('aborting mid-clone removes the checkout', async () => {
      const controller = new AbortController();
      let seen = 0;
      let heldUrl = '';
      // ls-remote makes at most two requests; the third is the clone's.
      const release = server.hold({
        match: () => ++seen >= 3,
        onHeld: (request) => {
          if (heldUrl !== '') return;
          heldUrl = request.url;
          setTimeout(() => controller.abort(new Error('archived')), 20);
        },
      });
      try {
        const started = Date.now();
        const error = await run('docwright/abort', WRITE_TOKEN, { signal: controller.signal }).then(
          () => assert.fail('expected an abort'),
          (e: unknown) => e as Error,
        );
        assert.equal(error.name, 'AbortError');
        assert.ok(heldUrl !== '', 'the clone was under way');
        assert.ok(Date.now() - started < 3000, 'the abort is prompt');
        assertNoTempCheckouts();
      } finally {
        release();
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      assertNoTempCheckouts();
    });
  });

for (const way of WAYS)
  describe(`the token never leaks (${way})`, () => {
    useWay(way);
    test('not in the checkout, its remote, git errors, or any request but the Authorization header', async () => {
      const checkout = await run('docwright/scan');
      try {
        await commit(checkout, { 'index.mdx': '# Scanned\n' });
        await pushBranch(checkout);

        // The checkout, its git directory, and the mirror it came from.
        const scanned = [checkout.dir, checkout.gitDir, ...(mirrorDir ? [mirrorDir] : [])];
        const files = scanned.flatMap((dir) =>
          readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()),
        );
        assert.ok(
          files.some((e) => e.name === 'HEAD' && e.parentPath.startsWith(checkout.gitDir)),
          'the git directory is scanned too',
        );
        if (mirrorDir)
          assert.ok(
            files.some((e) => e.name === 'packed-refs' || e.name.endsWith('.pack')),
            'the mirror too',
          );
        for (const entry of files) {
          const content = readFileSync(path.join(entry.parentPath, entry.name)).toString('latin1');
          for (const form of WRITE_FORMS) assert.ok(!content.includes(form), `${entry.name} holds the token`);
        }

        const remotes = await git(['remote', '-v'], { cwd: checkout.dir });
        assert.match(remotes, /^origin\thttp:\/\/127\.0\.0\.1:\d+\/docs\d+\.git \(fetch\)/);
        const config = await git(['config', '--list', '--local'], { cwd: checkout.dir });
        for (const text of [remotes, config]) for (const form of WRITE_FORMS) assert.ok(!text.includes(form));

        // A git failure whose stderr names the token comes back redacted (a directory cannot be staged).
        mkdirSync(path.join(checkout.dir, WRITE_TOKEN));
        writeFileSync(path.join(checkout.dir, WRITE_TOKEN, 'page.mdx'), 'x\n');
        const error = await commitFiles(checkout, {
          files: [WRITE_TOKEN],
          message: 'x',
          author: AUTHOR,
        }).then(
          () => assert.fail('expected a GitError'),
          (e: unknown) => e,
        );
        assert.ok(error instanceof GitError);
        assert.match(error.message, /Unable to process path \[redacted\]/);
        assert.match(error.stderr, /is a directory/);
        for (const form of WRITE_FORMS) {
          assert.ok(!error.message.includes(form) && !error.stderr.includes(form), error.message);
        }
        const raw = await git(['update-index', '--add', '--', WRITE_TOKEN], { cwd: checkout.dir }).catch(
          (e: GitError) => e,
        );
        assert.ok(
          raw instanceof GitError && raw.stderr.includes(WRITE_TOKEN),
          'unredacted without a redactor',
        );
      } finally {
        await checkout.remove();
      }
      assertNoTempCheckouts();

      const expected = `Basic ${Buffer.from(`${USER}:${WRITE_TOKEN}`).toString('base64')}`;
      const mine = server.requests.filter((r) => r.headers.authorization === expected);
      assert.ok(
        mine.some((r) => r.url.includes('git-receive-pack')),
        'the push went through the server',
      );
      for (const request of server.requests) {
        const { authorization: _, ...others } = request.headers;
        const text = `${request.method} ${request.url} ${JSON.stringify(others)}`;
        for (const form of WRITE_FORMS)
          assert.ok(!text.includes(form), `token outside Authorization: ${text}`);
      }
    });

    test('the redactor removes the token, its base64 forms and URL user info', () => {
      const redact = createRedactor([WRITE_TOKEN]);
      const text = [
        `fatal: unable to access 'https://someone:${WRITE_TOKEN}@example.com/docs.git/'`,
        `header: ${gitCredentialEnv(remote, { username: USER, token: WRITE_TOKEN }).GIT_CONFIG_VALUE_0}`,
        `gitlab: Basic ${Buffer.from(`oauth2:${WRITE_TOKEN}`).toString('base64')}`,
        `any user: ${Buffer.from(`anybody-at-all:${WRITE_TOKEN}`).toString('base64')}`,
        `raw ${WRITE_TOKEN} and ${Buffer.from(WRITE_TOKEN).toString('base64url')}`,
        'https://alice:hunter2@example.com/x',
      ].join('\n');
      const out = redact(text);
      for (const form of [
        ...WRITE_FORMS,
        'hunter2',
        Buffer.from(`oauth2:${WRITE_TOKEN}`).toString('base64'),
      ]) {
        assert.ok(!out.includes(form), out);
      }
      assert.match(out, /https:\/\/\[redacted\]@example\.com\/docs\.git/);
      assert.match(out, /^header: Authorization: Basic \[redacted\]$/m);
      assert.equal(redact('nothing secret here'), 'nothing secret here');

      const cause = new GitError(`git push failed: ${WRITE_TOKEN}`, 1, WRITE_TOKEN);
      const event = {
        type: 'git.error',
        data: { error: new HostError('push-rejected', `no ${WRITE_TOKEN}`, { cause }) },
      };
      const clean = redactDeep(event, redact);
      assert.ok(clean.data.error instanceof HostError);
      assert.equal(clean.data.error.code, 'push-rejected');
      assert.ok(!JSON.stringify(clean).includes(WRITE_TOKEN));
      assert.ok(!String(clean.data.error.stack).includes(WRITE_TOKEN));
      assert.ok(!(clean.data.error.cause as GitError).stderr.includes(WRITE_TOKEN));
      assert.ok(event.data.error.message.includes(WRITE_TOKEN), 'the original is left as it was');
    });

    test('credentials are scoped to the remote origin and refused inside URLs', () => {
      const credentialEnv = gitCredentialEnv('https://git.example.com/org/docs.git', {
        username: 'oauth2',
        token: 't0ken-abc',
      });
      assert.deepEqual(credentialEnv, {
        GIT_CONFIG_COUNT: '2',
        GIT_CONFIG_KEY_0: 'http.https://git.example.com/.extraheader',
        GIT_CONFIG_VALUE_0: `Authorization: Basic ${Buffer.from('oauth2:t0ken-abc').toString('base64')}`,
        GIT_CONFIG_KEY_1: 'http.https://git.example.com/.followRedirects',
        GIT_CONFIG_VALUE_1: 'false',
      });
      assert.throws(() =>
        gitCredentialEnv('https://u:p@git.example.com/x.git', { username: 'u', token: 't' }),
      );
      assert.throws(() => gitCredentialEnv('file:///tmp/x', { username: 'u', token: 't' }));
    });
  });
