/**
 * The polling fallback (docs/automations.mdx): each repository an enabled automation watches is listed
 * through its host's API for merged pull requests and pushes since a stored cursor, and each
 * change found is handed to the automations like a webhook's — keyed alike, so that a change
 * found by poll and by webhook runs once. A repository's cursor starts when the first automation
 * watching it was created: earlier changes never trigger.
 */
import type { Kysely } from 'kysely';
import { parseCursor, startCursor } from '../git/hosts/index.ts';
import type { Logger } from '../logger.ts';
import type { ProjectService } from '../projects/projects.ts';
import type { Database } from '../store/schema.ts';
import { mergedChangeArrival, pushedCommitArrival } from './arrivals.ts';
import { DOCS_REPOSITORY } from './automation.ts';
import type { AutomationService } from './automations.ts';
import { type ListChanges, repositoriesOf } from './change-listing.ts';
import type { ContextRepositories } from './repositories.ts';
import type { WatchedBranchOf } from './watched-branch.ts';

export interface PollDeps {
  db: Kysely<Database>;
  automations: AutomationService;
  projects: ProjectService;
  contexts: ContextRepositories;
  listChanges: ListChanges;
  branchOf: WatchedBranchOf;
  logger: Logger;
  now: () => Date;
}

/** One pass over every watched repository; returns the runs created. */
export async function pollOnce(deps: PollDeps, signal?: AbortSignal): Promise<number> {
  // Per project: the repositories watched and when the first automation watching each was created.
  const watched = new Map<string, Map<string, string>>();
  for (const automation of await deps.automations.watching()) {
    const names = watched.get(automation.projectId) ?? new Map<string, string>();
    watched.set(automation.projectId, names);
    const trigger = automation.trigger;
    let repos: string[];
    if (trigger.type === 'docs-push') repos = [DOCS_REPOSITORY];
    else if (trigger.type === 'code-change' && trigger.repositories.length > 0) repos = trigger.repositories;
    else repos = ['*'];
    for (const name of repos) {
      const since = names.get(name);
      if (since === undefined || automation.createdAt < since) names.set(name, automation.createdAt);
    }
  }
  let created = 0;
  for (const [projectId, names] of watched) {
    if (signal?.aborted) break;
    const repositories = await repositoriesOf(projectId, deps).catch(() => []);
    for (const repository of repositories) {
      const from =
        names.get(repository.name) ?? (repository.name === DOCS_REPOSITORY ? undefined : names.get('*'));
      if (from === undefined) continue;
      try {
        const ref = await deps.branchOf(repository, signal);
        if (ref === null) {
          throw new Error('its host does not tell its default branch; set the context repository’s ref');
        }
        created += await pollRepository(deps, projectId, repository, ref, from, signal);
      } catch (error) {
        deps.logger.warn(
          { projectId, repository: repository.name, err: { message: (error as Error).message } },
          'could not poll a repository for changes',
        );
      }
    }
  }
  return created;
}

async function pollRepository(
  deps: PollDeps,
  projectId: string,
  repository: Parameters<ListChanges>[0],
  ref: string,
  from: string,
  signal: AbortSignal | undefined,
): Promise<number> {
  const stored = await deps.db
    .selectFrom('automation_poll_cursors')
    .select('cursor')
    .where('project_id', '=', projectId)
    .where('repository', '=', repository.name)
    .executeTakeFirst();
  let cursor = (stored && parseCursor(JSON.parse(stored.cursor))) || startCursor(new Date(from));
  let created = 0;
  for (let page = 0; page < 10; page++) {
    const listing = await deps.listChanges(repository, ref, cursor, signal);
    for (const merged of listing.merged) {
      created += (
        await deps.automations.fireForChange(
          mergedChangeArrival(projectId, repository.name, merged, merged.mergedAt),
        )
      ).length;
    }
    for (const pushed of listing.pushes) {
      created += (
        await deps.automations.fireForChange(pushedCommitArrival(projectId, repository.name, pushed))
      ).length;
    }
    cursor = listing.cursor;
    await saveCursor(deps, projectId, repository.name, JSON.stringify(cursor));
    if (!listing.more) break;
  }
  return created;
}

async function saveCursor(deps: PollDeps, projectId: string, name: string, cursor: string): Promise<void> {
  const at = deps.now().toISOString();
  await deps.db
    .insertInto('automation_poll_cursors')
    .values({ project_id: projectId, repository: name, cursor, updated_at: at })
    .onConflict((oc) => oc.columns(['project_id', 'repository']).doUpdateSet({ cursor, updated_at: at }))
    .execute();
}
