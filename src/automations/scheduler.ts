/**
 * Schedules (docs/automations.mdx): at each check, every enabled `schedule` automation's due time fires, or
 * is recorded `skipped` (`missed`) when over an hour old (schedule.ts `dueFiring`), once per
 * scheduled time by its key however many processes check. A batch carries every change merged
 * into the context repositories since the previous run; none: the run is `no-changes-needed`.
 * The clock is the caller's: tests move it, nothing sleeps.
 */
import { startCursor } from '../git/hosts/index.ts';
import type { Logger } from '../logger.ts';
import type { ProjectService } from '../projects/projects.ts';
import { DOCS_REPOSITORY, type RunChange } from './automation.ts';
import type { AutomationService } from './automations.ts';
import { type ListChanges, repositoriesOf } from './change-listing.ts';
import type { ContextRepositories } from './repositories.ts';
import { dueFiring, parseSchedule } from './schedule.ts';
import type { WatchedBranchOf } from './watched-branch.ts';

export interface SchedulerDeps {
  automations: AutomationService;
  projects: ProjectService;
  contexts: ContextRepositories;
  listChanges: ListChanges;
  branchOf: WatchedBranchOf;
  logger: Logger;
}

/** Checks every schedule at `now`; returns the runs created and when the next time is due. */
export async function tickSchedules(
  deps: SchedulerDeps,
  now: Date,
): Promise<{ created: string[]; next: Date | null }> {
  const created: string[] = [];
  let next: Date | null = null;
  for (const automation of await deps.automations.schedules()) {
    const trigger = automation.trigger;
    if (trigger.type !== 'schedule') continue;
    const decision = dueFiring(parseSchedule(trigger.cron, trigger.timeZone), {
      now,
      handledThrough: automation.handledThrough,
    });
    if (decision.next && (next === null || decision.next < next)) next = decision.next;
    if (decision.action === 'wait') continue;
    let runId: string | null;
    if (decision.action === 'skip') {
      runId = await deps.automations.fireScheduled(automation, decision.scheduledFor, { skip: 'missed' });
    } else {
      const changes = trigger.batch
        ? await batchChanges(deps, automation.projectId, automation.handledThrough, decision.scheduledFor)
        : null;
      runId = await deps.automations.fireScheduled(automation, decision.scheduledFor, { changes });
    }
    if (runId) created.push(runId);
  }
  return { created, next };
}

/** Changes merged into the project's context repositories after `since` and not after `until`. */
async function batchChanges(deps: SchedulerDeps, projectId: string, since: Date, until: Date) {
  const changes: RunChange[] = [];
  for (const repository of await repositoriesOf(projectId, deps)) {
    if (repository.name === DOCS_REPOSITORY) continue;
    try {
      const ref = await deps.branchOf(repository);
      if (ref === null)
        throw new Error('its host does not tell its default branch; set the context repository’s ref');
      const listing = await deps.listChanges(repository, ref, startCursor(since));
      for (const merged of listing.merged) {
        if (new Date(merged.mergedAt) <= until)
          changes.push({ repository: repository.name, pullRequest: merged.number });
      }
      for (const pushed of listing.pushes) {
        if (pushed.committedAt === null || new Date(pushed.committedAt) <= until) {
          changes.push({ repository: repository.name, commit: pushed.sha });
        }
      }
    } catch (error) {
      deps.logger.warn(
        { projectId, repository: repository.name, err: { message: (error as Error).message } },
        'could not list the changes of a batch',
      );
    }
  }
  // A job carries at most 20 changes (docs/code-context.mdx): the newest are kept.
  return changes.slice(-20);
}
