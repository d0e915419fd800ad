import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { HookHost, HostEvent } from '../../src/automations/code-events.ts';
import { alreadyRecorded, pullRequestKeys, pushKeys, scheduleKey } from '../../src/automations/dedupe.ts';
import { normaliseEvent } from '../../src/automations/host-events.ts';
import { nextFireTime, parseSchedule } from '../../src/automations/schedule.ts';
import type { MergedPullRequest, PushedCommit } from '../../src/git/hosts/change.ts';

// biome-ignore lint/suspicious/noExplicitAny: sample payloads are edited freely
const payload = (name: string): any =>
  JSON.parse(readFileSync(path.join(import.meta.dirname, 'payloads', `${name}.json`), 'utf8'));

function event(host: HookHost, type: string, body: unknown): HostEvent {
  return normaliseEvent({ host, event: type, body: new TextEncoder().encode(JSON.stringify(body)) });
}

/** The keys of a webhook's event, as the service takes them. */
function keysOf(repository: string, e: HostEvent): string[] {
  if (e.kind === 'merged-change') return pullRequestKeys(repository, e);
  if (e.kind === 'push')
    return pushKeys(
      repository,
      e.commits.map((c) => c.sha),
      e.after,
    );
  throw new Error(`no change: ${JSON.stringify(e)}`);
}

/** A merged pull request as the polling fallback lists it. */
const listed = (
  fields: Partial<MergedPullRequest> & Pick<MergedPullRequest, 'number'>,
): MergedPullRequest => ({
  title: 'a change',
  headRef: 'feature',
  headSha: null,
  mergeCommitSha: null,
  mergedAt: '2025-06-03T14:02:16.000Z',
  labels: [],
  url: null,
  ...fields,
});
const pushed = (sha: string): PushedCommit => ({ sha, title: 'a commit', committedAt: null, url: null });

/**
 * A store of runs as the service keeps them: a change is recorded with all its keys at once,
 * unless any is there already; then its other keys join the run found. Returns whether it
 * created a run.
 */
class Runs {
  readonly keys = new Set<string>();
  runs = 0;
  record(keys: string[]): boolean {
    const known = alreadyRecorded(keys, this.keys);
    for (const key of keys) this.keys.add(key);
    if (!known) this.runs++;
    return !known;
  }
}

const overlap = (a: string[], b: string[]) => a.some((key) => b.includes(key));

const sha = (n: number) => n.toString(16).padStart(40, 'a');

describe('one change reported several ways has keys in common', () => {
  test('GitHub, merge commit: the pull request event, the poll, the push of the merge, a redelivery', () => {
    const pr = keysOf('api', event('github', 'pull_request', payload('github-pull-request-merged')));
    const push = keysOf('api', event('github', 'push', payload('github-push')));
    const poll = pullRequestKeys(
      'api',
      listed({ number: 42, mergeCommitSha: '9c1b7e2f0a4d3c6b5e8f7a9d0c1b2e3f4a5b6c7d', headSha: null }),
    );
    assert.deepEqual(pr, [
      'pull-request:api:42',
      'commit:api:9c1b7e2f0a4d3c6b5e8f7a9d0c1b2e3f4a5b6c7d',
      'commit:api:4e2d8a1b6c3f5e7d9a0b1c2d3e4f5a6b7c8d9e0f',
    ]);
    assert.ok(overlap(pr, push) && overlap(pr, poll) && overlap(push, poll));
    assert.deepEqual(
      keysOf('api', event('github', 'pull_request', payload('github-pull-request-merged'))),
      pr,
    );
  });

  test('GitHub, squash and rebase merges: merge_commit_sha is what the push brings as its head', () => {
    const squash = payload('github-pull-request-merged');
    squash.pull_request.merge_commit_sha = sha(1);
    const squashPush = {
      ...payload('github-push'),
      after: sha(1),
      commits: [{ id: sha(1), message: 'Add cursor pagination (#42)' }],
    };
    assert.ok(
      overlap(
        keysOf('api', event('github', 'pull_request', squash)),
        keysOf('api', event('github', 'push', squashPush)),
      ),
    );

    const rebase = payload('github-pull-request-merged');
    rebase.pull_request.merge_commit_sha = sha(3);
    const rebasePush = {
      ...payload('github-push'),
      after: sha(3),
      commits: [
        { id: sha(2), message: 'Accept a cursor' },
        { id: sha(3), message: 'Document the limit' },
      ],
    };
    assert.ok(
      overlap(
        keysOf('api', event('github', 'pull_request', rebase)),
        keysOf('api', event('github', 'push', rebasePush)),
      ),
    );
  });

  test('GitLab: merge commit, squash commit, and a fast-forward merge (no merge commit: the head commit lands)', () => {
    const merge = keysOf(
      'billing',
      event('gitlab', 'Merge Request Hook', payload('gitlab-merge-request-merged')),
    );
    const mergePush = { ...payload('gitlab-push'), after: '5d41402abc4b2a76b9719d911017c592ae1f0c3e' };
    assert.ok(overlap(merge, keysOf('billing', event('gitlab', 'Push Hook', mergePush))));

    const squash = payload('gitlab-merge-request-merged');
    squash.object_attributes.merge_commit_sha = null;
    squash.object_attributes.squash_commit_sha = sha(4);
    const squashPush = {
      ...payload('gitlab-push'),
      after: sha(4),
      commits: [{ id: sha(4), message: 'Pay invoices in instalments' }],
    };
    assert.ok(
      overlap(
        keysOf('billing', event('gitlab', 'Merge Request Hook', squash)),
        keysOf('billing', event('gitlab', 'Push Hook', squashPush)),
      ),
    );

    const ff = payload('gitlab-merge-request-merged');
    ff.object_attributes.merge_commit_sha = null;
    const ffPush = {
      ...payload('gitlab-push'),
      after: 'aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d',
      commits: [
        { id: 'aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d', message: 'Split an invoice into instalments\n' },
      ],
    };
    const ffKeys = keysOf('billing', event('gitlab', 'Merge Request Hook', ff));
    assert.ok(overlap(ffKeys, keysOf('billing', event('gitlab', 'Push Hook', ffPush))));
    // The poll lists the same merge request with GitLab's sha (its head) and no merge commit.
    assert.ok(
      overlap(
        ffKeys,
        pullRequestKeys(
          'billing',
          listed({ number: 7, headSha: 'aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d' }),
        ),
      ),
    );
  });

  test('Gitea and Forgejo: the pull request event, the poll and the push of the merge', () => {
    const pr = keysOf('cli', event('gitea', 'pull_request', payload('gitea-pull-request-merged')));
    const push = {
      ...payload('gitea-push'),
      after: '0beec7b5ea3f0fdbc95d0dd47f3c5bc275da8a33',
      commits: [
        {
          id: '0beec7b5ea3f0fdbc95d0dd47f3c5bc275da8a33',
          message: "Merge pull request 'Add --json' (#15) from status-json into main",
        },
      ],
      total_commits: 1,
    };
    assert.ok(overlap(pr, keysOf('cli', event('gitea', 'push', push))));
    assert.ok(
      overlap(pr, pullRequestKeys('cli', listed({ number: 15 }))),
      'a listing without the merge commit: by number',
    );
  });

  test("a direct push: the webhook's push and the poll's commits, however each groups them", () => {
    const webhook = keysOf('billing', event('gitlab', 'Push Hook', payload('gitlab-push')));
    const [first, second] = [
      'b6568db1bc1dcd7f8b4d5a946b0b91f9dacd7327',
      'da1560886d4f094c3e6c9ef40349f7d38b5d27d7',
    ];
    assert.deepEqual(webhook, [`commit:billing:${second}`, `commit:billing:${first}`]);
    assert.ok(overlap(webhook, pushKeys('billing', [pushed(first).sha])));
    assert.ok(overlap(webhook, pushKeys('billing', [pushed(second).sha])));
    assert.ok(overlap(webhook, pushKeys('billing', [first, second])));
  });

  test('a host that writes a sha in capitals is the same commit', () => {
    assert.deepEqual(pushKeys('api', [sha(7).toUpperCase()]), pushKeys('api', [sha(7)]));
    assert.ok(
      overlap(
        pullRequestKeys('api', { number: 1, mergeCommitSha: sha(7).toUpperCase(), headSha: null }),
        pushKeys('api', [sha(7)]),
      ),
    );
  });
});

describe('different changes have no key in common', () => {
  test('other pull requests, the same number in another repository, the same commit in a fork', () => {
    const a = pullRequestKeys('api', { number: 1, mergeCommitSha: sha(1), headSha: sha(2) });
    assert.ok(!overlap(a, pullRequestKeys('api', { number: 2, mergeCommitSha: sha(3), headSha: sha(4) })));
    assert.ok(!overlap(a, pullRequestKeys('web', { number: 1, mergeCommitSha: sha(5), headSha: sha(6) })));
    assert.ok(!overlap(pushKeys('api', [sha(1)]), pushKeys('api-fork', [sha(1)])));
    assert.ok(!overlap(pushKeys('api', [sha(8), sha(9)]), pushKeys('api', [sha(10)])));
  });

  test('keys are distinct (a store writes each once)', () => {
    assert.deepEqual(pullRequestKeys('api', { number: 3, mergeCommitSha: sha(1), headSha: sha(1) }), [
      'pull-request:api:3',
      `commit:api:${sha(1)}`,
    ]);
    assert.deepEqual(pushKeys('api', [sha(1), sha(2)], sha(2)), [
      `commit:api:${sha(2)}`,
      `commit:api:${sha(1)}`,
    ]);
  });

  test('a push has a commit', () => {
    assert.throws(() => pushKeys('api', []), RangeError);
    assert.deepEqual(pushKeys('api', [], sha(1)), [`commit:api:${sha(1)}`]);
  });
});

describe('every order of arrival makes one run', () => {
  test('webhook event, webhook push, poll, and the redeliveries, in all 120 orders', () => {
    const reports = [
      keysOf('api', event('github', 'pull_request', payload('github-pull-request-merged'))),
      keysOf('api', event('github', 'push', payload('github-push'))),
      pullRequestKeys(
        'api',
        listed({
          number: 42,
          mergeCommitSha: '9c1b7e2f0a4d3c6b5e8f7a9d0c1b2e3f4a5b6c7d',
          headSha: '4e2d8a1b6c3f5e7d9a0b1c2d3e4f5a6b7c8d9e0f',
        }),
      ),
      // A host that does not say the merge commit still gives the head.
      pullRequestKeys('api', listed({ number: 42, headSha: '4e2d8a1b6c3f5e7d9a0b1c2d3e4f5a6b7c8d9e0f' })),
      keysOf('api', event('github', 'pull_request', payload('github-pull-request-merged'))),
    ];
    const orders = (items: number[]): number[][] =>
      items.length <= 1
        ? [items]
        : items.flatMap((item, i) => orders(items.filter((_, j) => j !== i)).map((rest) => [item, ...rest]));
    const all = orders([0, 1, 2, 3, 4]);
    assert.equal(all.length, 120);
    for (const order of all) {
      const runs = new Runs();
      for (const i of order) runs.record(reports[i]!);
      assert.equal(runs.runs, 1, order.join(','));
    }
  });

  test("a push known as its pull request's merge shares the number with a report that knows only that", () => {
    const push = event('github', 'push', payload('github-push'));
    assert.ok(push.kind === 'push');
    const numberOnly = pullRequestKeys('api', listed({ number: 42 }));
    assert.ok(
      !overlap(keysOf('api', push), numberOnly),
      'a bare push and a bare number have nothing in common',
    );
    // The service found (through the host) that the push's head is pull request 42's merge.
    const resolved = pullRequestKeys('api', { number: 42, mergeCommitSha: push.after, headSha: null });
    const runs = new Runs();
    assert.ok(runs.record(resolved));
    assert.ok(!runs.record(numberOnly));
    assert.ok(!runs.record(keysOf('api', push)));
    assert.ok(
      !runs.record(keysOf('api', event('github', 'pull_request', payload('github-pull-request-merged')))),
    );
  });

  test('two merged pull requests and a direct push make three', () => {
    const runs = new Runs();
    runs.record(pullRequestKeys('api', { number: 1, mergeCommitSha: sha(1), headSha: sha(2) }));
    runs.record(pushKeys('api', [sha(2), sha(1)]));
    runs.record(pullRequestKeys('api', { number: 2, mergeCommitSha: sha(3), headSha: sha(4) }));
    runs.record(pushKeys('api', [sha(5)]));
    runs.record(pushKeys('api', [sha(5)]));
    assert.equal(runs.runs, 3);
  });
});

describe('scheduled times', () => {
  test('one key per instant, whatever the zone that produced it', () => {
    const berlin = nextFireTime(
      parseSchedule('0 9 * * *', 'Europe/Berlin'),
      new Date('2025-06-13T00:00:00Z'),
    )!;
    const utc = nextFireTime(parseSchedule('0 7 * * *', 'UTC'), new Date('2025-06-13T00:00:00Z'))!;
    assert.equal(scheduleKey(berlin), 'schedule:2025-06-13T07:00:00.000Z');
    assert.equal(scheduleKey(berlin), scheduleKey(utc));
    assert.notEqual(scheduleKey(berlin), scheduleKey(new Date(berlin.getTime() + 60_000)));
  });

  test('the two instants of a repeated hour are two keys; a fixed time in it is one', () => {
    const halfHourly = parseSchedule('*/30 1 * * *', 'America/New_York');
    const first = nextFireTime(halfHourly, new Date('2025-11-02T04:59:00Z'))!;
    let second = first;
    for (let i = 0; i < 2; i++) second = nextFireTime(halfHourly, second)!;
    assert.equal(scheduleKey(first), 'schedule:2025-11-02T05:00:00.000Z'); // 01:00 EDT
    assert.equal(scheduleKey(second), 'schedule:2025-11-02T06:00:00.000Z'); // 01:00 EST
  });
});
