// One line per transcript event for progress displays: the code-change events say which change,
// and a change's title (anyone's text) cannot break the line or carry terminal escapes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeEvent } from '../../src/client/describe-event.ts';

test('code-change events: which change, on one clean line', () => {
  assert.equal(
    describeEvent({
      type: 'changes.resolved',
      data: {
        changes: [
          {
            repository: 'api',
            kind: 'pull-request',
            number: 42,
            sha: 'a'.repeat(40),
            title: 'Add\n--verbose \u001b[31mnow',
          },
          { repository: 'docs', kind: 'commit', number: null, sha: '0123456789abcdef', title: 'Fix' },
        ],
      },
    }),
    'changes.resolved: api#42 Add --verbose [31mnow; docs@0123456789ab Fix',
  );
  assert.equal(
    describeEvent({
      type: 'change.commented',
      data: { repository: 'api', number: 42, url: 'https://x/42#c1' },
    }),
    'change.commented: api#42 https://x/42#c1',
  );
  assert.equal(
    describeEvent({
      type: 'change.comment_failed',
      data: { repository: 'api', number: 42, message: 'HTTP 403' },
    }),
    'change.comment_failed: api#42: HTTP 403',
  );
  assert.equal(
    describeEvent({ type: 'code.context_unavailable', data: { repository: 'web', message: 'not found' } }),
    'code.context_unavailable: web: not found',
  );
});

test("a retry says when it runs on the project's ref now (issue 35)", () => {
  assert.equal(
    describeEvent({ type: 'job.retried', data: { retryOf: 1 } }),
    'job.retried: instruction 1 again',
  );
  assert.equal(
    describeEvent({ type: 'job.retried', data: { retryOf: 1, ref: 'trunk', previousRef: 'main' } }),
    "job.retried: instruction 1 again on trunk, the project's ref now (was main)",
  );
});
