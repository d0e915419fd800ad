/**
 * Code events as automations see them (docs/automations.mdx): a pull/merge request merged into a branch, a
 * push to a branch, a host's ping, or something automations ignore. Each host's webhook payload
 * becomes one of these (github-events.ts, gitlab-events.ts, gitea-events.ts); the shapes follow
 * the polling fallback's `MergedPullRequest` so that a change found either way reads the same.
 *
 * Payloads are untrusted input even once their signature holds (a host may change its shapes, a
 * webhook may be pointed at the wrong URL): everything is validated, bounded and never thrown
 * on. What cannot be read becomes `ignored`, with the reason.
 */
import { z } from 'zod';
import { isWebLink } from '../web-link.ts';

/** The code hosts that send webhooks; `gitea` covers Forgejo, which sends Gitea's payloads. */
export const HOOK_HOSTS = ['github', 'gitlab', 'gitea'] as const;
export type HookHost = (typeof HOOK_HOSTS)[number];

/** A pull/merge request merged into `ref`. */
export interface MergedChangeEvent {
  kind: 'merged-change';
  /** The repository's web URL, as the host names it. */
  repositoryUrl: string;
  /** The branch it was merged into (its base), without `refs/heads/`. */
  ref: string;
  number: number;
  title: string;
  /** The branch it was merged from. */
  headRef: string;
  /** The head commit of that branch, when the host says. */
  headSha: string | null;
  /** The commit the merge put on `ref` (merge, squash or last rebased commit), when the host says. */
  mergeCommitSha: string | null;
  /** ISO 8601, when the host says. */
  mergedAt: string | null;
  /** At most `MAX_LABELS`. */
  labels: string[];
  /** Its web page (http(s) only). */
  url: string | null;
}

export interface PushedCommitMessage {
  sha: string;
  /** The whole message when short; a long one keeps its start and its end (where trailers are). */
  message: string;
}

/** Commits pushed to `ref` (branch creation included; deletions and tags are ignored). */
export interface PushEvent {
  kind: 'push';
  repositoryUrl: string;
  /** The branch, without `refs/heads/`. */
  ref: string;
  /** The branch's commit before the push: all zeros when the push created it. */
  before: string;
  /** The branch's commit after the push. */
  after: string;
  /** Oldest first: the newest `MAX_PUSH_COMMITS` of those the host listed. */
  commits: PushedCommitMessage[];
  /** How many commits the push brought, as the host counts them (at least `commits.length`). */
  totalCommits: number;
  /** Whether the push rewrote the branch's history; null when the host does not say (GitLab, Gitea). */
  forced: boolean | null;
}

export type HostEvent =
  | MergedChangeEvent
  | PushEvent
  /** The host checking the webhook (GitHub's `ping`). */
  | { kind: 'ping' }
  | { kind: 'ignored'; reason: string };

/** Commits of a push kept at most (the newest); matches the change readers' `maxCommits`. */
export const MAX_PUSH_COMMITS = 250;
/** Characters of one commit message kept at most. */
export const MAX_MESSAGE_LENGTH = 20_000;
/** Characters of a title kept at most. */
export const MAX_TITLE_LENGTH = 1_000;
/** Labels kept at most, and characters of each. */
export const MAX_LABELS = 100;
export const MAX_LABEL_LENGTH = 200;

export const ignored = (reason: string): HostEvent => ({ kind: 'ignored', reason });

// ---------------------------------------------------------------------------------------------
// Building blocks of the hosts' payload schemas

/** A commit id: SHA-1 or SHA-256, in lower case. */
export const sha = z
  .string()
  .regex(/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i, 'is not a commit id')
  .transform((s) => s.toLowerCase());

/** An absolute http(s) URL. */
export const webUrl = z.string().max(2_000).refine(isWebLink, 'is not an http(s) URL');

/** A web URL, or null for anything else (a missing or odd link is no reason to drop an event). */
export const optionalWebUrl = z
  .unknown()
  .optional()
  .transform((value) => (isWebLink(value) ? value : null));

export const title = z
  .string()
  .max(100_000)
  .transform((t) => cut(t.trim(), MAX_TITLE_LENGTH));

export const name = z.string().min(1).max(1_000);

/** A positive pull/merge request number. */
export const number = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** A timestamp as ISO 8601 in UTC, or null when absent or unreadable. */
export const timestamp = z
  .unknown()
  .optional()
  .transform((value) => {
    if (typeof value !== 'string' || value.length > 100) return null;
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? null : new Date(ms).toISOString();
  });

/** Label names from a list of `{[key]: name}` objects: trimmed, distinct, bounded; odd entries dropped. */
export const labelsBy = (key: 'name' | 'title') =>
  z
    .unknown()
    .optional()
    .transform((value) => {
      if (!Array.isArray(value)) return [];
      const names = new Set<string>();
      for (const entry of value.slice(0, MAX_LABELS * 2)) {
        const label =
          typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>)[key] : null;
        if (typeof label === 'string' && label.trim() !== '') names.add(cut(label.trim(), MAX_LABEL_LENGTH));
        if (names.size >= MAX_LABELS) break;
      }
      return [...names];
    });

/** The branch of a `refs/heads/…` ref, or undefined for tags and other refs. */
export function branchOf(ref: string): string | undefined {
  return ref.startsWith('refs/heads/') && ref.length > 'refs/heads/'.length
    ? ref.slice('refs/heads/'.length)
    : undefined;
}

export const isZeroSha = (value: string) => /^0+$/.test(value);

/** The first problem of a failed parse, as `path message`, for an `ignored` reason. */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'the payload is not in the expected shape';
  const path = issue.path.map(String).join('.');
  return `${path || 'the payload'} ${issue.message}`;
}

/** `text` cut to `max` characters. */
export const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/**
 * A commit message within `MAX_MESSAGE_LENGTH`: a longer one keeps its first line and its last
 * paragraphs, where git's trailers are (`Generated-By: docwright` must survive the cut).
 */
export function boundMessage(message: string): string {
  if (message.length <= MAX_MESSAGE_LENGTH) return message;
  const marker = '\n\n[…]\n\n';
  const newline = message.indexOf('\n');
  const head = message.slice(0, newline >= 0 && newline < 1_000 ? newline : 1_000);
  const tail = message.slice(message.length - (MAX_MESSAGE_LENGTH - head.length - marker.length));
  return `${head}${marker}${tail}`;
}

/** One commit of a push payload (GitHub, GitLab and Gitea share `id` and `message`). */
const pushedCommit = z.object({ id: sha, message: z.string().max(10_000_000) });

/** Fields of a push every host gives, in their raw form. */
export interface RawPush {
  repositoryUrl: string;
  ref: string;
  before: string;
  after: string;
  /** The host's list of commits, in the host's order, unvalidated. */
  commits: unknown;
  /** The host's count of commits, when it gives one. */
  totalCommits: number | null;
  forced: boolean | null;
}

/**
 * A push event from a host's fields: branch pushes only (tags and deletions are ignored), the
 * commits put oldest first (Gitea lists them newest first) and the newest `MAX_PUSH_COMMITS` of
 * them validated and kept. A host may list fewer than it pushed (GitLab 20, Gitea 5 by default):
 * `totalCommits` says how many there were.
 */
export function pushEvent(raw: RawPush): HostEvent {
  const ref = branchOf(raw.ref);
  if (ref === undefined) return ignored(`a push to ${cut(raw.ref, 200)}, which is not a branch`);
  if (isZeroSha(raw.after)) return ignored(`branch ${cut(ref, 200)} was deleted`);
  if (!Array.isArray(raw.commits)) return ignored('commits is not a list');
  const listed: unknown[] = raw.commits;
  const newestFirst =
    listed.length > 1 && idOf(listed[0]) === raw.after && idOf(listed[listed.length - 1]) !== raw.after;
  const newest = newestFirst ? listed.slice(0, MAX_PUSH_COMMITS).reverse() : listed.slice(-MAX_PUSH_COMMITS);
  const commits: PushedCommitMessage[] = [];
  for (const [i, entry] of newest.entries()) {
    const parsed = pushedCommit.safeParse(entry);
    if (!parsed.success) return ignored(`commits: entry ${i} ${firstIssue(parsed.error)}`);
    commits.push({ sha: parsed.data.id, message: boundMessage(parsed.data.message) });
  }
  return {
    kind: 'push',
    repositoryUrl: raw.repositoryUrl,
    ref,
    before: raw.before,
    after: raw.after,
    commits,
    totalCommits: Math.max(raw.totalCommits ?? listed.length, listed.length),
    forced: raw.forced,
  };
}

function idOf(entry: unknown): unknown {
  if (typeof entry !== 'object' || entry === null) return undefined;
  const id = (entry as Record<string, unknown>).id;
  return typeof id === 'string' ? id.toLowerCase() : undefined;
}

/** The fields of a push payload that every host names alike. */
export const pushFields = {
  ref: z.string().min(1).max(1_000),
  before: sha,
  after: sha,
  commits: z.unknown(),
};

/** A count the host gives, or null. */
export const count = z
  .unknown()
  .optional()
  .transform((value) =>
    typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null,
  );
