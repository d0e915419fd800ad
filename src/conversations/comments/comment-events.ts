/**
 * Pull request comments from the docs hook's deliveries (docs/pull-request-comments.mdx): GitHub
 * `issue_comment` (on a pull request) and `pull_request_review_comment`, GitLab `Note Hook` (on a
 * merge request), Gitea/Forgejo `issue_comment` (on a pull request), each `created`. The body is
 * parsed within the same bounds as every hook event (automations/json-bounds.ts) and validated
 * here; what is not a new comment on a pull request is `ignored`, with the reason. Never throws.
 */
import { z } from 'zod';
import type { HookHost } from '../../automations/code-events.ts';
import { firstIssue } from '../../automations/code-events.ts';
import { MAX_EVENT_BODY_BYTES, parseBody } from '../../automations/host-events.ts';
import type { PullRequestComment } from '../../git/hosts/index.ts';
import { isWebLink } from '../../web-link.ts';

/** A comment on a pull request, with the pull request it is on. */
export interface CommentEvent {
  host: HookHost;
  /** The repository's web URL. */
  repositoryUrl: string;
  number: number;
  /** The pull request's page, when the host sent it. */
  pullUrl: string | null;
  /** The pull request's head branch, when the host sent it (GitHub's issue comments do not). */
  headRef: string | null;
  /** Whether the pull request is open, when the host says. */
  open: boolean | null;
  comment: PullRequestComment;
}

export type CommentReading = { kind: 'comment'; event: CommentEvent } | { kind: 'ignored'; reason: string };

/** The event header values that carry comments, by host. */
export const COMMENT_EVENTS: Record<HookHost, readonly string[]> = {
  github: ['issue_comment', 'pull_request_review_comment'],
  gitlab: ['Note Hook'],
  gitea: ['issue_comment', 'pull_request_comment'],
};

export const isCommentEvent = (host: HookHost, event: string | null) =>
  event !== null && COMMENT_EVENTS[host].includes(event.trim());

/** The longest comment read (GitHub's own limit is 65,536 characters). */
export const MAX_COMMENT_CHARS = 100_000;

const ignored = (reason: string): CommentReading => ({ kind: 'ignored', reason });
const id = z
  .union([z.number().int().nonnegative(), z.string().regex(/^[0-9a-zA-Z_-]{1,100}$/)])
  .transform(String);
const number = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const text = z.string().max(MAX_COMMENT_CHARS);
const webUrl = z.string().max(2_000).refine(isWebLink, 'is not an http(s) URL');
const optionalUrl = z
  .unknown()
  .optional()
  .transform((v) => (isWebLink(v) ? v : null));
const user = z.object({ id: id.optional(), login: z.string().min(1).max(255) });
const glUser = z.object({ id: id.optional(), username: z.string().min(1).max(255) });
const state = z.string().max(50).nullish();
const line = z.number().int().nonnegative().nullish();

const issueComment = z.object({
  action: z.string().max(100),
  repository: z.object({ html_url: webUrl }),
  issue: z.object({
    number,
    html_url: optionalUrl,
    state,
    pull_request: z.unknown().optional(),
  }),
  comment: z.object({ id, body: text.nullish(), user, created_at: z.string().max(100).nullish() }),
  is_pull: z.boolean().nullish(),
});

const reviewComment = z.object({
  action: z.string().max(100),
  repository: z.object({ html_url: webUrl }),
  pull_request: z.object({
    number,
    html_url: optionalUrl,
    state,
    head: z.object({ ref: z.string().max(1_000) }),
  }),
  comment: z.object({
    id,
    body: text.nullish(),
    user,
    created_at: z.string().max(100).nullish(),
    path: z.string().max(4_096).nullish(),
    line,
    original_line: line,
    diff_hunk: z.string().max(MAX_COMMENT_CHARS).nullish(),
    in_reply_to_id: id.nullish(),
  }),
});

const note = z.object({
  object_kind: z.literal('note'),
  user: glUser,
  project: z.object({ web_url: webUrl }),
  object_attributes: z.object({
    id,
    note: text.nullish(),
    author_id: id.optional(),
    noteable_type: z.string().max(100),
    type: z.string().max(100).nullish(),
    discussion_id: z.string().max(200).nullish(),
    created_at: z.string().max(100).nullish(),
    action: z.string().max(100).nullish(),
    position: z
      .object({
        new_path: z.string().max(4_096).nullish(),
        old_path: z.string().max(4_096).nullish(),
        new_line: line,
        old_line: line,
      })
      .nullish(),
  }),
  merge_request: z
    .object({ iid: number, url: optionalUrl, state, source_branch: z.string().max(1_000).nullish() })
    .nullish(),
});

const timeOf = (value: string | null | undefined) => {
  const ms = value ? Date.parse(value) : Number.NaN;
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
};
const openOf = (value: string | null | undefined) =>
  value === undefined || value === null ? null : value === 'open' || value === 'opened';
const userOf = (u: { id?: string | undefined; login: string }) => ({ id: u.id ?? '', login: u.login });

/** A verified delivery of the docs hook as a comment, or why it is none. */
export function readCommentDelivery(delivery: {
  host: HookHost;
  event: string | null;
  body: Uint8Array;
  contentType: string | null;
}): CommentReading {
  const event = delivery.event?.trim() ?? '';
  if (!isCommentEvent(delivery.host, event)) return ignored(`event ${event.slice(0, 100)} is not a comment`);
  if (delivery.body.byteLength > MAX_EVENT_BODY_BYTES) return ignored('the body is too large');
  const payload = parseBody(delivery.body, delivery.contentType);
  if (typeof payload === 'string') return ignored(`the body is not parsed: ${payload}`);
  if (payload === undefined) return ignored('the body is not a JSON object');
  if (delivery.host === 'gitlab') return gitlabNote(payload);
  if (event === 'pull_request_review_comment') return githubReviewComment(payload);
  return issueCommentOf(delivery.host, payload);
}

function issueCommentOf(host: HookHost, payload: object): CommentReading {
  const parsed = issueComment.safeParse(payload);
  if (!parsed.success) return ignored(`issue_comment: ${firstIssue(parsed.error)}`);
  const { action, repository, issue, comment, is_pull } = parsed.data;
  if (action !== 'created') return ignored(`issue_comment ${action.slice(0, 100)} (only new comments count)`);
  if (!issue.pull_request && is_pull !== true) return ignored('a comment on an issue, not a pull request');
  return {
    kind: 'comment',
    event: {
      host,
      repositoryUrl: repository.html_url,
      number: issue.number,
      pullUrl: issue.html_url,
      headRef: null,
      open: openOf(issue.state),
      comment: {
        id: comment.id,
        author: userOf(comment.user),
        body: comment.body ?? '',
        createdAt: timeOf(comment.created_at),
        replyTo: { kind: 'pull-request', number: issue.number },
        position: null,
      },
    },
  };
}

function githubReviewComment(payload: object): CommentReading {
  const parsed = reviewComment.safeParse(payload);
  if (!parsed.success) return ignored(`pull_request_review_comment: ${firstIssue(parsed.error)}`);
  const { action, repository, pull_request: pull, comment } = parsed.data;
  if (action !== 'created')
    return ignored(`review comment ${action.slice(0, 100)} (only new comments count)`);
  return {
    kind: 'comment',
    event: {
      host: 'github',
      repositoryUrl: repository.html_url,
      number: pull.number,
      pullUrl: pull.html_url,
      headRef: pull.head.ref,
      open: openOf(pull.state),
      comment: {
        id: comment.id,
        author: userOf(comment.user),
        body: comment.body ?? '',
        createdAt: timeOf(comment.created_at),
        replyTo: {
          kind: 'review-thread',
          number: pull.number,
          commentId: comment.in_reply_to_id ?? comment.id,
        },
        position: comment.path
          ? {
              path: comment.path,
              line: comment.line ?? comment.original_line ?? null,
              diffHunk: comment.diff_hunk ?? null,
            }
          : null,
      },
    },
  };
}

function gitlabNote(payload: object): CommentReading {
  const parsed = note.safeParse(payload);
  if (!parsed.success) return ignored(`Note Hook: ${firstIssue(parsed.error)}`);
  const { user, project, object_attributes: attributes, merge_request: mr } = parsed.data;
  if (attributes.noteable_type !== 'MergeRequest' || !mr)
    return ignored('a note on something other than a merge request');
  if (attributes.action && attributes.action !== 'create')
    return ignored(`note ${attributes.action.slice(0, 100)} (only new notes count)`);
  const position = attributes.position;
  const path = position?.new_path ?? position?.old_path;
  return {
    kind: 'comment',
    event: {
      host: 'gitlab',
      repositoryUrl: project.web_url,
      number: mr.iid,
      pullUrl: mr.url,
      headRef: mr.source_branch ?? null,
      open: openOf(mr.state),
      comment: {
        id: attributes.id,
        author: { id: user.id ?? attributes.author_id ?? '', login: user.username },
        body: attributes.note ?? '',
        createdAt: timeOf(attributes.created_at),
        replyTo:
          attributes.type && attributes.discussion_id
            ? { kind: 'discussion', number: mr.iid, discussionId: attributes.discussion_id }
            : { kind: 'pull-request', number: mr.iid },
        position: path
          ? { path, line: position?.new_line ?? position?.old_line ?? null, diffHunk: null }
          : null,
      },
    },
  };
}
