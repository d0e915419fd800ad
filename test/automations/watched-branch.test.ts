// The watched branch of a repository (docs/automations.mdx): its `ref`, else the default branch its host
// reports, asked once per repository for DEFAULT_BRANCH_TTL_MS; a failed answer is not remembered.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { WatchedRepository } from '../../src/automations/repositories.ts';
import { DEFAULT_BRANCH_TTL_MS, watchedBranches } from '../../src/automations/watched-branch.ts';

const repository = (over: Partial<WatchedRepository> = {}): WatchedRepository => ({
  name: 'api',
  repository: 'https://github.com/acme/api',
  host: 'github',
  apiUrl: null,
  ref: null,
  ...over,
});

test('a ref is the watched branch without asking the host', async () => {
  const asked: string[] = [];
  const branchOf = watchedBranches(async (r) => {
    asked.push(r.repository);
    return 'trunk';
  });
  assert.equal(await branchOf(repository({ ref: 'release' })), 'release');
  assert.deepEqual(asked, []);
});

test('without a ref: the host’s default branch, asked once per repository until the TTL passes', async () => {
  let now = 1_000_000;
  const asked: string[] = [];
  const answers: Record<string, string | null> = {
    'https://github.com/acme/api': 'trunk',
    'https://github.com/acme/empty': null,
  };
  const branchOf = watchedBranches(
    async (r) => {
      asked.push(r.repository);
      return answers[r.repository]!;
    },
    () => now,
  );
  assert.equal(await branchOf(repository()), 'trunk');
  assert.equal(await branchOf(repository()), 'trunk');
  assert.equal(await branchOf(repository({ repository: 'https://github.com/acme/empty' })), null);
  assert.deepEqual(asked, ['https://github.com/acme/api', 'https://github.com/acme/empty']);
  answers['https://github.com/acme/api'] = 'main';
  now += DEFAULT_BRANCH_TTL_MS - 1;
  assert.equal(await branchOf(repository()), 'trunk', 'remembered within the TTL');
  now += 2;
  assert.equal(await branchOf(repository()), 'main', 'asked again after it');
  assert.equal(asked.length, 3);
});

test('a failed answer is null and is asked again next time', async () => {
  let fail = true;
  let calls = 0;
  const branchOf = watchedBranches(async () => {
    calls++;
    if (fail) throw new Error('host-auth-failed');
    return 'main';
  });
  assert.equal(await branchOf(repository()), null);
  fail = false;
  assert.equal(await branchOf(repository()), 'main');
  assert.equal(calls, 2);
});
