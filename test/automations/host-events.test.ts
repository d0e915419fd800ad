import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  type HookHost,
  type HostEvent,
  MAX_LABELS,
  MAX_MESSAGE_LENGTH,
  MAX_PUSH_COMMITS,
  MAX_TITLE_LENGTH,
} from '../../src/automations/code-events.ts';
import { MAX_EVENT_BODY_BYTES, normaliseEvent } from '../../src/automations/host-events.ts';
import {
  MAX_EVENT_JSON_CONTAINERS,
  MAX_EVENT_JSON_DEPTH,
  MAX_EVENT_JSON_VALUES,
} from '../../src/automations/json-bounds.ts';

/** A sample payload of `payloads/`, as a fresh object to change. */
// biome-ignore lint/suspicious/noExplicitAny: payloads are edited freely to make odd ones
const payload = (name: string): any =>
  JSON.parse(readFileSync(path.join(import.meta.dirname, 'payloads', `${name}.json`), 'utf8'));

const bytes = (value: unknown) =>
  new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));
const normalise = (host: HookHost, event: string | null, body: unknown, contentType?: string) =>
  normaliseEvent({ host, event, body: bytes(body), contentType: contentType ?? 'application/json' });

const reasonOf = (event: HostEvent) => {
  assert.equal(event.kind, 'ignored', JSON.stringify(event));
  return event.kind === 'ignored' ? event.reason : '';
};

const sha = (n: number) => n.toString(16).padStart(40, '0');

describe('GitHub', () => {
  test('a merged pull request', () => {
    assert.deepEqual(normalise('github', 'pull_request', payload('github-pull-request-merged')), {
      kind: 'merged-change',
      repositoryUrl: 'https://github.com/acme/api',
      ref: 'main',
      number: 42,
      title: 'Add cursor pagination to GET /v1/widgets',
      headRef: 'feature/cursor-pagination',
      headSha: '4e2d8a1b6c3f5e7d9a0b1c2d3e4f5a6b7c8d9e0f',
      mergeCommitSha: '9c1b7e2f0a4d3c6b5e8f7a9d0c1b2e3f4a5b6c7d',
      mergedAt: '2025-06-03T14:02:16.000Z',
      labels: ['api', 'enhancement'],
      url: 'https://github.com/acme/api/pull/42',
    });
  });

  test('the same payload form-encoded (content type application/x-www-form-urlencoded)', () => {
    const form = new URLSearchParams({
      payload: JSON.stringify(payload('github-pull-request-merged')),
    }).toString();
    const event = normalise('github', 'pull_request', form, 'application/x-www-form-urlencoded');
    assert.equal(event.kind, 'merged-change');
    assert.match(reasonOf(normalise('github', 'pull_request', form)), /not a JSON object/);
  });

  test('a pull request closed without merging, or opened, or labelled, starts nothing', () => {
    const unmerged = payload('github-pull-request-merged');
    unmerged.pull_request.merged = false;
    unmerged.pull_request.merge_commit_sha = null;
    assert.equal(
      reasonOf(normalise('github', 'pull_request', unmerged)),
      'pull request closed without merging',
    );
    for (const action of ['opened', 'labeled', 'synchronize']) {
      const other = payload('github-pull-request-merged');
      other.action = action;
      assert.match(
        reasonOf(normalise('github', 'pull_request', other)),
        new RegExp(`^pull_request ${action} `),
      );
    }
  });

  test('a push of a merge: commits oldest first, forced as GitHub says', () => {
    assert.deepEqual(normalise('github', 'push', payload('github-push')), {
      kind: 'push',
      repositoryUrl: 'https://github.com/acme/api',
      ref: 'main',
      before: '1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b',
      after: '9c1b7e2f0a4d3c6b5e8f7a9d0c1b2e3f4a5b6c7d',
      commits: [
        { sha: '2b4f6d8e0a1c3e5f7a9b1d3f5a7c9e1b3d5f7a9c', message: 'Accept a cursor on GET /v1/widgets' },
        {
          sha: '4e2d8a1b6c3f5e7d9a0b1c2d3e4f5a6b7c8d9e0f',
          message: 'Document the limit parameter\n\nSigned-off-by: Octo Cat <octocat@example.com>',
        },
        {
          sha: '9c1b7e2f0a4d3c6b5e8f7a9d0c1b2e3f4a5b6c7d',
          message:
            'Merge pull request #42 from octocat/feature/cursor-pagination\n\nAdd cursor pagination to GET /v1/widgets',
        },
      ],
      totalCommits: 3,
      forced: false,
    });
    const forced = payload('github-push');
    forced.forced = true;
    assert.equal((normalise('github', 'push', forced) as { forced: boolean }).forced, true);
  });

  test('tags, deleted branches and other events start nothing; ping is a ping', () => {
    const tag = payload('github-push');
    tag.ref = 'refs/tags/v1.2.0';
    assert.match(reasonOf(normalise('github', 'push', tag)), /refs\/tags\/v1\.2\.0, which is not a branch/);
    const deleted = payload('github-push');
    Object.assign(deleted, { deleted: true, after: '0'.repeat(40), commits: [], head_commit: null });
    assert.match(reasonOf(normalise('github', 'push', deleted)), /deleted/);
    assert.match(reasonOf(normalise('github', 'issues', { action: 'opened' })), /GitHub event issues/);
    assert.deepEqual(normalise('github', 'ping', payload('github-ping')), { kind: 'ping' });
  });
});

describe('GitLab', () => {
  test('a merged merge request: labels from the hook, the merge commit', () => {
    assert.deepEqual(normalise('gitlab', 'Merge Request Hook', payload('gitlab-merge-request-merged')), {
      kind: 'merged-change',
      repositoryUrl: 'https://gitlab.example.com/platform/billing',
      ref: 'main',
      number: 7,
      title: 'Pay invoices in instalments',
      headRef: 'feature/instalments',
      headSha: 'aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d',
      mergeCommitSha: '5d41402abc4b2a76b9719d911017c592ae1f0c3e',
      mergedAt: null,
      labels: ['billing', 'No-Docs'],
      url: 'https://gitlab.example.com/platform/billing/-/merge_requests/7',
    });
  });

  test('squash and fast-forward merges: the squash commit, or none (the branch moved to the last commit)', () => {
    const squash = payload('gitlab-merge-request-merged');
    squash.object_attributes.merge_commit_sha = null;
    squash.object_attributes.squash_commit_sha = 'c3499c2729730aaff07efb8676a92dcb6f8a3f8f';
    const squashed = normalise('gitlab', 'Merge Request Hook', squash);
    assert.equal(
      squashed.kind === 'merged-change' && squashed.mergeCommitSha,
      'c3499c2729730aaff07efb8676a92dcb6f8a3f8f',
    );
    const ff = payload('gitlab-merge-request-merged');
    ff.object_attributes.merge_commit_sha = null;
    const forwarded = normalise('gitlab', 'Merge Request Hook', ff);
    assert.ok(forwarded.kind === 'merged-change');
    assert.equal(forwarded.mergeCommitSha, null);
    assert.equal(forwarded.headSha, 'aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d');
  });

  test('only the merge action: an update of a merged request starts nothing; without an action, the state says', () => {
    const update = payload('gitlab-merge-request-merged');
    update.object_attributes.action = 'update';
    assert.match(reasonOf(normalise('gitlab', 'Merge Request Hook', update)), /^merge request update /);
    const open = payload('gitlab-merge-request-merged');
    Object.assign(open.object_attributes, { action: 'open', state: 'opened' });
    assert.match(reasonOf(normalise('gitlab', 'Merge Request Hook', open)), /^merge request open /);
    const old = payload('gitlab-merge-request-merged');
    delete old.object_attributes.action;
    assert.equal(normalise('gitlab', 'Merge Request Hook', old).kind, 'merged-change');
    old.object_attributes.state = 'closed';
    assert.match(reasonOf(normalise('gitlab', 'Merge Request Hook', old)), /^merge request closed /);
  });

  test('a push, also through a system hook; tag pushes and other hooks start nothing', () => {
    const expected = {
      kind: 'push',
      repositoryUrl: 'https://gitlab.example.com/platform/billing',
      ref: 'main',
      before: '95790bf891e76fee5e1747ab589903a6a1f80f22',
      after: 'da1560886d4f094c3e6c9ef40349f7d38b5d27d7',
      commits: [
        { sha: 'b6568db1bc1dcd7f8b4d5a946b0b91f9dacd7327', message: 'Round instalments to the cent\n' },
        {
          sha: 'da1560886d4f094c3e6c9ef40349f7d38b5d27d7',
          message:
            'Show instalments on the invoice page\n\nCo-authored-by: Grace Hopper <grace@example.com>\n',
        },
      ],
      totalCommits: 2,
      forced: null,
    };
    assert.deepEqual(normalise('gitlab', 'Push Hook', payload('gitlab-push')), expected);
    assert.deepEqual(normalise('gitlab', 'System Hook', payload('gitlab-push')), expected);
    assert.equal(
      normalise('gitlab', 'System Hook', payload('gitlab-merge-request-merged')).kind,
      'merged-change',
    );
    assert.match(
      reasonOf(normalise('gitlab', 'System Hook', { object_kind: 'project_create' })),
      /project_create/,
    );
    const tag = { ...payload('gitlab-push'), object_kind: 'tag_push', ref: 'refs/tags/v2' };
    assert.match(reasonOf(normalise('gitlab', 'Tag Push Hook', tag)), /Tag Push Hook/);
  });

  test('a deleted branch starts nothing (GitLab says so by a zero commit only)', () => {
    const deleted = {
      ...payload('gitlab-push'),
      after: '0'.repeat(40),
      checkout_sha: null,
      commits: [],
      total_commits_count: 0,
    };
    assert.equal(reasonOf(normalise('gitlab', 'Push Hook', deleted)), 'branch main was deleted');
  });

  test('GitLab lists at most 20 commits: the count says how many there were', () => {
    const many = payload('gitlab-push');
    many.total_commits_count = 57;
    const event = normalise('gitlab', 'Push Hook', many);
    assert.ok(event.kind === 'push');
    assert.equal(event.totalCommits, 57);
    assert.equal(event.commits.length, 2);
  });
});

describe('Gitea and Forgejo', () => {
  test('a merged pull request', () => {
    assert.deepEqual(normalise('gitea', 'pull_request', payload('gitea-pull-request-merged')), {
      kind: 'merged-change',
      repositoryUrl: 'https://code.example.org/tools/cli',
      ref: 'main',
      number: 15,
      title: 'Add --json to the status command',
      headRef: 'status-json',
      headSha: 'bbe960a25ea311d21d40669e93df2003ba9b90a2',
      mergeCommitSha: '0beec7b5ea3f0fdbc95d0dd47f3c5bc275da8a33',
      mergedAt: '2025-06-05T03:20:00.000Z',
      labels: ['cli'],
      url: 'https://code.example.org/tools/cli/pulls/15',
    });
  });

  test('a push: commits listed newest first come out oldest first', () => {
    const event = normalise('gitea', 'push', payload('gitea-push'));
    assert.ok(event.kind === 'push');
    assert.deepEqual(
      event.commits.map((c) => c.sha),
      ['f1d2d2f924e986ac86fdf7b36c94bcdf32beec15', 'e9d71f5ee7c92d6dc9e92ffdad17b8bd49418f98'],
    );
    assert.equal(event.after, 'e9d71f5ee7c92d6dc9e92ffdad17b8bd49418f98');
    assert.equal(event.totalCommits, 2);
    assert.equal(event.forced, null);
  });

  test("Gitea's own events that automations do not use start nothing", () => {
    assert.match(reasonOf(normalise('gitea', 'issues', {})), /Gitea event issues/);
    const review = payload('gitea-pull-request-merged');
    review.action = 'reviewed';
    assert.match(reasonOf(normalise('gitea', 'pull_request', review)), /pull_request reviewed/);
  });
});

describe('bounds', () => {
  test('a push of thousands of commits keeps the newest, validating only those', () => {
    const push = payload('github-push');
    const n = 5_000;
    push.commits = Array.from({ length: n }, (_, i) => ({ id: sha(i + 1), message: `commit ${i + 1}` }));
    push.commits[0] = { id: 'not a sha', message: 42 }; // beyond the kept ones: never looked at
    push.after = sha(n);
    const event = normalise('github', 'push', push);
    assert.ok(event.kind === 'push');
    assert.equal(event.commits.length, MAX_PUSH_COMMITS);
    assert.equal(event.commits[0]!.sha, sha(n - MAX_PUSH_COMMITS + 1));
    assert.equal(event.commits.at(-1)!.sha, sha(n));
    assert.equal(event.totalCommits, n);
  });

  test('a long commit message keeps its first line and its trailers', () => {
    const push = payload('github-push');
    const message = `Title line\n\n${'body '.repeat(50_000)}\n\nGenerated-By: docwright\nDocwright-Run: run_1`;
    push.commits = [{ id: push.after, message }];
    const event = normalise('github', 'push', push);
    assert.ok(event.kind === 'push');
    const kept = event.commits[0]!.message;
    assert.ok(kept.length <= MAX_MESSAGE_LENGTH, `${kept.length}`);
    assert.ok(kept.startsWith('Title line\n\n[…]\n\n'));
    assert.ok(kept.endsWith('\n\nGenerated-By: docwright\nDocwright-Run: run_1'));
  });

  test('titles and labels are bounded; odd labels are dropped', () => {
    const pr = payload('github-pull-request-merged');
    pr.pull_request.title = `  ${'t'.repeat(50_000)}  `;
    pr.pull_request.labels = [
      { name: '  no-docs ' },
      { name: 'no-docs' },
      { name: 7 },
      null,
      'x',
      ...Array.from({ length: 300 }, (_, i) => ({ name: `l${i}` })),
    ];
    const event = normalise('github', 'pull_request', pr);
    assert.ok(event.kind === 'merged-change');
    assert.equal(event.title.length, MAX_TITLE_LENGTH);
    assert.equal(event.labels.length, MAX_LABELS);
    assert.deepEqual(event.labels.slice(0, 3), ['no-docs', 'l0', 'l1']);
  });

  test('a body larger than the bound is not parsed', () => {
    const body = new Uint8Array(MAX_EVENT_BODY_BYTES + 1);
    assert.match(reasonOf(normaliseEvent({ host: 'github', event: 'push', body })), /larger than/);
  });

  test('a body nested deeper than the bound, or holding too many arrays, objects or values, is not parsed', () => {
    const deep = `${'['.repeat(MAX_EVENT_JSON_DEPTH + 1)}${']'.repeat(MAX_EVENT_JSON_DEPTH + 1)}`;
    assert.match(
      reasonOf(normalise('github', 'push', deep)),
      new RegExp(`nested more than ${MAX_EVENT_JSON_DEPTH} levels`),
    );
    // In a form-encoded body, the bound holds for the decoded payload.
    const form = `payload=${encodeURIComponent(`{"a":${deep}}`)}`;
    assert.match(
      reasonOf(normalise('gitea', 'push', form, 'application/x-www-form-urlencoded')),
      /nested more than/,
    );
    const wide = `{"a":[${'[],'.repeat(MAX_EVENT_JSON_CONTAINERS)}[]]}`;
    assert.match(reasonOf(normalise('github', 'push', wide)), /more than 100000 arrays and objects/);
    const many = `{"a":[${'1,'.repeat(MAX_EVENT_JSON_VALUES + 1)}1]}`;
    assert.match(reasonOf(normalise('github', 'push', many)), /more than 1000000 values/);
  });

  test('at the bounds, and with brackets, commas and escaped quotes inside strings, a payload is read', () => {
    const push = payload('github-push');
    // As deep as allowed (the payload itself is the first level).
    let nested: unknown = 'x';
    for (let i = 0; i < MAX_EVENT_JSON_DEPTH - 1; i++) nested = [nested];
    push.extra = nested;
    push.head_commit.message = `fix: \\"[{ ${'[{,'.repeat(MAX_EVENT_JSON_DEPTH * 4)}`;
    assert.equal(normalise('github', 'push', push).kind, 'push');
    push.extra = [nested];
    assert.match(reasonOf(normalise('github', 'push', push)), /nested more than/);
  });

  test('20 MB of nesting is refused in well under a second', () => {
    const deep = `${'['.repeat(10_000_000)}${']'.repeat(10_000_000)}`;
    const started = performance.now();
    assert.match(reasonOf(normalise('github', 'push', deep)), /nested more than/);
    assert.ok(performance.now() - started < 1_000, `${performance.now() - started} ms`);
  });
});

describe('odd payloads are ignored with a reason, never thrown', () => {
  test('bodies that are not a JSON object', () => {
    for (const body of ['', 'not json', '[]', 'null', '"text"', '42', '{"a":']) {
      assert.match(reasonOf(normalise('github', 'push', body)), /not a JSON object/, body);
    }
    const invalidUtf8 = new Uint8Array([...bytes('{"ref":"'), 0xff, ...bytes('"}')]);
    assert.match(
      reasonOf(normaliseEvent({ host: 'gitea', event: 'push', body: invalidUtf8 })),
      /not a JSON object/,
    );
    assert.match(reasonOf(normalise('github', null, payload('github-push'))), /names no event/);
    assert.match(reasonOf(normalise('github', '  ', payload('github-push'))), /names no event/);
  });

  test('payloads with fields of the wrong shape name the field', () => {
    const cases: [HookHost, string, (p: ReturnType<typeof payload>) => void, RegExp, string][] = [
      ['github', 'push', (p) => (p.after = 'HEAD'), /^push: after is not a commit id/, 'github-push'],
      [
        'github',
        'push',
        (p) => (p.repository.html_url = 'javascript:alert(1)'),
        /repository\.html_url is not an http/,
        'github-push',
      ],
      ['github', 'push', (p) => (p.commits = { 0: 'x' }), /commits is not a list/, 'github-push'],
      ['github', 'push', (p) => (p.commits[1].id = 12), /commits: entry 1 id/, 'github-push'],
      [
        'github',
        'pull_request',
        (p) => delete p.pull_request.base,
        /pull_request\.base/,
        'github-pull-request-merged',
      ],
      [
        'github',
        'pull_request',
        (p) => (p.pull_request.number = -1),
        /pull_request\.number/,
        'github-pull-request-merged',
      ],
      [
        'gitlab',
        'Merge Request Hook',
        (p) => (p.object_attributes.iid = '7'),
        /object_attributes\.iid/,
        'gitlab-merge-request-merged',
      ],
      ['gitlab', 'Push Hook', (p) => delete p.project, /^Push Hook: project/, 'gitlab-push'],
      ['gitea', 'push', (p) => (p.ref = ''), /^push: ref/, 'gitea-push'],
    ];
    for (const [host, event, change, reason, name] of cases) {
      const p = payload(name);
      change(p);
      assert.match(reasonOf(normalise(host, event, p)), reason, `${host} ${event} ${reason}`);
    }
  });

  test('an odd merge commit, head commit or link is left out rather than dropping the change', () => {
    const pr = payload('github-pull-request-merged');
    pr.pull_request.html_url = 'ftp://example.com/x';
    pr.pull_request.merged_at = 'yesterday';
    const event = normalise('github', 'pull_request', pr);
    assert.ok(event.kind === 'merged-change');
    assert.equal(event.url, null);
    assert.equal(event.mergedAt, null);
  });

  test('any JSON in place of any part of a sample payload: never a throw', () => {
    const samples: [HookHost, string, string][] = [
      ['github', 'pull_request', 'github-pull-request-merged'],
      ['github', 'push', 'github-push'],
      ['gitlab', 'Merge Request Hook', 'gitlab-merge-request-merged'],
      ['gitlab', 'Push Hook', 'gitlab-push'],
      ['gitea', 'pull_request', 'gitea-pull-request-merged'],
      ['gitea', 'push', 'gitea-push'],
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...samples),
        fc.array(fc.nat(), { minLength: 1, maxLength: 4 }),
        fc.jsonValue({ maxDepth: 3 }),
        ([host, event, name], path, value) => {
          // Replace the value at a path of the sample chosen by `path` (indices into each level's keys).
          const p = payload(name);
          let target = p;
          for (const [depth, index] of path.entries()) {
            const keys = Object.keys(target);
            if (keys.length === 0) break;
            const key = keys[index % keys.length]!;
            const next = target[key];
            if (depth === path.length - 1 || typeof next !== 'object' || next === null) {
              target[key] = value;
              break;
            }
            target = next;
          }
          const result = normalise(host, event, p);
          assert.ok(['merged-change', 'push', 'ignored'].includes(result.kind));
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
