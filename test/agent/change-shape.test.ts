/**
 * The agent knows nothing of git (test/imports.test.ts), so its `AgentChange` restates git's
 * `Change` with the repository's name: `npm run typecheck` fails here when the two drift apart
 * in either direction, and the run below keeps the conversion honest.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AgentChange } from '../../src/agent/change.ts';
import type { Change } from '../../src/git/hosts/change.ts';
import { resolvedJobChange } from '../../src/jobs/changes.ts';

/** true when each of A and B is assignable to the other. */
type Alike<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

const agentChangeIsGitChange: Alike<AgentChange, Change & { repository: string }> = true;
const filesAlike: Alike<AgentChange['files'][number], Change['files'][number]> = true;

test('the agent reads git’s change as it is, and the AgentJob shows what it resolved', () => {
  assert.equal(agentChangeIsGitChange && filesAlike, true);
  const change: AgentChange = {
    repository: 'api',
    kind: 'pull-request',
    number: 7,
    url: 'https://example.test/api/pull/7',
    title: 'Add retries',
    description: '',
    author: 'ada',
    state: 'merged',
    baseRef: 'main',
    headRef: 'retries',
    baseSha: null,
    headSha: 'a'.repeat(40),
    files: [],
    totalFiles: 0,
    commits: [],
    totalCommits: 0,
    notes: [],
  };
  assert.deepEqual(resolvedJobChange(change), {
    repository: 'api',
    kind: 'pull-request',
    number: 7,
    sha: 'a'.repeat(40),
    url: 'https://example.test/api/pull/7',
    title: 'Add retries',
  });
});
