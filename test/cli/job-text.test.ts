// `docwright job get` without --json: the job's checks and code changes in words, not [object Object].
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jobText } from '../../src/cli/job-text.ts';
import type { AgentJob } from '../../src/client/types.ts';

const job: AgentJob = {
  id: 'job_1',
  status: 'completed',
  source: { repository: 'https://example.com/acme/docs', ref: 'main' },
  model: 'openai/gpt-4.1',
  prLink: null,
  createdAt: '2026-11-28T00:00:00.000Z',
  archivedAt: null,
  updatedAt: '2026-11-28T00:00:00.000Z',
  branch: 'docwright/x',
  summary: 'Done.',
  error: null,
  usage: null,
  changes: [
    { repository: 'api', kind: 'pull-request', number: 42, sha: 'a'.repeat(40), url: null, title: 'T' },
  ],
  checks: [
    { name: 'links', status: 'fixed', findings: [] },
    {
      name: 'style',
      status: 'passed',
      findings: [{ path: 'a.mdx', line: 3, message: 'Avoid "simply"', level: 'warning', preexisting: true }],
    },
  ],
  mode: 'edit',
  answer: null,
  citations: [],
};

test('job text names each check, its status and its findings, and the changes by name', () => {
  const text = jobText(job);
  assert.match(
    text,
    /^checks:\n {2}links {2}fixed by the agent\n {2}style {2}passed\n {4}a\.mdx:3 {2}Avoid "simply" {2}\(warning, already there\)$/m,
  );
  assert.match(text, /^changes: api#42$/m);
  assert.doesNotMatch(text, /object Object/);
  assert.match(jobText({ ...job, checks: [] }), /^checks: -$/m);
});

test('an ask job prints its answer last, indented, and each citation as path:start-end; no checks', () => {
  const text = jobText({
    ...job,
    mode: 'ask',
    branch: null,
    summary: 'Each project may create 100 jobs per hour.',
    changes: [],
    checks: [],
    answer: 'Each project may create 100 jobs per hour.\n\nFollow-ups count too.',
    citations: [
      { path: 'limits.mdx', startLine: 5, endLine: 5 },
      { path: '_context/api/src/limits.ts', startLine: 1, endLine: 3 },
    ],
  });
  assert.match(text, /^mode: ask$/m);
  assert.ok(
    text.endsWith(
      'answer:\n  Each project may create 100 jobs per hour.\n\n  Follow-ups count too.\ncitations:\n  limits.mdx:5-5\n  _context/api/src/limits.ts:1-3',
    ),
    text,
  );
  assert.doesNotMatch(text, /^checks:/m);
  assert.equal(
    jobText({ ...job, mode: 'ask', answer: null })
      .split('\n')
      .at(-1),
    'answer: -',
  );
  assert.doesNotMatch(jobText(job), /^answer|^citations/m, 'an edit job shows neither');
});
