/**
 * The GitLab double's merge request conversation (pull-conversations.ts): `GET /user`, a
 * member's access level (`/members/all/:user_id`), a merge request's notes (listed, created,
 * replied to in a discussion) in GitLab's shapes, and the Note Hook payload GitLab sends.
 */
import type { HostAnswer, HostRequest } from './host-double.ts';
import type { DoubleUser, DoubleUsers, Thread, ThreadComment } from './pull-conversations.ts';

type Json = Record<string, unknown>;

const NOTES_PARAMS = new Set(['sort', 'order_by', 'page', 'per_page', 'activity_filter']);

export function gitLabUserJson(origin: string, user: DoubleUser): Json {
  return {
    id: user.id,
    username: user.login,
    name: user.login,
    state: 'active',
    web_url: `${origin}/${user.login}`,
  };
}

export function gitLabCommentEndpoints(context: {
  origin: string;
  projectId: number;
  path: string;
  users: DoubleUsers;
  thread: Thread;
  hasMergeRequest: (iid: number) => boolean;
}) {
  const { origin, users, thread } = context;
  const web = `${origin}/${context.path}`;
  let discussions = 0;

  const noteJson = (c: ThreadComment) => ({
    id: c.id,
    type: c.review ? 'DiffNote' : c.discussionId ? 'DiscussionNote' : null,
    body: c.body,
    attachment: null,
    author: gitLabUserJson(origin, c.user),
    created_at: c.createdAt,
    updated_at: c.createdAt,
    system: false,
    noteable_id: c.number + 1_000,
    noteable_type: 'MergeRequest',
    noteable_iid: c.number,
    project_id: context.projectId,
    resolvable: Boolean(c.discussionId),
    ...(c.discussionId ? { discussion_id: c.discussionId } : {}),
    ...(c.review
      ? {
          position: {
            new_path: c.review.path,
            old_path: c.review.path,
            new_line: c.review.line,
            old_line: null,
          },
        }
      : {}),
  });

  const notFound = (what = '404 Not found'): HostAnswer => ({ status: 404, body: { message: what } });

  return {
    noteJson,
    /** A discussion id, as GitLab makes them (40 hex characters). */
    newDiscussionId: () => (++discussions).toString(16).padStart(40, 'd'),

    /** The answer to `resource` (the path after `/projects/:id`), or undefined when it is another. */
    answer(resource: string, request: HostRequest, login: string, violation: (m: string) => void) {
      const member = /^\/members\/all\/(\d+)$/.exec(resource);
      if (member && request.method === 'GET') {
        const found = users.byId(Number(member[1]));
        if (!found?.permission) return notFound();
        return {
          status: 200,
          body: { ...gitLabUserJson(origin, found), access_level: Number(found.permission) },
        };
      }
      const notes = /^\/merge_requests\/(\d+)\/(?:discussions\/([0-9a-f]+)\/)?notes$/.exec(resource);
      if (!notes) return undefined;
      const iid = Number(notes[1]);
      if (!context.hasMergeRequest(iid)) return notFound('404 Merge Request Not Found');
      if (request.method === 'GET' && !notes[2]) {
        for (const name of request.query.keys())
          if (!NOTES_PARAMS.has(name)) violation(`unknown query parameter ${name}`);
        const list = thread.of(iid);
        if (request.query.get('sort') !== 'asc') list.reverse();
        return { status: 200, body: list.map(noteJson) };
      }
      if (request.method !== 'POST') return undefined;
      const body = (request.body ?? {}) as Json;
      if (typeof body.body !== 'string') return { status: 400, body: { error: 'body is missing' } };
      const discussionId = notes[2];
      const parent = discussionId ? thread.comments.find((c) => c.discussionId === discussionId) : undefined;
      if (discussionId && !parent) return notFound('404 Discussion Not Found');
      const added = thread.add({
        number: iid,
        body: body.body,
        user: users.user(login),
        ...(parent?.discussionId ? { discussionId: parent.discussionId } : {}),
      });
      return { status: 201, body: noteJson(added) };
    },

    /** The Note Hook payload of `note`. */
    notePayload(
      note: ThreadComment,
      repository: string,
      mergeRequestUrl: string,
      sourceBranch: string,
    ): Json {
      return {
        object_kind: 'note',
        event_type: 'note',
        user: { id: note.user.id, name: note.user.login, username: note.user.login },
        project_id: context.projectId,
        project: { id: context.projectId, web_url: repository, path_with_namespace: context.path },
        object_attributes: {
          id: note.id,
          note: note.body,
          noteable_type: 'MergeRequest',
          author_id: note.user.id,
          created_at: note.createdAt,
          project_id: context.projectId,
          system: false,
          type: noteJson(note).type,
          discussion_id: note.discussionId ?? note.id.toString(16).padStart(40, '0'),
          url: `${web}/-/merge_requests/${note.number}#note_${note.id}`,
          action: 'create',
          ...(note.review
            ? {
                position: {
                  new_path: note.review.path,
                  old_path: note.review.path,
                  new_line: note.review.line,
                },
              }
            : {}),
        },
        merge_request: {
          iid: note.number,
          url: mergeRequestUrl,
          state: 'opened',
          source_branch: sourceBranch,
          target_branch: 'main',
        },
      };
    },
  };
}
