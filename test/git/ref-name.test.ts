import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { describe, test } from 'node:test';
import { checkoutForRun } from '../../src/git/checkout.ts';
import { branchNameProblem, branchPrefixProblem, toBranchName } from '../../src/ref-name.ts';
import { createGitRepository, seedProject, startTestApp } from '../helpers/app.ts';

/** git itself, the oracle: does `git check-ref-format --branch` accept the name? */
const gitAccepts = (name: string) =>
  spawnSync('git', ['check-ref-format', '--branch', name], { stdio: 'ignore' }).status === 0;

const refused = [
  '-x',
  '--force',
  'a..b',
  'a/../b',
  'x.lock',
  'a.lock/b',
  '.hidden',
  'a/.b',
  '/lead',
  'trail/',
  'a//b',
  'dot.',
  'a b',
  'a~1',
  'a^',
  'a:b',
  'a?',
  'a*',
  'a[',
  'a\\b',
  'a@{1}',
  'tab\there',
  'nul\u0000',
  '',
];
/** Git accepts these; docwright refuses them on purpose (see src/ref-name.ts). */
const refusedByUsOnly = ['@', 'refs/heads/x', 'HEAD/x', 'HEAD', 'x'.repeat(201)];
const accepted = [
  'main',
  'docwright/abc12345',
  'release/2.0',
  'feature/a-b_c.d',
  'docs+x',
  'ünïcode/ok',
  'a@b',
];

describe('branch names follow git check-ref-format', () => {
  test('git refuses what we refuse, accepts what we accept', () => {
    for (const name of refused) {
      assert.ok(branchNameProblem(name), `we accept ${JSON.stringify(name)}`);
      if (name !== '' && !name.includes('\u0000'))
        assert.ok(!gitAccepts(name), `git accepts ${JSON.stringify(name)}`);
    }
    for (const name of accepted) {
      assert.equal(branchNameProblem(name), undefined, name);
      assert.ok(gitAccepts(name), `git refuses ${name}`);
    }
    for (const name of refusedByUsOnly) assert.ok(branchNameProblem(name), name);
  });

  test('a prefix is valid when the branches it makes are', () => {
    for (const prefix of ['', 'docwright/', 'bot-', 'docs/ai.'])
      assert.equal(branchPrefixProblem(prefix), undefined, prefix);
    for (const prefix of [
      '-x/',
      '../',
      'x.lock/',
      '/x/',
      '.x/',
      'refs/heads/',
      'HEAD/',
      'a//',
      'a b/',
      'x/.',
    ]) {
      assert.ok(branchPrefixProblem(prefix), prefix);
    }
  });

  test('the API refuses a bad branch prefix or ref with the field named; the job API refuses a bad ref', async () => {
    const t = await startTestApp();
    const repository = createGitRepository();
    try {
      for (const prefix of ['-x', 'a..b/', 'x.lock/', '/x', '.x', 'refs/heads/', 'HEAD/']) {
        await assert.rejects(
          t.app.projects.create({ name: 'Docs', repository, branchPrefix: prefix }),
          (error: { code: string; fields: { field: string }[] }) =>
            error.code === 'invalid-request' && error.fields.some((f) => f.field === 'branchPrefix'),
          prefix,
        );
      }
      const p = await seedProject(t.app);
      const res = await t.server.inject({
        method: 'POST',
        url: `/v2/agent/${p.projectId}/job`,
        headers: { authorization: `Bearer ${p.key}`, 'content-type': 'application/json' },
        payload: { prompt: 'x', ref: '--upload-pack=evil' },
      });
      assert.equal(res.statusCode, 400);
      assert.ok(res.json().errors.some((f: { field: string }) => f.field === 'ref'));
      rmSync(p.repository, { recursive: true, force: true });
    } finally {
      rmSync(repository, { recursive: true, force: true });
      await t.close();
    }
  });

  test('a checkout refuses a branch or ref stored before the rules were enforced, before git runs', async () => {
    const repository = createGitRepository();
    try {
      for (const [branch, ref] of [
        ['-x/abc12345', 'main'],
        ['docwright/abc12345', '--upload-pack=touch /tmp/x'],
        ['a..b/abc12345', 'main'],
      ] as const) {
        await assert.rejects(
          checkoutForRun({ remote: repository, ref, branch }),
          (error: { code: string }) => error.code === 'invalid-branch-name',
        );
      }
    } finally {
      rmSync(repository, { recursive: true, force: true });
    }
  });
});

describe('free text made into a branch name (Mintlify v1 `branch`)', () => {
  test('what clients send becomes a name git accepts, or one we can refuse clearly', () => {
    const cases: [string, string][] = [
      ['docs-update-2026-11-23T10:00:00.000Z', 'docs-update-2026-11-23T10-00-00.000Z'],
      ['feature/my docs', 'feature/my-docs'],
      ['--force', 'force'],
      ['a..b', 'a.b'],
      ['x.lock', 'x-lock'],
      ['/lead//trail/', 'lead/trail'],
      ['.hidden/ok.', 'hidden/ok'],
      ['a@{1}', 'a-1}'],
      ['plain', 'plain'],
    ];
    for (const [text, expected] of cases) {
      const name = toBranchName(text);
      assert.equal(name, expected, text);
      assert.equal(branchNameProblem(name), undefined, name);
      assert.ok(gitAccepts(name), `git refuses ${name}`);
    }
    assert.equal(branchNameProblem(toBranchName('...')), 'is empty');
    const started = performance.now();
    toBranchName(`${'./'.repeat(100_000)}x`);
    assert.ok(performance.now() - started < 1_000, 'linear in the input');
  });
});
