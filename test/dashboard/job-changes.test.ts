// The job page's "Code changes" (docs/code-context.mdx): the changes are listed from the job's
// creation, so the page shows one a run has not resolved yet (no sha, no title) without a
// "null" and links it when its URL is known, beside the resolved ones.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jobDetails } from '../../src/dashboard/job-page.ts';
import type { AgentJob } from '../../src/jobs/agent-job.ts';

const job: AgentJob = {
  id: 'job_01jabcdefghjkmnpqrstvwxyz0',
  status: 'active',
  source: { repository: 'https://github.com/acme/docs', ref: 'main' },
  model: 'openai/gpt-test',
  prLink: null,
  createdAt: '2026-11-28T05:00:00.000Z',
  archivedAt: null,
  updatedAt: '2026-11-28T05:00:00.000Z',
  branch: null,
  summary: null,
  error: null,
  usage: null,
  changes: [
    {
      repository: 'api',
      kind: 'pull-request',
      number: 3,
      sha: 'a'.repeat(40),
      url: 'https://github.com/acme/api/pull/3',
      title: 'Add --verbose',
    },
    {
      repository: 'api',
      kind: 'commit',
      number: null,
      sha: null,
      url: 'https://github.com/acme/api/commit/abcdef1',
      title: null,
    },
    { repository: 'docs', kind: 'range', number: null, sha: null, url: null, title: null },
  ],
  checks: [],
  mode: 'edit',
  answer: null,
  citations: [],
};

test('resolved and not yet resolved changes are listed, none as "null"', () => {
  const page = jobDetails(job, new Date('2026-11-28T05:01:00.000Z')).toString();
  assert.match(
    page,
    /<a href="https:\/\/github.com\/acme\/api\/pull\/3"[^>]*>api#3<\/a> <span class="small muted">Add --verbose<\/span>/,
  );
  assert.match(
    page,
    /<a href="https:\/\/github.com\/acme\/api\/commit\/abcdef1"[^>]*>api \(commit, not resolved yet\)<\/a>/,
  );
  assert.match(page, /<li>docs \(range, not resolved yet\) <span class="small muted"><\/span><\/li>/);
  assert.doesNotMatch(page, /null|undefined/);
});
