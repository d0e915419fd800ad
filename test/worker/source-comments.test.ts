// The comment on a source pull request (commentOnSource): the docs pull request, else the docs
// branch when the docs host opens none, else the agent's reason; the model's text is bounded.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sourceComment } from '../../src/pipeline/source-comments.ts';

test('the link, the branch, or the reason, with the job named', () => {
  const base = { summary: 'Documents --verbose.', jobId: 'job_1' };
  assert.match(
    sourceComment({ ...base, prLink: 'https://h/docs/pull/3', branch: 'docwright/x' }),
    /^The documentation for this change is proposed in https:\/\/h\/docs\/pull\/3\.\n\nDocuments --verbose\.\n\n<sub>docwright job `job_1`<\/sub>$/,
  );
  assert.match(
    sourceComment({ ...base, prLink: null, branch: 'docwright/x' }),
    /^The documentation for this change is on the branch `docwright\/x`/,
  );
  assert.match(sourceComment({ ...base, prLink: null, branch: null }), /^No documentation change was needed/);
  const long = sourceComment({ ...base, summary: 'x'.repeat(100_000), prLink: null, branch: null });
  assert.ok(long.length < 4_200, 'a summary is cut');
});
