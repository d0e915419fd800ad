import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { commandCheck } from '../../../src/agent/verify/commands.ts';
import { bwrapProblem, sandboxArguments } from '../../../src/agent/verify/sandbox.ts';
import { checkoutTree, overlayTree } from '../../../src/agent/verify/tree.ts';
import type { CheckInput, CheckOutcome, RunChanges } from '../../../src/agent/verify/types.ts';
import { temporaryDirectory } from '../../helpers/temp.ts';

const NO_CHANGES: RunChanges = { changed: [], deleted: [], moved: [] };
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' };

async function checkout(files: Record<string, string>): Promise<string> {
  const root = realpathSync(temporaryDirectory('docwright-commands-'));
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), text);
  }
  return root;
}

function head(root: string, changes: RunChanges = NO_CHANGES): CheckInput {
  const tree = checkoutTree(root);
  return {
    tree,
    other: tree,
    state: 'head',
    docsDir: 'docs',
    changes,
    signal: new AbortController().signal,
  };
}

async function runCommand(
  command: string,
  root: string,
  options: Parameters<typeof commandCheck>[1] = {},
): Promise<CheckOutcome> {
  return commandCheck(command, { env, ...options }).run(head(root));
}

const bwrapMissing = await bwrapProblem(env.PATH);

describe('check commands in bubblewrap', { skip: bwrapMissing ?? false }, () => {
  test('a passing command has no finding; its name is the command line', async () => {
    const root = await checkout({ 'docs/index.md': '# Hi\n' });
    const check = commandCheck('test -f docs/index.md', { env });
    assert.equal(check.name, 'test -f docs/index.md');
    const outcome = await check.run(head(root));
    assert.deepEqual(outcome.findings, []);
    assert.equal(outcome.skipped, undefined);
  });

  test('a failing command is one error on the docs folder with its output, the same on every run', async () => {
    const root = await checkout({ 'docs/index.md': '# Hi\n' });
    const command = 'echo "docs/index.md: broken link"; pwd >&2; exit 3';
    const first = await runCommand(command, root);
    const second = await runCommand(command, root);
    assert.equal(first.findings.length, 1);
    const [finding] = first.findings;
    assert.equal(finding!.level, 'error');
    assert.equal(finding!.path, 'docs');
    assert.equal(finding!.line, null);
    assert.equal(finding!.rule, command);
    assert.match(finding!.message, /exited with code 3: fix what its output reports/);
    assert.match(finding!.message, /docs\/index\.md: broken link/);
    // Run in a copy, shown at the checkout's own path: nothing differs between runs.
    assert.ok(finding!.message.includes(root), finding!.message);
    assert.equal(second.findings[0]!.message, finding!.message);
  });

  test('the network is unreachable, a loopback server included', async () => {
    let requests = 0;
    const server = createServer((_request, response) => {
      requests++;
      response.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const root = await checkout({});
      const script = `fetch('http://127.0.0.1:${port}/').then(() => { console.log('reached'); }, (e) => { console.log('refused', e.cause && e.cause.code); process.exit(4); })`;
      const outcome = await runCommand(`node -e "${script}"`, root);
      assert.equal(outcome.findings.length, 1, 'the fetch failed');
      assert.match(outcome.findings[0]!.message, /refused/);
      assert.equal(requests, 0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  const outsideDirs: string[] = [];
  after(() => {
    for (const dir of outsideDirs) rmSync(dir, { recursive: true, force: true });
  });

  test('nothing outside the checkout is writable, and its own writes are discarded', async () => {
    const root = await checkout({ 'docs/index.md': '# Hi\n' });
    // Outside /tmp and the home folder (both hidden by mounts of their own): only the read-only
    // system stops this write.
    const outside = mkdtempSync(path.join(import.meta.dirname, '.outside-'));
    outsideDirs.push(outside);
    const target = path.join(outside, 'written.txt');
    const outcome = await runCommand(
      `echo x > inside.txt && echo x > docs/index.md && echo x > ${target}`,
      root,
    );
    assert.equal(outcome.findings.length, 1);
    // Read-only where the system is mounted; absent where the path is under the sandbox's own /tmp.
    assert.match(outcome.findings[0]!.message, /written\.txt: (Read-only file system|Directory nonexistent)/);
    assert.equal(existsSync(target), false);
    assert.deepEqual((await readdir(root)).sort(), ['docs']);
    const passing = await runCommand('echo changed > docs/index.md && touch new.txt', root);
    assert.deepEqual(passing.findings, []);
    assert.deepEqual((await readdir(root)).sort(), ['docs']);
  });

  test('the environment holds only PATH, HOME and LANG; secrets and the home folder stay out', async () => {
    const root = await checkout({});
    const outcome = await runCommand(
      'env | sort; ls -A "$(getent passwd "$(id -u)" | cut -d: -f6)"; exit 1',
      root,
      {
        env: { ...env, DOCWRIGHT_SECRET_KEY: 'sekrit-value-123', GITHUB_TOKEN: 'ghp_secret' },
      },
    );
    const message = outcome.findings[0]!.message;
    assert.doesNotMatch(message, /sekrit|ghp_secret|SECRET|TOKEN/);
    const variables = message
      .split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => line.split('=')[0]);
    assert.deepEqual(
      variables.filter((v) => v !== 'PWD' && v !== 'SHLVL' && v !== '_'),
      ['HOME', 'LANG', 'PATH'],
    );
  });

  test('the timeout stops the command and everything it started', async () => {
    const root = await checkout({});
    const started = Date.now();
    const outcome = await runCommand('echo starting; sleep 60 & sleep 60', root, { timeoutSeconds: 1 });
    assert.ok(Date.now() - started < 15_000, 'stopped at the timeout, not at the end of sleep');
    assert.match(outcome.findings[0]!.message, /did not finish within 1 s and was stopped/);
    assert.match(outcome.findings[0]!.message, /starting/);
  });

  test('DOCWRIGHT_CHECK_TIMEOUT_SECONDS sets the timeout', async () => {
    const root = await checkout({});
    const outcome = await runCommand('sleep 60', root, {
      env: { ...env, DOCWRIGHT_CHECK_TIMEOUT_SECONDS: '1' },
    });
    assert.match(outcome.findings[0]!.message, /within 1 s/);
  });

  test('only the last 4 KiB of the output are kept', async () => {
    const root = await checkout({});
    const outcome = await runCommand(
      "head -c 300000 /dev/zero | tr '\\0' a; echo; echo THE-END; exit 1",
      root,
    );
    const message = outcome.findings[0]!.message;
    assert.match(message, /THE-END$/);
    const output = message.slice(message.indexOf('\n') + 1);
    assert.ok(output.length <= 4096, `${output.length} characters kept`);
    assert.ok(output.length > 4000);
  });

  test('the base runs only after a failing head, on the checkout as it was before the run', async () => {
    const root = await checkout({ 'docs/a.md': 'BAD\n', 'docs/new.md': 'BAD too\n' });
    const changes: RunChanges = {
      changed: ['docs/a.md', 'docs/new.md'],
      deleted: ['docs/gone.md'],
      moved: [],
    };
    const originals = new Map<string, string | null>([
      ['docs/a.md', 'good\n'],
      ['docs/new.md', null],
      ['docs/gone.md', 'good, deleted by the run\n'],
    ]);
    const base = overlayTree(checkoutTree(root), originals);
    const command = '! grep -r BAD docs && test -f docs/gone.md';
    const check = commandCheck(command, { env });
    const headOutcome = await check.run(head(root, changes));
    assert.equal(headOutcome.findings.length, 1);
    const baseOutcome = await check.run({ ...head(root, changes), tree: base, state: 'base' });
    assert.deepEqual(baseOutcome.findings, [], 'the base has the originals, and no new page');
    // The materialised base is thrown away: the checkout is as the run left it.
    assert.deepEqual((await readdir(path.join(root, 'docs'))).sort(), ['a.md', 'new.md']);

    const failingBase = commandCheck('exit 1', { env });
    await failingBase.run(head(root, changes));
    const again = await failingBase.run({ ...head(root, changes), tree: base, state: 'base' });
    assert.equal(again.findings.length, 1, 'a failing base is reported, so the head failure is preexisting');
    assert.equal(
      again.findings[0]!.message,
      (await failingBase.run(head(root, changes))).findings[0]!.message,
    );
  });

  test('a base run after a passing head runs nothing', async () => {
    const root = await checkout({});
    const check = commandCheck('test ! -e marker || exit 1', { env });
    assert.deepEqual((await check.run(head(root))).findings, []);
    const base = overlayTree(checkoutTree(root), new Map());
    const outcome = await check.run({ ...head(root), tree: base, state: 'base' });
    assert.deepEqual(outcome, { findings: [] });
  });
});

describe('check commands without bubblewrap', () => {
  let bin: string;
  before(() => {
    // A PATH with a shell and a few tools but no bwrap.
    bin = temporaryDirectory('docwright-commands-bin-');
    for (const tool of ['sh', 'echo', 'env', 'sort', 'cat']) {
      const found = ['/usr/bin', '/bin'].map((dir) => path.join(dir, tool)).find((p) => existsSync(p));
      if (found) symlinkSync(found, path.join(bin, tool));
    }
  });

  test('are refused with the reason and how to allow them', async () => {
    const root = await checkout({});
    const outcome = await runCommand('exit 1', root, { env: { PATH: bin } });
    assert.deepEqual(outcome.findings, []);
    assert.match(outcome.skipped ?? '', /bubblewrap.*not installed/);
    assert.match(outcome.skipped ?? '', /DOCWRIGHT_CHECKS_UNSANDBOXED=1/);
  });

  test('run when DOCWRIGHT_CHECKS_UNSANDBOXED=1, still with an empty environment, noted', async () => {
    const root = await checkout({});
    const outcome = await runCommand('env; exit 2', root, {
      env: { PATH: bin, DOCWRIGHT_CHECKS_UNSANDBOXED: '1', SECRET_THING: 'hidden-value' },
    });
    assert.equal(outcome.findings.length, 1);
    assert.match(outcome.findings[0]!.message, /exited with code 2/);
    assert.doesNotMatch(outcome.findings[0]!.message, /hidden-value/);
    assert.match(outcome.notes?.[0] ?? '', /without isolation/);
  });
});

test('PATH folders inside a hidden folder stay visible, with their prefix, read-only', () => {
  const args = sandboxArguments({
    writable: '/work/checkout',
    hidden: ['/home/docs'],
    path: ['/home/docs/.nvm/versions/node/v24/bin', '/home/docs/tools', '/usr/bin'],
  }).join(' ');
  assert.match(
    args,
    /--tmpfs \/home\/docs --ro-bind-try \/home\/docs\/\.nvm\/versions\/node\/v24 \/home\/docs\/\.nvm\/versions\/node\/v24 --ro-bind-try \/home\/docs\/tools \/home\/docs\/tools /,
  );
  assert.doesNotMatch(args, /usr\/bin/);
  assert.match(args, /--bind \/work\/checkout \/work\/checkout .*--unshare-all --die-with-parent/);
});
