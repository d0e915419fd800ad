import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { findChangeUrls, MAX_CHANGE_URLS, parseChangeUrl } from '../../src/git/hosts/change-url.ts';
import { normalRepositoryUrl, repositoryKey, sameRepository } from '../../src/git/repository-url.ts';
import { parseRepository } from '../../src/projects/repository.ts';

const SHA = '3f786850e387550fdab836ed7e6dc881de23001b';

describe('parseChangeUrl', () => {
  const table: [string, ReturnType<typeof parseChangeUrl>][] = [
    // GitHub and GitHub Enterprise
    [
      'https://github.com/acme/api/pull/42',
      {
        repositoryUrl: 'https://github.com/acme/api',
        url: 'https://github.com/acme/api/pull/42',
        kind: 'pull-request',
        number: 42,
      },
    ],
    [
      'https://github.com/acme/api/pull/42/files?diff=split#r1',
      {
        repositoryUrl: 'https://github.com/acme/api',
        url: 'https://github.com/acme/api/pull/42/files?diff=split#r1',
        kind: 'pull-request',
        number: 42,
      },
    ],
    [
      `https://GitHub.com/Acme/API/commit/${SHA.toUpperCase()}`,
      {
        repositoryUrl: 'https://github.com/Acme/API',
        url: `https://GitHub.com/Acme/API/commit/${SHA.toUpperCase()}`,
        kind: 'commit',
        sha: SHA,
      },
    ],
    [
      'https://ghe.corp.example:8443/platform/api/pull/7/commits',
      {
        repositoryUrl: 'https://ghe.corp.example:8443/platform/api',
        url: 'https://ghe.corp.example:8443/platform/api/pull/7/commits',
        kind: 'pull-request',
        number: 7,
      },
    ],
    // GitLab, nested namespaces
    [
      'https://gitlab.com/group/sub/project/-/merge_requests/15',
      {
        repositoryUrl: 'https://gitlab.com/group/sub/project',
        url: 'https://gitlab.com/group/sub/project/-/merge_requests/15',
        kind: 'pull-request',
        number: 15,
      },
    ],
    [
      'https://gitlab.com/group/project/-/merge_requests/15/diffs?commit_id=abc',
      {
        repositoryUrl: 'https://gitlab.com/group/project',
        url: 'https://gitlab.com/group/project/-/merge_requests/15/diffs?commit_id=abc',
        kind: 'pull-request',
        number: 15,
      },
    ],
    [
      `https://gitlab.example.com/a/b/c/-/commit/${SHA.slice(0, 8)}`,
      {
        repositoryUrl: 'https://gitlab.example.com/a/b/c',
        url: `https://gitlab.example.com/a/b/c/-/commit/${SHA.slice(0, 8)}`,
        kind: 'commit',
        sha: SHA.slice(0, 8),
      },
    ],
    // Gitea and Forgejo, at the root or under a sub-path
    [
      'https://codeberg.org/forgejo/forgejo/pulls/3',
      {
        repositoryUrl: 'https://codeberg.org/forgejo/forgejo',
        url: 'https://codeberg.org/forgejo/forgejo/pulls/3',
        kind: 'pull-request',
        number: 3,
      },
    ],
    [
      'http://gitea.local:3000/git/octo/docs/pulls/12/files',
      {
        repositoryUrl: 'http://gitea.local:3000/git/octo/docs',
        url: 'http://gitea.local:3000/git/octo/docs/pulls/12/files',
        kind: 'pull-request',
        number: 12,
      },
    ],
    [
      `https://codeberg.org/o/r/commit/${SHA}`,
      {
        repositoryUrl: 'https://codeberg.org/o/r',
        url: `https://codeberg.org/o/r/commit/${SHA}`,
        kind: 'commit',
        sha: SHA,
      },
    ],
    // A repository called `pulls` is still a repository.
    [
      'https://gitea.example/octo/pulls/pulls/4',
      {
        repositoryUrl: 'https://gitea.example/octo/pulls',
        url: 'https://gitea.example/octo/pulls/pulls/4',
        kind: 'pull-request',
        number: 4,
      },
    ],
  ];
  for (const [url, expected] of table) {
    test(url, () => assert.deepEqual(parseChangeUrl(url), expected));
  }

  test('what is not a change URL', () => {
    for (const url of [
      'https://github.com/acme/api',
      'https://github.com/acme/api/issues/42',
      'https://github.com/acme/pull/42', // no repository before the marker
      'https://github.com/pull/42',
      'https://github.com/acme/api/pull/0',
      'https://github.com/acme/api/pull/-1',
      'https://github.com/acme/api/pull/42abc',
      'https://github.com/acme/api/pull/99999999999',
      'https://github.com/acme/api/commit/xyz123456',
      'https://github.com/acme/api/commit/abc12', // too short for a sha
      'https://gitlab.com/group/project/-/issues/5',
      'https://gitlab.com/group/-/merge_requests/5',
      'https://gitlab.com/group/project/merge_requests/5/x/pull/1', // a GitLab path is never a GitHub one
      'https://token:x-oauth-basic@github.com/acme/api/pull/42', // credentials: never used, never fetched
      'ftp://github.com/acme/api/pull/42',
      'javascript:alert(1)//github.com/acme/api/pull/42',
      'file:///home/me/repo/pull/1',
      'not a url',
      '',
    ]) {
      assert.equal(parseChangeUrl(url), undefined, url);
    }
  });

  test('the repository URL is the normal form of project repositories, and compares with them', () => {
    const change = parseChangeUrl('https://GitHub.com:443/Acme/API/pull/1');
    assert.equal(change?.repositoryUrl, 'https://github.com/Acme/API');
    const project = parseRepository('https://github.com/acme/api.git/');
    assert.ok(!('error' in project));
    assert.equal(project.url, 'https://github.com/acme/api');
    assert.ok(sameRepository(change!.repositoryUrl, project.url));
    assert.ok(!sameRepository(change!.repositoryUrl, 'https://github.com/acme/api-v2'));
    assert.ok(!sameRepository(change!.repositoryUrl, 'https://github.com.evil.example/acme/api'));
    assert.ok(
      !sameRepository('http://github.com/acme/api', 'https://github.com/acme/api'),
      'the scheme counts',
    );
    assert.equal(
      repositoryKey('https://gitlab.com/Group/Sub%20Group/Project/'),
      'https://gitlab.com/group/sub group/project',
    );
    assert.equal(repositoryKey('file:///srv/Repos/Docs/'), 'file:///srv/Repos/Docs');
    assert.equal(repositoryKey('no url'), undefined);
    assert.equal(normalRepositoryUrl(new URL('https://EXAMPLE.com:443/a/b.git')), 'https://example.com/a/b');
  });
});

describe('findChangeUrls', () => {
  test('finds each change once, in order, in running text and Markdown; leaves other URLs alone', () => {
    const text = [
      'Provided code change: https://github.com/acme/api/pull/42.',
      'See also (https://gitlab.com/g/p/-/merge_requests/7), <https://codeberg.org/o/r/pulls/3>',
      `and **https://github.com/acme/api/commit/${SHA}**, [link](https://github.com/acme/web/pull/9)!`,
      'Again: https://github.com/acme/api/pull/42 and https://github.com/acme/api/issues/1 https://example.com',
      '见https://github.com/acme/api/pull/43。谢谢',
    ].join('\n');
    assert.deepEqual(
      findChangeUrls(text).map((c) => [c.repositoryUrl, c.kind === 'commit' ? c.sha : c.number]),
      [
        ['https://github.com/acme/api', 42],
        ['https://gitlab.com/g/p', 7],
        ['https://codeberg.org/o/r', 3],
        ['https://github.com/acme/api', SHA],
        ['https://github.com/acme/web', 9],
        ['https://github.com/acme/api', 43],
      ],
    );
  });

  test(`at most ${MAX_CHANGE_URLS} (or the caller's number)`, () => {
    const text = Array.from({ length: 50 }, (_, i) => `https://github.com/o/r/pull/${i + 1}`).join(' ');
    assert.equal(findChangeUrls(text).length, MAX_CHANGE_URLS);
    assert.deepEqual(
      findChangeUrls(text, 3).map((c) => (c.kind === 'pull-request' ? c.number : 0)),
      [1, 2, 3],
    );
  });

  test('hostile prompts of 100,000 characters end, with what they hold', () => {
    const prefix = 'https://github.com/'.repeat(5_000);
    const cases: [string, number][] = [
      ['a'.repeat(100_000), 0],
      ['http://'.repeat(14_000), 0],
      [`${prefix}o/r/pull/1`, 0], // one 95,000-character URL: longer than any pasted one
      [`${'https://github.com/o/r/pull/1 '.repeat(3_000)}`, 1],
      [`https://github.com/o/r/${'pull/'.repeat(19_000)}1`, 0],
      [`https://gitlab.com/${'g/'.repeat(45_000)}-/merge_requests/1`, 0],
      [`${'(['.repeat(25_000)}https://github.com/o/r/pull/2${')]'.repeat(25_000)}`, 1],
      [`https://github.com/o/r/pull/3${'\u0301'.repeat(90_000)}`, 1],
    ];
    for (const [text, count] of cases) {
      assert.ok(text.length >= 90_000);
      assert.equal(findChangeUrls(text).length, count, text.slice(0, 40));
    }
    const many = Array.from({ length: 10_000 }, (_, i) => `https://github.com/o/r${i}/pull/${i + 1}`).join(
      ' ',
    );
    assert.equal(findChangeUrls(many).length, MAX_CHANGE_URLS);
  });
});
