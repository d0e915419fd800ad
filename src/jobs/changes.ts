/**
 * The code changes a job documents (docs/code-context.mdx): the `changes` field of
 * create and message bodies, the pull/merge request and commit URLs of the prompt that belong
 * to a configured repository, and the resolved changes the AgentJob shows.
 *
 * A request names changes; the worker resolves them through the host before the model starts
 * (src/pipeline/change-resolution.ts). Nothing here contacts a host.
 *
 * One shape a layer, and every conversion between them here: a request's `ChangeInput` (the
 * API body) becomes a stored `ChangeRequest` (requestedChanges), which asks the host for a
 * `ChangeRef` (changeRef) and comes back as git's `Change`; the AgentJob shows a `JobChange`
 * (pendingJobChanges before a run resolved it, resolvedJobChange after). The agent's
 * `AgentChange` is git's `Change` with its repository's name, structurally
 * (test/agent/change-shape.test.ts keeps the two alike).
 */
import { z } from 'zod';
import { DocwrightError } from '../errors.ts';
import type { Change, ChangeRef } from '../git/hosts/change.ts';
import { findChangeUrls, MAX_CHANGE_URLS } from '../git/hosts/change-url.ts';
import { sameRepository } from '../git/repository-url.ts';
import { branchNameProblem } from '../ref-name.ts';
/** The project's own repository, as `changes[].repository` and AgentJob `changes[].repository` name it. */
import { DOCS_REPOSITORY } from '../repository-names.ts';

export { DOCS_REPOSITORY };

const SHA = /^[0-9a-f]{7,64}$/i;
const repository = z
  .string({ error: 'must be a string: a context repository name, `docs`, or a repository URL' })
  .min(1)
  .max(2_000);
const sha = z.string().regex(SHA, 'must be a commit sha (7 to 64 hexadecimal characters)');

/** One entry of a request's `changes` (docs/code-context.mdx): a pull request, a commit or a range. */
export const changeInput = z.union(
  [
    z.strictObject({
      repository,
      pullRequest: z.number().int('must be a whole number').min(1).max(2_147_483_647),
    }),
    z.strictObject({ repository, commit: sha }),
    z.strictObject({
      repository,
      range: z
        .string()
        .max(500)
        .refine((value) => {
          const ends = value.split('..');
          return ends.length === 2 && ends.every((end) => SHA.test(end) || !branchNameProblem(end));
        }, 'must be `<base>..<head>`, each a commit sha or a branch name'),
    }),
  ],
  {
    error: () =>
      'must be {"repository", "pullRequest": <number>}, {"repository", "commit": <sha>} or {"repository", "range": "<base>..<head>"}',
  },
);

export const changesInput = z
  .array(changeInput)
  .max(MAX_CHANGE_URLS, `must hold at most ${MAX_CHANGE_URLS} changes`)
  .meta({
    description:
      "(extension) Code changes the job documents: a pull/merge request, a commit or a range of a context repository (by name or URL) or of the project's own repository (`docs`). Pull/merge request and commit URLs of those repositories in the prompt count too.",
  });
export type ChangeInput = z.output<typeof changeInput>;

/** Which change of which configured repository; stored with each run, resolved by the worker. */
export type ChangeRequest = { repository: string } & (
  | { kind: 'pull-request'; number: number }
  | { kind: 'commit'; sha: string }
  | { kind: 'range'; base: string; head: string }
);

/**
 * A change as the AgentJob shows it (docs/code-context.mdx): from creation, what the request
 * tells; once a run resolved it through its host, all of it.
 */
export const jobChangeSchema = z.object({
  repository: z
    .string()
    .meta({ description: "The context repository's name; `docs` for the project's own." }),
  kind: z.enum(['pull-request', 'commit', 'range']),
  number: z.number().int().nullable().meta({ description: 'The pull/merge request number; null otherwise.' }),
  sha: z
    .string()
    .nullable()
    .meta({ description: "The change's head commit; null until a run has resolved the change." }),
  url: z.string().nullable().meta({
    description: "The change's page on its host; null when it cannot be told before the change is resolved.",
  }),
  title: z.string().nullable().meta({ description: 'Its title; null until a run has resolved the change.' }),
});
export type JobChange = z.output<typeof jobChangeSchema>;
/** A change a run resolved through its host: everything known. */
export type ResolvedJobChange = JobChange & { sha: string; title: string };

/** A repository a job may name: the project's own (`docs`) or one of its context repositories. */
export interface NamedRepository {
  name: string;
  repository: string;
  /** Its code host (`github`, `gitlab`, `gitea`, `local`): tells a change's URL before it is resolved. */
  host?: string;
}

/** Where each host shows a change, after the repository's web URL. */
const CHANGE_PATHS: Record<string, (request: ChangeRequest) => string> = {
  github: (r) =>
    r.kind === 'pull-request'
      ? `/pull/${r.number}`
      : r.kind === 'commit'
        ? `/commit/${r.sha}`
        : `/compare/${r.base}...${r.head}`,
  gitlab: (r) =>
    r.kind === 'pull-request'
      ? `/-/merge_requests/${r.number}`
      : r.kind === 'commit'
        ? `/-/commit/${r.sha}`
        : `/-/compare/${r.base}...${r.head}`,
  gitea: (r) =>
    r.kind === 'pull-request'
      ? `/pulls/${r.number}`
      : r.kind === 'commit'
        ? `/commit/${r.sha}`
        : `/compare/${r.base}...${r.head}`,
};

/** The change's page, told from its repository's http(s) URL and host; null for a local repository. */
function changeUrl(request: ChangeRequest, repository: NamedRepository | undefined): string | null {
  const path = repository?.host ? CHANGE_PATHS[repository.host] : undefined;
  if (!repository || !path || !/^https?:\/\//i.test(repository.repository)) return null;
  return `${repository.repository.replace(/\/+$/, '').replace(/\.git$/, '')}${path(request)}`;
}

/**
 * The job's `changes` while a run has not resolved them (yet): each request as far as it is
 * known — `sha` and `title` null — in request order, keeping the entries `known` already
 * resolved for the same request (a follow-up adds changes to a job's).
 */
export function pendingJobChanges(
  requests: readonly ChangeRequest[],
  repositories: readonly NamedRepository[],
  known: readonly JobChange[] = [],
): JobChange[] {
  return requests.map((request, index) => {
    const earlier = known[index];
    const number = request.kind === 'pull-request' ? request.number : null;
    if (
      earlier?.repository === request.repository &&
      earlier.kind === request.kind &&
      earlier.number === number
    )
      return earlier;
    const repository = repositories.find((r) => r.name === request.repository);
    return {
      repository: request.repository,
      kind: request.kind,
      number,
      sha: null,
      url: changeUrl(request, repository),
      title: null,
    };
  });
}

const keyOf = (request: ChangeRequest) =>
  `${request.repository} ${request.kind === 'pull-request' ? `#${request.number}` : request.kind === 'commit' ? request.sha.toLowerCase() : `${request.base}..${request.head}`}`;

/**
 * The changes a request names: its `changes` entries (each repository a name or a configured
 * repository's URL, else 400 naming the entry), then the prompt's change URLs that belong to a
 * configured repository (others stay text: they are never fetched), after `earlier` (a
 * follow-up keeps its job's changes). Each change once, at most 20.
 */
export function requestedChanges(
  prompt: string,
  entries: readonly ChangeInput[] | undefined,
  repositories: readonly NamedRepository[],
  earlier: readonly ChangeRequest[] = [],
): ChangeRequest[] {
  const requests = [...earlier];
  const seen = new Set(requests.map(keyOf));
  const add = (request: ChangeRequest) => {
    const key = keyOf(request);
    if (seen.has(key)) return;
    seen.add(key);
    requests.push(request);
  };
  const nameOf = (value: string) =>
    repositories.find((r) => r.name === value)?.name ??
    repositories.find((r) => sameRepository(r.repository, value))?.name;
  (entries ?? []).forEach((entry, index) => {
    const name = nameOf(entry.repository);
    if (!name) {
      const known = repositories.map((r) => r.name).join(', ');
      const message = `is not a repository of this project (${known}): add it with docwright context add, or name one of these`;
      throw new DocwrightError('invalid-request', `invalid request: changes.${index}.repository ${message}`, {
        fields: [{ field: `changes.${index}.repository`, message }],
      });
    }
    if ('pullRequest' in entry) add({ repository: name, kind: 'pull-request', number: entry.pullRequest });
    else if ('commit' in entry) add({ repository: name, kind: 'commit', sha: entry.commit.toLowerCase() });
    else {
      const [base, head] = entry.range.split('..') as [string, string];
      add({ repository: name, kind: 'range', base, head });
    }
  });
  for (const found of findChangeUrls(prompt)) {
    const name = repositories.find((r) => sameRepository(r.repository, found.repositoryUrl))?.name;
    if (!name) continue;
    add(
      found.kind === 'pull-request'
        ? { repository: name, kind: 'pull-request', number: found.number }
        : { repository: name, kind: 'commit', sha: found.sha },
    );
  }
  if (requests.length > MAX_CHANGE_URLS) {
    const message = `a job documents at most ${MAX_CHANGE_URLS} changes (this one would have ${requests.length}, with those of the prompt and earlier messages)`;
    throw new DocwrightError('invalid-request', `invalid request: changes ${message}`, {
      fields: [{ field: 'changes', message }],
    });
  }
  return requests;
}

/** How a change is called in messages: `docs#42`, `api@1a2b3c4`, `api 1a2b..3c4d`. */
export function changeLabel(request: ChangeRequest): string {
  if (request.kind === 'pull-request') return `${request.repository}#${request.number}`;
  if (request.kind === 'commit') return `${request.repository}@${request.sha.slice(0, 12)}`;
  return `${request.repository} ${request.base}..${request.head}`;
}

/** What the host is asked for. */
export const changeRef = (request: ChangeRequest): ChangeRef =>
  request.kind === 'pull-request'
    ? { kind: 'pull-request', number: request.number }
    : request.kind === 'commit'
      ? { kind: 'commit', sha: request.sha }
      : { kind: 'range', base: request.base, head: request.head };

/** The AgentJob's view of a change its host resolved. */
export const resolvedJobChange = (resolved: Change & { repository: string }): ResolvedJobChange => ({
  repository: resolved.repository,
  kind: resolved.kind,
  number: resolved.number,
  sha: resolved.headSha,
  url: resolved.url,
  title: resolved.title,
});

/** Stored JSON of a run's requested changes (`[]` when the column predates them). */
export function parseChangeRequests(stored: string | null | undefined): ChangeRequest[] {
  return stored ? (JSON.parse(stored) as ChangeRequest[]) : [];
}

/** Stored JSON of a job's resolved changes. */
export function parseJobChanges(stored: string | null | undefined): JobChange[] {
  return stored ? (JSON.parse(stored) as JobChange[]) : [];
}
