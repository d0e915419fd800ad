// `docwright eval --dogbench DIR` on items written for this test in DogBench's published format
// (items.jsonl, rubrics.jsonl) over local git repositories the test makes: no DogBench data.
// Scored by DogBench's formula and judge (one call per item, quotes checked), with DogBench's
// registered prompt, and every path of the docs repository writable but the change's code.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadDogBench } from '../../src/eval/dogbench.ts';
import { isInvalid } from '../../src/eval/task.ts';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { taskModel } from '../doubles/task-model.ts';
import { repository } from '../helpers/git-history.ts';
import { runCli } from '../helpers/process.ts';
import { temporaryDirectory } from '../helpers/temp.ts';

const RUBRIC = [
  '# Rubric: the retry option',
  '',
  '### C1 — Document the option',
  '**Priority:** P0 | **Category:** completeness | **Scoring:** requirement',
  'The configuration guide documents `retries`.',
  '',
  '### C2 — Give its default',
  '**Priority:** P3 | **Category:** factual | **Scoring:** requirement',
  'The default, 3, is stated.',
  '',
  '### C3 — No invented flags',
  '**Priority:** P1 | **Category:** safety | **Scoring:** deduction_only',
  'The documentation must not invent a command-line flag.',
  '',
  '### C4 — Migration note',
  '**Priority:** P0 | **Category:** completeness | **Scoring:** conditional',
  'If the patch mentions an upgrade, it says how to migrate.',
].join('\n');

const EXAMPLE_RUBRIC = [
  '### C1 — The example uses the new parameter',
  '**Priority:** P0 | **Category:** examples | **Scoring:** requirement',
  '`docs_src/tutorial.py` passes `limit=`.',
].join('\n');

const none = { triggered: null, verdict: null, violated: null };
const quotes = {
  triggering_patch_quote: null,
  supporting_patch_quote: null,
  contradicting_patch_quote: null,
  missing_requirement: null,
};

/** DogBench's judge, scripted: the retries item's first answer quotes text the patch has not. */
/** The passage each item's one criterion is backed by. */
const QUOTES: Record<string, string> = {
  'mono-example': 'limit=10',
  'sphinx-setting': 'retries',
  'mkdocs-page': 'Retries',
};

/** How many times the judge was asked about acme-retries (items are judged concurrently). */
let retriesAsked = 0;

function judgeAnswer(prompt: string) {
  if (prompt.includes('CELL: acme-retries')) {
    const attempt = retriesAsked++;
    const c1 = {
      ...quotes,
      id: 'C1',
      scoring_type: 'requirement',
      ...none,
      verdict: 'pass',
      supporting_patch_quote:
        attempt === 0 ? 'retries are documented' : '`retries`: attempts after a failure.',
      reason: 'documented',
    };
    return {
      criteria: [
        c1,
        {
          ...quotes,
          id: 'C2',
          scoring_type: 'requirement',
          ...none,
          verdict: 'fail',
          missing_requirement: 'no default',
          reason: 'missing',
        },
        { ...quotes, id: 'C3', scoring_type: 'deduction_only', ...none, violated: false, reason: 'clean' },
        { ...quotes, id: 'C4', scoring_type: 'conditional', ...none, triggered: false, reason: 'no upgrade' },
      ],
      summary: 'Documents retries without its default.',
    };
  }
  return {
    criteria: [
      {
        ...quotes,
        id: 'C1',
        scoring_type: 'requirement',
        ...none,
        verdict: 'pass',
        supporting_patch_quote: QUOTES[/CELL: (\S+)/.exec(prompt)?.[1] ?? ''] ?? 'limit=10',
        reason: 'ok',
      },
    ],
    summary: 'Updates the example.',
  };
}

describe('docwright eval --dogbench: DogBench-format items and rubrics over local clones', () => {
  let dir: string;
  let model: ScriptedServer;

  before(async () => {
    dir = temporaryDirectory('docwright-dogbench-');
    // The docs repository: its base, then the reference change (never shown to the agent).
    const [docsBase, reference] = repository(path.join(dir, 'repos', 'acme', 'handbook'), [
      {
        files: {
          'docs/config.md': '# Configuration\n\n`timeout`: seconds to wait (default 10).\n',
          'README.md': '# Handbook\n',
        },
      },
      { files: { 'docs/config.md': '# Configuration\n\nREFERENCE-ANSWER `retries`\n' } },
    ]);
    // The code repository: the change touches client.py (in the item's paths) and build.sh (not).
    const [codeBase, codeHead] = repository(path.join(dir, 'service'), [
      { files: { 'client.py': 'TIMEOUT = 10\n', 'build.sh': 'echo build\n' } },
      {
        files: {
          'client.py': 'TIMEOUT = 10\nRETRIES = 3  # new setting: retries\n',
          'build.sh': 'echo OUTSIDE-THE-PATHS\n',
        },
        message: 'Add client retries (#7)\n\nRetries failed calls up to 3 times.',
      },
    ]) as [string, string];
    // One repository for code and docs, its examples in docs_src/ (FastAPI's layout).
    const [monoBase, monoHead] = repository(path.join(dir, 'repos', 'acme', 'mono'), [
      {
        files: {
          'app/main.py': 'def items(): ...\n',
          'docs_src/tutorial.py': 'items()\n',
          'docs/tutorial.md': '# Tutorial\n',
        },
      },
      { files: { 'app/main.py': 'def items(limit=100): ...\n' }, message: 'Add a limit to items (#9)' },
    ]) as [string, string];
    // A Sphinx site and an MkDocs site, each documenting the same code change.
    const [sphinxBase] = repository(path.join(dir, 'repos', 'acme', 'sphinx-docs'), [
      {
        files: {
          'docs/conf.py': "project = 'acme'\nextensions = []\n",
          'docs/index.rst': 'Acme\n====\n\n.. toctree::\n   :maxdepth: 2\n\n   config\n',
          'docs/config.rst': 'Configuration\n=============\n\n``timeout``: seconds to wait.\n',
        },
      },
    ]) as [string];
    const [mkdocsBase] = repository(path.join(dir, 'repos', 'acme', 'mkdocs-docs'), [
      {
        files: {
          'mkdocs.yml': 'site_name: Acme\nnav:\n  - Home: index.md\n  - Guide: guide.md\n',
          'docs/index.md': '# Acme\n\nSee the [guide](guide.md).\n',
          'docs/guide.md': '# Guide\n\n## Timeouts\n\nCalls time out after 10 s.\n',
        },
      },
    ]) as [string];
    const docs = {
      repo_url: 'https://github.com/acme/handbook',
      base_sha: docsBase,
      head_sha: reference,
      paths: ['docs/config.md'],
    };
    const code = {
      source_url: 'https://github.com/acme/service/pull/7',
      repo_url: 'https://github.com/acme/service',
      base_sha: codeBase,
      head_sha: codeHead,
      paths: ['client.py'],
    };
    const items = [
      {
        instance_id: 'acme-retries',
        source_url: code.source_url,
        context: 'Users asked how to retry.',
        docs,
        code,
      },
      {
        instance_id: 'acme-abstain',
        source_url: 'https://github.com/acme/service/pull/8',
        context: 'Refactor: rename an internal constant.',
        docs: { ...docs, head_sha: null, paths: [] },
        code: { ...code, source_url: 'https://github.com/acme/service/pull/8' },
      },
      {
        instance_id: 'acme-docs-only',
        source_url: 'https://github.com/acme/handbook/issues/3',
        context: 'Readers ask for a README link to the configuration page.',
        docs: { ...docs, head_sha: null, paths: [] },
        code: null,
      },
      {
        instance_id: 'mono-example',
        source_url: 'https://github.com/acme/mono/pull/9',
        context: 'The items endpoint takes a limit.',
        docs: { repo_url: 'https://github.com/acme/mono', base_sha: monoBase, head_sha: null, paths: [] },
        code: {
          source_url: 'https://github.com/acme/mono/pull/9',
          repo_url: 'https://github.com/acme/mono',
          base_sha: monoBase,
          head_sha: monoHead,
          paths: ['app/main.py'],
        },
      },
      {
        instance_id: 'sphinx-setting',
        source_url: code.source_url,
        context: 'Sphinx docs for the retries setting.',
        docs: {
          repo_url: 'https://github.com/acme/sphinx-docs',
          base_sha: sphinxBase,
          head_sha: null,
          paths: [],
        },
        code,
      },
      {
        instance_id: 'mkdocs-page',
        source_url: code.source_url,
        context: 'MkDocs page for the retries setting.',
        docs: {
          repo_url: 'https://github.com/acme/mkdocs-docs',
          base_sha: mkdocsBase,
          head_sha: null,
          paths: [],
        },
        code,
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
      { expected_decision: 'patch', instance_id: 'mono-example', rubric: EXAMPLE_RUBRIC },
      { expected_decision: 'patch', instance_id: 'sphinx-setting', rubric: EXAMPLE_RUBRIC },
      { expected_decision: 'patch', instance_id: 'mkdocs-page', rubric: EXAMPLE_RUBRIC },
      { expected_decision: 'patch', instance_id: 'acme-no-clone', rubric: null },
      { expected_decision: 'abstain', instance_id: 'acme-bad-sha', rubric: null },
      { expected_decision: 'patch', instance_id: 'acme-malformed', rubric: null },
    ];
    writeFileSync(path.join(dir, 'rubrics.jsonl'), `${rubrics.map((r) => JSON.stringify(r)).join('\n')}\n`);

    model = await startOpenAIServer({
      fallback: taskModel(
        // First match wins: the Sphinx and MkDocs items name the same pull request as acme-retries.
        [
          {
            match: 'Sphinx docs for the retries setting',
            steps: [
              toolCall('read_file', { path: 'docs/config.rst' }),
              toolCall('edit_file', {
                path: 'docs/config.rst',
                old_string: '``timeout``: seconds to wait.\n',
                new_string:
                  '``timeout``: seconds to wait.\n\n``retries``: attempts after a failure (default 3).\n',
              }),
              toolCall('finish', { title: 'Document retries', summary: 'Sphinx page.' }),
            ],
          },
          {
            // A new page must be in the nav: the first finish is refused until it is.
            match: 'MkDocs page for the retries setting',
            steps: [
              toolCall('write_file', {
                path: 'docs/retries.md',
                content: '# Retries\n\nFailed calls are retried 3 times.\n',
              }),
              toolCall('finish', { title: 'Document retries', summary: 'New page.' }),
              toolCall('read_file', { path: 'mkdocs.yml' }),
              toolCall('edit_file', {
                path: 'mkdocs.yml',
                old_string: '  - Guide: guide.md\n',
                new_string: '  - Guide: guide.md\n  - Retries: retries.md\n',
              }),
              toolCall('finish', { title: 'Document retries', summary: 'New page, in the nav.' }),
            ],
          },
          {
            match: 'acme/service/pull/7',
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
            steps: [toolCall('finish', { title: 'Nothing', summary: 'Internal.' })],
          },
          {
            match: 'README link',
            steps: [toolCall('finish', { title: 'Nothing', summary: 'Wrongly abstains.' })],
          },
          {
            match: 'acme/mono/pull/9',
            steps: [
              toolCall('read_file', { path: 'docs_src/tutorial.py' }),
              toolCall('write_file', { path: 'docs_src/tutorial.py', content: 'items(limit=10)\n' }),
              toolCall('write_file', { path: 'app/main.py', content: 'changed by the agent\n' }),
              toolCall('finish', { title: 'Use limit in the example', summary: 'Example.' }),
            ],
          },
        ],
        { dogbenchJudge: judgeAnswer },
      ),
    });
  });
  after(async () => {
    await model.close();
  });

  test("items become tasks with DogBench's prompt, its rubric read as it reads it, and the change's code read-only", async () => {
    const suite = await loadDogBench(dir);
    assert.equal(suite.scoring, 'dogbench');
    const byId = new Map(suite.tasks.map((t) => [t.id, t]));
    const retries = byId.get('acme-retries')!;
    assert.ok(!isInvalid(retries));
    assert.deepEqual(
      retries.dogbench?.criteria?.map((c) => [c.id, c.priority, c.scoring]),
      [
        ['C1', 'P0', 'requirement'],
        ['C2', 'P3', 'requirement'],
        ['C3', 'P1', 'deduction_only'],
        ['C4', 'P0', 'conditional'],
      ],
    );
    assert.deepEqual(retries.checks, [], 'no synthetic checks');
    assert.match(
      retries.instruction,
      /^You are responsible for maintaining this project's user-facing documentation\./,
    );
    assert.match(
      retries.instruction,
      /Provided code change: https:\/\/github\.com\/acme\/service\/pull\/7\.\n\nFrozen change framing:\nTitle: Add client retries \(#7\)\nDescription: Retries failed calls up to 3 times\.\n\nAdditional context from pre-existing linked issues or pull requests:\nUsers asked how to retry\.\nFor this run, the documentation workspace is the current checkout\.$/,
    );
    const docsOnly = byId.get('acme-docs-only')!;
    assert.ok(!isInvalid(docsOnly));
    assert.match(docsOnly.instruction, /Provided task request:\nReaders ask for a README link/);
    const mono = byId.get('mono-example')!;
    assert.ok(!isInvalid(mono));
    assert.deepEqual(mono.readOnly, ['app/main.py']);
    assert.deepEqual(retries.readOnly, undefined, 'code in another repository is out of reach anyway');
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
      /^items\.jsonl:7: docs: no local clone of https:\/\/github\.com\/acme\/missing/,
    );
    assert.match(
      errors['acme-bad-sha']!,
      /^items\.jsonl:8: docs\.base_sha f{40} is not in .*repos\/acme\/handbook \(fetch it there\)$/,
    );
  });

  test("the CLI scores them with DogBench's judge and formula, in DogBench's names", async () => {
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
      scoring: string;
      tasks: {
        instance_id: string;
        decision: string | null;
        decision_correct: boolean;
        overall: number;
        mergeable: boolean;
        criteria: { id: string; supporting_patch_quote: string | null }[] | null;
      }[];
      summary: Record<string, number | boolean | null>;
    };
    assert.equal(doc.scoring, 'dogbench');
    const byId = new Map(doc.tasks.map((t) => [t.instance_id, t]));
    // C1 passed, C2 failed, C3 clean (no credit), C4 not triggered (not counted): 1 of 2.
    const retries = byId.get('acme-retries')!;
    assert.deepEqual([retries.decision, retries.overall, retries.mergeable], ['patch', 50, true]);
    assert.equal(retries.criteria?.[0]?.supporting_patch_quote, '`retries`: attempts after a failure.');
    assert.deepEqual(
      [byId.get('acme-abstain')!.overall, byId.get('acme-abstain')!.decision_correct],
      [100, true],
    );
    assert.deepEqual(
      [byId.get('acme-docs-only')!.decision, byId.get('acme-docs-only')!.overall],
      ['abstain', 0],
    );
    assert.equal(byId.get('mono-example')!.overall, 100, 'a docs_src example may be written');
    assert.equal(byId.get('sphinx-setting')!.overall, 100, 'a Sphinx page may be written');
    assert.equal(byId.get('mkdocs-page')!.overall, 100, 'an MkDocs page, once in the nav');
    // The set is incomplete (items did not load): no composite; the patch mean is over the 5 that ran.
    assert.equal(doc.summary.complete, false);
    assert.equal(doc.summary.composite_score, null);
    assert.equal(doc.summary.delivered_patch_quality, (50 + 0 + 100 + 100 + 100) / 5);

    const judgeRequests = model.requests.filter((r) => r.body.model === 'judge').map((r) => r.rawBody);
    assert.equal(judgeRequests.length, 5, 'one call per judged item, and one retry for the bad quote');
    assert.match(
      judgeRequests.join('\n'),
      /CORRECTION FROM THE PREVIOUS REJECTED ATTEMPT: C1: supporting_patch_quote is not an exact patch quote/,
    );
    const agentPrompts = model.requests
      .filter((r) => r.body.model === 'agent')
      .map((r) => r.rawBody)
      .join('\n');
    assert.match(agentPrompts, /RETRIES = 3/, 'the code change, in its paths');
    assert.doesNotMatch(agentPrompts, /OUTSIDE-THE-PATHS|REFERENCE-ANSWER/);
    assert.match(
      agentPrompts,
      /it is code the change touched, which is read-only/,
      "the change's own code is refused",
    );
  });

  test('--dogbench needs a judge; a folder without items.jsonl or rubrics.jsonl is a usage error', async () => {
    const env = { DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: model.url };
    const noJudge = await runCli(['eval', '--dogbench', dir, '--model', 'openai-compatible/x'], env, '');
    assert.equal(noJudge.code, 2);
    assert.match(noJudge.stderr, /--dogbench scores patches with DogBench's judge: add --judge/);
    const empty = temporaryDirectory('docwright-dogbench-');
    const flags = ['--model', 'openai-compatible/x', '--judge', 'openai-compatible/j'];
    const run = await runCli(['eval', '--dogbench', empty, ...flags], env, '');
    assert.equal(run.code, 2);
    assert.match(run.stderr, /has no items\.jsonl/);
    writeFileSync(path.join(empty, 'items.jsonl'), '');
    const noRubrics = await runCli(['eval', '--dogbench', empty, ...flags], env, '');
    assert.equal(noRubrics.code, 2);
    assert.match(noRubrics.stderr, /has no rubrics\.jsonl \(nor outcomes\.jsonl\)/);
  });
});
