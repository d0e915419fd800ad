// `docwright eval --dogbench DIR` on items written for this test in DogBench's published format
// (items.jsonl, rubrics.jsonl) over local git repositories the test makes: no DogBench data.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadDogBench } from '../../src/eval/dogbench.ts';
import { isInvalid } from '../../src/eval/task.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { taskModel } from '../doubles/task-model.ts';
import { runCli } from '../helpers/process.ts';
import { temporaryDirectory } from '../helpers/temp.ts';

/** A git repository at `dir` with one commit per tree; returns the commits. */
function repository(dir: string, trees: Record<string, string>[]): string[] {
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
      cwd: dir,
      encoding: 'utf8',
    }).trim();
  git('init', '-q', '-b', 'main');
  return trees.map((files, i) => {
    for (const [name, content] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), content);
    }
    git('add', '-A');
    git('commit', '-q', '--allow-empty', '-m', `commit ${i}`);
    return git('rev-parse', 'HEAD');
  });
}

const RUBRIC = [
  '# Rubric: the retry option',
  'Semantic equivalents pass.',
  '',
  '### C1 — Document the option',
  '',
  '**Priority:** P0 | **Category:** completeness | **Objectivity:** objective | **Scoring:** requirement',
  '',
  'The configuration guide documents `retries`.',
  '',
  '### C2 — Give its default',
  '',
  '**Priority:** P3 | **Category:** factual | **Objectivity:** objective | **Scoring:** requirement',
  '',
  'JUDGE-FAIL The default, 3, is stated.',
  '',
  '### C3 — No invented flags',
  '',
  '**Priority:** P1 | **Category:** safety | **Objectivity:** objective | **Scoring:** deduction_only',
  '',
  'The documentation must not invent a command-line flag.',
  '',
  '## Summary Table',
  '',
  '| ID | Title |',
].join('\n');

describe('docwright eval --dogbench: DogBench-format items and rubrics over local clones', () => {
  let dir: string;
  let model: ScriptedServer;
  let docsBase: string;
  let codeBase: string;
  let codeHead: string;

  before(async () => {
    dir = temporaryDirectory('docwright-dogbench-');
    // The docs repository: its base, then the reference change (never shown to the agent).
    const [base, reference] = repository(path.join(dir, 'repos', 'acme', 'handbook'), [
      {
        'docs/config.md': '# Configuration\n\n`timeout`: seconds to wait (default 10).\n',
        'README.md': '# Handbook\n',
      },
      {
        'docs/config.md':
          '# Configuration\n\n`timeout`: seconds to wait (default 10).\n\nREFERENCE-ANSWER `retries`\n',
      },
    ]);
    docsBase = base!;
    // The code repository: the change touches client.py (in the item's paths) and build.sh (not).
    [codeBase, codeHead] = repository(path.join(dir, 'service'), [
      { 'client.py': 'TIMEOUT = 10\n', 'build.sh': 'echo build\n' },
      {
        'client.py': 'TIMEOUT = 10\nRETRIES = 3  # new setting: retries\n',
        'build.sh': 'echo OUTSIDE-THE-PATHS\n',
      },
    ]) as [string, string];
    const docs = {
      repo_url: 'https://github.com/acme/handbook',
      base_sha: docsBase,
      head_sha: reference,
      paths: ['docs/config.md'],
    };
    const code = (extra: Record<string, unknown> = {}) => ({
      source_url: 'https://github.com/acme/service/pull/7',
      repo_url: 'https://github.com/acme/service',
      base_sha: codeBase,
      head_sha: codeHead,
      paths: ['client.py'],
      ...extra,
    });
    const items = [
      {
        instance_id: 'acme-retries',
        source_url: 'https://github.com/acme/service/pull/7',
        context: 'Add a retries setting to the client.',
        docs,
        code: code(),
      },
      {
        instance_id: 'acme-abstain',
        source_url: 'https://github.com/acme/service/pull/8',
        context: 'Refactor: rename an internal constant.',
        docs: { ...docs, head_sha: null, paths: [] },
        code: code(),
      },
      {
        instance_id: 'acme-docs-only',
        source_url: 'https://github.com/acme/handbook/issues/3',
        context: 'Readers ask for a README link to the configuration page.',
        docs: { ...docs, head_sha: null, paths: [] },
        code: null,
      },
      {
        instance_id: 'acme-no-clone',
        source_url: 'x',
        context: 'y',
        docs: { ...docs, repo_url: 'https://github.com/acme/missing' },
        code: null,
      },
      {
        instance_id: 'acme-bad-sha',
        source_url: 'x',
        context: 'y',
        docs: { ...docs, base_sha: 'f'.repeat(40) },
        code: null,
      },
      {
        instance_id: 'acme-malformed',
        source_url: 'x',
        context: 'y',
        docs: { ...docs, base_sha: 'short' },
        code: null,
      },
    ];
    writeFileSync(path.join(dir, 'items.jsonl'), `${items.map((i) => JSON.stringify(i)).join('\n')}\n`);
    const rubrics = [
      { expected_decision: 'patch', instance_id: 'acme-retries', rubric: RUBRIC },
      { expected_decision: 'abstain', instance_id: 'acme-abstain', rubric: null },
      { expected_decision: 'patch', instance_id: 'acme-docs-only', rubric: null },
      { expected_decision: 'patch', instance_id: 'acme-no-clone', rubric: null },
      { expected_decision: 'abstain', instance_id: 'acme-bad-sha', rubric: null },
      { expected_decision: 'patch', instance_id: 'acme-malformed', rubric: null },
    ];
    writeFileSync(path.join(dir, 'rubrics.jsonl'), `${rubrics.map((r) => JSON.stringify(r)).join('\n')}\n`);

    model = await startOpenAIServer({
      fallback: taskModel(
        [
          {
            match: 'Add a retries setting',
            steps: [
              toolCall('read_file', { path: 'docs/config.md' }),
              toolCall('edit_file', {
                path: 'docs/config.md',
                old_string: '(default 10).\n',
                new_string: '(default 10).\n\n`retries`: attempts after a failure.\n',
              }),
              toolCall('finish', { title: 'Document retries', summary: 'Adds retries.' }),
            ],
          },
          {
            match: 'rename an internal constant',
            steps: [toolCall('finish', { title: 'Nothing to do', summary: 'Internal.' })],
          },
          {
            match: 'README link',
            steps: [toolCall('finish', { title: 'Nothing', summary: 'Wrongly abstains.' })],
          },
        ],
        { judge: (prompt) => ({ passed: !prompt.includes('JUDGE-FAIL'), reason: 'ok' }) },
      ),
    });
  });
  after(async () => {
    await model.close();
  });

  test('items become tasks: abstentions are no-changes tasks, rubrics judge criteria; a missing clone, commit or field makes an item invalid, naming it', async () => {
    const suite = await loadDogBench(dir);
    const byId = new Map(suite.tasks.map((t) => [t.id, t]));
    const retries = byId.get('acme-retries')!;
    assert.ok(!isInvalid(retries));
    assert.equal(retries.expected, 'patch');
    assert.deepEqual(
      retries.rubric?.criteria.map((c) => [c.priority, c.scoring]),
      [
        ['P0', 'requirement'],
        ['P2', 'requirement'],
        ['P1', 'deduction'],
      ],
    );
    assert.match(retries.instruction, /<context>\nAdd a retries setting to the client\.\n<\/context>/);
    const abstain = byId.get('acme-abstain')!;
    assert.ok(!isInvalid(abstain));
    assert.equal(abstain.expected, 'no-changes');
    const errors = Object.fromEntries(suite.tasks.filter(isInvalid).map((t) => [t.id, t.error]));
    assert.deepEqual(Object.keys(errors).sort(), ['acme-bad-sha', 'acme-malformed', 'acme-no-clone']);
    // An invalid item still reports the kind its rubric row gives.
    const expected = Object.fromEntries(suite.tasks.filter(isInvalid).map((t) => [t.id, t.expected]));
    assert.deepEqual(expected, {
      'acme-no-clone': 'patch',
      'acme-bad-sha': 'no-changes',
      'acme-malformed': 'patch',
    });
    assert.match(
      errors['acme-no-clone']!,
      /^items\.jsonl:4: docs: no local clone of https:\/\/github\.com\/acme\/missing \(looked in repos\/acme\/missing, acme\/missing, missing\)$/,
    );
    assert.match(
      errors['acme-bad-sha']!,
      /^items\.jsonl:5: docs\.base_sha f{40} is not in .*repos\/acme\/handbook \(fetch it there\)$/,
    );
    assert.match(
      errors['acme-malformed']!,
      /^items\.jsonl:6: docs\.base_sha must be a full 40-character commit id$/,
    );
  });

  test('the CLI runs them through the pipeline: the code change limited to its paths, the reference answer never shown, the judge counted', async () => {
    const run = await runCli(
      [
        'eval',
        '--dogbench',
        dir,
        '--model',
        'openai-compatible/agent',
        '--judge',
        'openai-compatible/judge',
        '--json',
      ],
      { DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: model.url },
      '',
      { timeoutMs: 120_000 },
    );
    assert.equal(run.code, 1, `invalid items: exit 1\n${run.stderr}`);
    const doc = JSON.parse(run.stdout) as {
      suite: string;
      tasks: {
        id: string;
        outcome: string;
        score: number | null;
        checks: { type: string; passed: boolean }[];
      }[];
    };
    assert.equal(doc.suite, dir);
    const byId = new Map(doc.tasks.map((t) => [t.id, t]));
    // C1 (P0, 3) passed, C2 (P3 → P2, 1) failed, C3 kept; the `changed` P0 requirement (3) passed: 6 of 7.
    assert.equal(byId.get('acme-retries')!.outcome, 'patch');
    assert.deepEqual(
      byId.get('acme-retries')!.checks.map((c) => [c.type, c.passed]),
      [
        ['changed', true],
        ['judge', true],
        ['judge', false],
        ['judge', true],
      ],
    );
    assert.equal(byId.get('acme-retries')!.score, 85.7);
    assert.equal(byId.get('acme-abstain')!.score, 100);
    assert.equal(byId.get('acme-docs-only')!.outcome, 'no-changes');
    assert.equal(
      byId.get('acme-docs-only')!.score,
      0,
      'a patch task answered with no change fails its changed requirement',
    );
    assert.equal(byId.get('acme-no-clone')!.outcome, 'invalid');

    const agentPrompts = model.requests
      .filter((r) => r.body.model === 'agent')
      .map((r) => r.rawBody)
      .join('\n');
    assert.match(agentPrompts, /RETRIES = 3/, 'the code change, in its paths');
    assert.doesNotMatch(
      agentPrompts,
      /OUTSIDE-THE-PATHS/,
      'files outside the paths are not part of the change',
    );
    assert.doesNotMatch(
      agentPrompts,
      /REFERENCE-ANSWER|acme\/service\/pull\/7/,
      'neither the reference change nor the source is shown',
    );
  });

  test('a folder without items.jsonl or rubrics.jsonl is a usage error', async () => {
    const empty = temporaryDirectory('docwright-dogbench-');
    const env = { DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: model.url };
    const run = await runCli(['eval', '--dogbench', empty, '--model', 'openai-compatible/x'], env, '');
    assert.equal(run.code, 2);
    assert.match(run.stderr, /has no items\.jsonl/);
    writeFileSync(path.join(empty, 'items.jsonl'), '');
    const noRubrics = await runCli(['eval', '--dogbench', empty, '--model', 'openai-compatible/x'], env, '');
    assert.equal(noRubrics.code, 2);
    assert.match(noRubrics.stderr, /has no rubrics\.jsonl \(nor outcomes\.jsonl\)/);
  });
});
