/**
 * GitLab's side of a merge request conversation (conversation.ts): `GET /user` (on the instance's
 * API), a member's access level (`/members/all/:user_id`, Developer or above writes), a merge
 * request's notes, and replies: in a note's discussion when it has one, else a new note.
 */
import { webLink } from './change.ts';
import type { PullRequestConversation, ReplyTarget } from './conversation.ts';
import { userOf } from './conversation.ts';
import { eachPage, HttpFailure, type JsonApi } from './http.ts';

/** GitLab's Developer role: the least that may push. */
const DEVELOPER_ACCESS = 30;

interface GlNote {
  id: number;
  body?: string | null;
  author?: unknown;
  created_at?: string;
  system?: boolean;
  type?: string | null;
  discussion_id?: string;
  position?: {
    new_path?: string;
    old_path?: string;
    new_line?: number | null;
    old_line?: number | null;
  } | null;
}

export function gitLabConversation(api: {
  /** The project's API (`/api/v4/projects/:id`). */
  request: JsonApi;
  /** The instance's API (`/api/v4`). */
  instance: JsonApi;
  /** The project's web URL (links to notes). */
  webUrl: string;
}): PullRequestConversation {
  const { request, instance } = api;
  const replyOf = (number: number, note: GlNote): ReplyTarget =>
    note.type && note.discussion_id
      ? { kind: 'discussion', number, discussionId: note.discussion_id }
      : { kind: 'pull-request', number };
  return {
    async whoAmI(signal) {
      const user = userOf((await instance('GET', '/user', { signal })).body);
      if (!user) throw new Error('GitLab answered /user without a username');
      return user;
    },

    async canWrite(user, signal) {
      if (!/^\d+$/.test(user.id)) return false;
      try {
        const { body } = await request<{ access_level?: unknown }>('GET', `/members/all/${user.id}`, {
          signal,
        });
        const level = body.access_level;
        return typeof level === 'number' && level >= DEVELOPER_ACCESS;
      } catch (error) {
        if (error instanceof HttpFailure && (error.status === 404 || error.status === 403)) return false;
        throw error;
      }
    },

    async listComments(number, since, limit, signal) {
      const found: GlNote[] = [];
      await eachPage<GlNote>(request, `/merge_requests/${number}/notes`, {
        query: { sort: 'asc', order_by: 'created_at' },
        sizeParam: 'per_page',
        perPage: 100,
        maxPages: 10,
        signal,
        visit: (note) => {
          if (typeof note?.id === 'number' && !note.system && (note.created_at ?? '') >= since)
            found.push(note);
          return found.length < limit;
        },
      });
      return found.flatMap((note) => {
        const author = userOf(note.author);
        if (!author) return [];
        const path = note.position?.new_path ?? note.position?.old_path;
        return [
          {
            id: String(note.id),
            author,
            body: note.body ?? '',
            createdAt: note.created_at ?? null,
            replyTo: replyOf(number, note),
            position:
              typeof path === 'string'
                ? { path, line: note.position?.new_line ?? note.position?.old_line ?? null, diffHunk: null }
                : null,
          },
        ];
      });
    },

    async reply(target, text, signal) {
      const path =
        target.kind === 'discussion'
          ? `/merge_requests/${target.number}/discussions/${encodeURIComponent(target.discussionId)}/notes`
          : `/merge_requests/${target.number}/notes`;
      const { body } = await request<{ id: number }>('POST', path, { body: { body: text }, signal });
      const id = body.id;
      return { id, url: webLink(`${api.webUrl}/-/merge_requests/${target.number}#note_${id}`) };
    },
  };
}
