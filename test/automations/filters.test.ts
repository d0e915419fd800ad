import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type AutomationInput, parseAutomation } from '../../src/automations/automation.ts';
import { type ChangeFacts, judgeChange } from '../../src/automations/filters.ts';
import { commitMessage } from '../../src/git/commit.ts';

const options = { branchPrefix: 'docwright/' };
const automation = (trigger: AutomationInput['trigger'], enabled = true) =>
  parseAutomation({ name: 'a', instruction: 'b', trigger, enabled });

const change = (facts: Partial<ChangeFacts> = {}): ChangeFacts => ({
  repository: 'api',
  files: ['src/routes/widgets.ts', 'README.md'],
  labels: ['enhancement'],
  headRef: 'feature/cursor',
  commits: [{ message: 'Accept a cursor' }],
  ...facts,
});

const verdict = (a: ReturnType<typeof automation>, c: ChangeFacts) => {
  const v = judgeChange(a, c, options);
  return v.verdict === 'skip' ? `skip ${v.reason}` : v.verdict;
};

describe('which changes an automation watches', () => {
  test("code-change: every context repository by default, not the project's own unless named", () => {
    const all = automation({ type: 'code-change' });
    assert.equal(verdict(all, change()), 'run');
    assert.equal(verdict(all, change({ repository: 'web' })), 'run');
    assert.equal(verdict(all, change({ repository: 'docs' })), 'unwatched');
    const some = automation({ type: 'code-change', repositories: ['web', 'docs'] });
    assert.equal(verdict(some, change()), 'unwatched');
    assert.equal(verdict(some, change({ repository: 'web' })), 'run');
    assert.equal(verdict(some, change({ repository: 'docs' })), 'run');
  });

  test("docs-push: the project's own repository only; schedules and manual automations: no change", () => {
    const docsPush = automation({ type: 'docs-push' });
    assert.equal(verdict(docsPush, change({ repository: 'docs', headRef: null })), 'run');
    assert.equal(verdict(docsPush, change()), 'unwatched');
    assert.equal(verdict(automation({ type: 'schedule', cron: '0 9 * * 1' }), change()), 'unwatched');
    assert.equal(verdict(automation({ type: 'manual' }), change()), 'unwatched');
  });

  test('an unwatched change is not recorded even when the automation is disabled', () => {
    assert.equal(
      verdict(automation({ type: 'code-change', repositories: ['web'] }, false), change()),
      'unwatched',
    );
  });
});

describe('skips and their reasons', () => {
  const watching = automation({ type: 'code-change' });

  test('disabled', () => {
    assert.equal(verdict(automation({ type: 'code-change' }, false), change()), 'skip disabled');
  });

  test("own-change: the head branch under the project's prefix, or every commit with docwright's trailer", () => {
    assert.equal(verdict(watching, change({ headRef: 'docwright/job-01jx' })), 'skip own-change');
    const own = { message: commitMessage('Update the quickstart', 'Explains --json.') };
    assert.equal(verdict(watching, change({ headRef: null, commits: [own, own] })), 'skip own-change');
    assert.equal(
      verdict(watching, change({ headRef: null, commits: [own, { message: "A person's fix" }] })),
      'run',
    );
    assert.equal(
      judgeChange(watching, change({ headRef: 'bots/docs-7' }), { branchPrefix: 'bots/docs-' }).verdict,
      'skip',
    );
  });

  test('label: any of skipLabels, in any case; none when skipLabels is empty', () => {
    assert.equal(verdict(watching, change({ labels: ['enhancement', 'No-Docs'] })), 'skip label');
    assert.equal(verdict(watching, change({ labels: ['no-docs-needed'] })), 'run');
    const custom = automation({ type: 'code-change', skipLabels: ['internal', 'skip docs'] });
    assert.equal(verdict(custom, change({ labels: [' Skip Docs '] })), 'skip label');
    assert.equal(verdict(custom, change({ labels: ['no-docs'] })), 'run');
    const upper = automation({ type: 'code-change', skipLabels: ['Internal'] });
    assert.equal(verdict(upper, change({ labels: ['internal'] })), 'skip label');
    assert.equal(
      verdict(automation({ type: 'code-change', skipLabels: [] }), change({ labels: ['no-docs'] })),
      'run',
    );
  });

  test('paths: the change must touch a file matching one glob', () => {
    const api = automation({ type: 'code-change', paths: ['src/routes/**', 'openapi.{yaml,json}'] });
    assert.equal(verdict(api, change()), 'run');
    assert.equal(verdict(api, change({ files: ['openapi.json'] })), 'run');
    assert.equal(
      verdict(api, change({ files: ['./src/routes/a.ts'] })),
      'run',
      'a leading ./ is no part of the path',
    );
    assert.equal(verdict(api, change({ files: ['test/routes.test.ts', 'src/db.ts'] })), 'skip paths');
    assert.equal(verdict(api, change({ files: [] })), 'skip paths');
    const dotted = automation({ type: 'code-change', paths: ['config/**'] });
    assert.equal(verdict(dotted, change({ files: ['config/.env.example'] })), 'run', 'globs match dot files');
  });

  test('paths: unknown files, or a list cut short without a match, run', () => {
    const api = automation({ type: 'code-change', paths: ['src/routes/**'] });
    assert.equal(verdict(api, change({ files: null })), 'run');
    assert.equal(verdict(api, change({ files: ['src/db.ts'], filesComplete: false })), 'run');
    assert.equal(verdict(api, change({ files: ['src/db.ts'], filesComplete: true })), 'skip paths');
  });

  test('docs-push takes paths too, and no labels', () => {
    const mdx = automation({ type: 'docs-push', paths: ['**/*.mdx'] });
    const push = change({ repository: 'docs', headRef: null, labels: ['no-docs'] });
    assert.equal(verdict(mdx, { ...push, files: ['guides/start.mdx'] }), 'run');
    assert.equal(verdict(mdx, { ...push, files: ['docs.json'] }), 'skip paths');
  });

  test('the first reason in order: disabled, own-change, label, paths', () => {
    const strict = (enabled: boolean) => automation({ type: 'code-change', paths: ['nothing/**'] }, enabled);
    const everything = change({ headRef: 'docwright/job-1', labels: ['no-docs'] });
    assert.equal(verdict(strict(false), everything), 'skip disabled');
    assert.equal(verdict(strict(true), everything), 'skip own-change');
    assert.equal(verdict(strict(true), { ...everything, headRef: 'feature/x' }), 'skip label');
    assert.equal(verdict(strict(true), { ...everything, headRef: 'feature/x', labels: [] }), 'skip paths');
  });
});
