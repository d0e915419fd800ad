// The pieces of pull request comments that need no server (docs/pull-request-comments.mdx): the
// mention, hook payloads read within bounds (never a throw), the instruction a comment becomes,
// the outcome wording (redacted), and the briefly remembered answers about who may ask.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { HookHost } from '../../src/automations/code-events.ts';
import { MAX_EVENT_JSON_DEPTH } from '../../src/automations/json-bounds.ts';
import { createCommentAccess, PERMISSION_TTL_MS } from '../../src/conversations/comments/access.ts';
import { readCommentDelivery } from '../../src/conversations/comments/comment-events.ts';
import { commentInstruction, MAX_HUNK_CHARS } from '../../src/conversations/comments/comment-prompt.ts';
import { mentions, withoutMention } from '../../src/conversations/comments/mention.ts';
import { jobOutcome, startedOutcome } from '../../src/conversations/job-outcome.ts';
import type { HostUser, PullRequestConversation } from '../../src/git/hosts/index.ts';
import { createRedactor } from '../../src/redact.ts';

const read = (host: HookHost, event: string, body: unknown, contentType = 'application/json') =>
  readCommentDelivery({
    host,
    event,
    body: new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body)),
    contentType,
  });

const issueComment = (extra: Record<string, unknown> = {}) => ({
  action: 'created',
  issue: {
    number: 7,
    html_url: 'https://github.com/o/docs/pull/7',
    state: 'open',
    pull_request: { url: 'x' },
  },
  comment: {
    id: 123,
    body: '@docwright add a table',
    user: { login: 'alice', id: 5 },
    created_at: '2026-01-02T03:04:05Z',
  },
  repository: { html_url: 'https://github.com/o/docs' },
  ...extra,
});

describe('the mention', () => {
  test('is @docwright as a word, in any case; not a longer name or an e-mail address', () => {
    for (const text of [
      '@docwright fix it',
      'hey @DocWright, fix it',
      '(@docwright)',
      'done? @docwright.',
      'cc\n@docwright: go',
    ]) {
      assert.ok(mentions(text, 'docwright'), text);
    }
    for (const text of [
      '@docwrightbot fix',
      '@docwright-ci fix',
      'me@docwright.dev',
      'docwright fix',
      '@docwright.io',
      '@@docwright',
    ]) {
      assert.ok(!mentions(text, 'docwright'), text);
    }
    assert.equal(withoutMention('@docwright, please add a table', 'docwright'), 'please add a table');
    assert.equal(withoutMention('please @DocWright add it', 'docwright'), 'please add it');
    assert.ok(mentions('@docs-bot go', 'docs-bot'));
  });
});

describe('comment deliveries', () => {
  test('GitHub issue_comment on a pull request; an issue, an edit or a malformed one is ignored', () => {
    const reading = read('github', 'issue_comment', issueComment());
    assert.equal(reading.kind, 'comment');
    if (reading.kind !== 'comment') return;
    assert.deepEqual(reading.event, {
      host: 'github',
      repositoryUrl: 'https://github.com/o/docs',
      number: 7,
      pullUrl: 'https://github.com/o/docs/pull/7',
      headRef: null,
      open: true,
      comment: {
        id: '123',
        author: { id: '5', login: 'alice' },
        body: '@docwright add a table',
        createdAt: '2026-01-02T03:04:05.000Z',
        replyTo: { kind: 'pull-request', number: 7 },
        position: null,
      },
    });
    const onIssue = issueComment();
    delete (onIssue.issue as Record<string, unknown>).pull_request;
    assert.match(JSON.stringify(read('github', 'issue_comment', onIssue)), /not a pull request/);
    assert.match(
      JSON.stringify(read('github', 'issue_comment', issueComment({ action: 'edited' }))),
      /only new comments/,
    );
    assert.match(
      JSON.stringify(read('github', 'issue_comment', { ...issueComment(), comment: { id: 'x y' } })),
      /ignored/,
    );
    assert.match(JSON.stringify(read('github', 'push', issueComment())), /not a comment/);
    // GitHub's form encoding.
    const form = `payload=${encodeURIComponent(JSON.stringify(issueComment()))}`;
    assert.equal(read('github', 'issue_comment', form, 'application/x-www-form-urlencoded').kind, 'comment');
  });

  test('a review comment answers in its thread (the thread’s first comment), with its place', () => {
    const reading = read('github', 'pull_request_review_comment', {
      action: 'created',
      pull_request: {
        number: 3,
        html_url: 'https://github.com/o/docs/pull/3',
        state: 'open',
        head: { ref: 'docwright/x' },
      },
      comment: {
        id: 99,
        in_reply_to_id: 90,
        body: '@docwright why?',
        user: { login: 'a', id: 1 },
        path: 'a.mdx',
        line: 4,
        diff_hunk: '@@ x',
      },
      repository: { html_url: 'https://github.com/o/docs' },
    });
    assert.equal(reading.kind, 'comment');
    if (reading.kind !== 'comment') return;
    assert.deepEqual(reading.event.comment.replyTo, { kind: 'review-thread', number: 3, commentId: '90' });
    assert.deepEqual(reading.event.comment.position, { path: 'a.mdx', line: 4, diffHunk: '@@ x' });
    assert.equal(reading.event.headRef, 'docwright/x');
  });

  test('GitLab notes on merge requests only; Gitea comments on pull requests only', () => {
    const note = {
      object_kind: 'note',
      user: { id: 8, username: 'bo' },
      project: { web_url: 'https://gitlab.example.com/g/docs' },
      object_attributes: { id: 5, note: '@docwright go', noteable_type: 'Issue' },
    };
    assert.match(JSON.stringify(read('gitlab', 'Note Hook', note)), /other than a merge request/);
    const onMr = {
      ...note,
      object_attributes: {
        ...note.object_attributes,
        noteable_type: 'MergeRequest',
        type: 'DiscussionNote',
        discussion_id: 'abc',
      },
      merge_request: { iid: 2, state: 'merged' },
    };
    const reading = read('gitlab', 'Note Hook', onMr);
    assert.ok(reading.kind === 'comment' && reading.event.open === false);
    assert.deepEqual(reading.kind === 'comment' && reading.event.comment.replyTo, {
      kind: 'discussion',
      number: 2,
      discussionId: 'abc',
    });
    const gitea = {
      ...issueComment(),
      issue: { number: 4, state: 'open', pull_request: null },
      is_pull: false,
    };
    assert.match(JSON.stringify(read('gitea', 'issue_comment', gitea)), /not a pull request/);
    assert.equal(read('gitea', 'issue_comment', { ...gitea, is_pull: true }).kind, 'comment');
  });

  test('bounded: too deep or not JSON is ignored, and no body makes it throw', () => {
    const deep = `${'['.repeat(MAX_EVENT_JSON_DEPTH + 1)}${']'.repeat(MAX_EVENT_JSON_DEPTH + 1)}`;
    assert.match(JSON.stringify(read('github', 'issue_comment', deep)), /nested more than/);
    assert.match(JSON.stringify(read('gitea', 'issue_comment', '{not json')), /not a JSON object/);
    fc.assert(
      fc.property(fc.constantFrom<HookHost>('github', 'gitlab', 'gitea'), fc.jsonValue(), (host, value) => {
        const event = host === 'gitlab' ? 'Note Hook' : 'issue_comment';
        const reading = read(host, event, { ...issueComment(), comment: value, object_attributes: value });
        assert.ok(reading.kind === 'ignored' || reading.kind === 'comment');
      }),
      { numRuns: 300 },
    );
  });
});

describe('the instruction and the outcome', () => {
  const comment = {
    id: '1',
    author: { id: '1', login: 'alice' },
    body: '@docwright explain this',
    createdAt: null,
    replyTo: { kind: 'pull-request' as const, number: 2 },
    position: { path: 'a.mdx', line: 3, diffHunk: `${'x'.repeat(MAX_HUNK_CHARS + 10)}` },
  };

  test('a comment becomes its text, who asked and where; a bare mention asks nothing', () => {
    const text = commentInstruction(comment, { mention: 'docwright', number: 2, maxChars: 100_000 });
    assert.match(
      text ?? '',
      /^explain this\n\n\(A comment by @alice on pull request #2 on a\.mdx, line 3\.\)/,
    );
    assert.ok((text ?? '').length < MAX_HUNK_CHARS + 200, 'the hunk is cut');
    assert.equal(
      commentInstruction(
        { ...comment, body: ' @docwright ' },
        { mention: 'docwright', number: 2, maxChars: 100_000 },
      ),
      null,
    );
  });

  test('the wording: started with the page; failure code and message; no change with the reason; redacted', () => {
    const redact = createRedactor(['s3cr3t-token-value']);
    assert.match(
      startedOutcome({ id: 'job_1' }, 'http://x/projects/p/jobs/job_1').text,
      /\[job_1\]\(http:\/\/x\/projects\/p\/jobs\/job_1\)/,
    );
    const job = { id: 'job_1', projectId: 'p', prLink: null, summary: null, error: null };
    const failed = jobOutcome(
      {
        ...job,
        status: 'failed',
        error: { code: 'push-rejected', message: 'token s3cr3t-token-value refused' },
      },
      { pageUrl: null, commit: null, redact },
    );
    assert.equal(failed.kind, 'failed');
    assert.match(failed.text, /`push-rejected`/);
    assert.ok(!failed.text.includes('s3cr3t-token-value'));
    const none = jobOutcome(
      { ...job, status: 'completed', summary: 'Already documented.' },
      { pageUrl: null, commit: null, redact },
    );
    assert.equal(none.kind, 'no-change');
    assert.match(none.text, /^No change needed\.\n\n> Already documented\./);
    const commit = jobOutcome(
      { ...job, status: 'completed' },
      { pageUrl: null, commit: { sha: 'b'.repeat(40), url: null }, redact },
    );
    assert.match(commit.text, /pushed `bbbbbbbbbbbb`/);
  });
});

describe('who may ask, remembered briefly', () => {
  test('a permission is asked once per 5 minutes; a failed question is asked again', async () => {
    let now = 0;
    let asked = 0;
    let fail = false;
    const host = {
      whoAmI: async () => ({ id: '1', login: 'docwright-bot' }),
      canWrite: async (_user: HostUser) => {
        asked++;
        if (fail) throw new Error('host down');
        return true;
      },
    } as unknown as PullRequestConversation;
    const access = createCommentAccess({ clock: () => now });
    const alice = { id: '2', login: 'alice' };
    assert.equal(await access.canWrite('p', host, alice), true);
    assert.equal(await access.canWrite('p', host, alice), true);
    assert.equal(asked, 1);
    now += PERMISSION_TTL_MS + 1;
    fail = true;
    await assert.rejects(access.canWrite('p', host, alice));
    fail = false;
    assert.equal(await access.canWrite('p', host, alice), true);
    assert.equal(asked, 3);
    assert.equal(await access.isOwn('p', host, { id: '1', login: 'renamed' }), true, 'by id');
    assert.equal(
      await access.isOwn('p', host, { id: '', login: 'DocWright-Bot' }),
      true,
      'by login without an id',
    );
  });
});
