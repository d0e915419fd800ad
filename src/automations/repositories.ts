/**
 * What automations need to know about a project's repositories, behind a narrow interface: the
 * context repositories (docs/code-context.mdx) are another service's, and tests give their own.
 */
import type { HostKind } from '../git/hosts/index.ts';

/** A repository an automation can watch, with what it takes to reach its host's API. */
export interface WatchedRepository {
  /** The context repository's name, or `docs` for the project's own. */
  name: string;
  /** Its web URL (or local path). */
  repository: string;
  host: HostKind;
  apiUrl: string | null;
  /** The branch whose changes count; null: the host's default branch (unknown here). */
  ref: string | null;
  /** The token the host's API takes, when one is configured. */
  token?: string | undefined;
}

/** The context repositories of a project and their webhook secrets. */
export interface ContextRepositories {
  /** The project's context repositories (never `docs`), with their credentials. */
  accessFor(projectId: string): Promise<WatchedRepository[]>;
  /** The secret that webhooks to `/hooks/{projectId}/{name}` are signed with, when there is one. */
  webhookSecretFor(projectId: string, name: string): Promise<string | undefined>;
}

/** The context repository service (docs/code-context.mdx) as automations read it. */
export function automationContexts(service: {
  accessFor(
    projectId: string,
  ): Promise<(Omit<WatchedRepository, 'token'> & { secrets: { token?: string } })[]>;
  webhookSecretFor(projectId: string, name: string): Promise<string | undefined>;
}): ContextRepositories {
  return {
    accessFor: async (projectId) =>
      (await service.accessFor(projectId)).map(({ secrets, ...repository }) => ({
        ...repository,
        token: secrets.token,
      })),
    webhookSecretFor: (projectId, name) => service.webhookSecretFor(projectId, name),
  };
}
