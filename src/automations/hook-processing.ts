/**
 * What a stored delivery starts (docs/automations.mdx): its event read (host-events.ts), checked against
 * the repository the hook URL names (the same repository, its watched branch), and handed to
 * the automations as a change. Never throws for what a host sent: the delivery's result says
 * why it started nothing.
 */
import { sameRepository } from '../git/repository-url.ts';
import { mergedChangeArrival, pushArrival } from './arrivals.ts';
import type { AutomationService, ChangeArrival } from './automations.ts';
import type { HookHost } from './code-events.ts';
import type { HookDeliveryRow, HookDeliveryStore } from './hook-deliveries.ts';
import { normaliseEvent } from './host-events.ts';
import type { WatchedBranchOf } from './watched-branch.ts';

export async function processDelivery(
  row: HookDeliveryRow,
  deps: { deliveries: HookDeliveryStore; automations: AutomationService; branchOf: WatchedBranchOf },
): Promise<string> {
  const event = normaliseEvent({
    host: row.host as HookHost,
    event: row.event,
    body: Buffer.from(row.body, 'base64'),
    contentType: row.content_type,
  });
  if (event.kind === 'ignored') return `ignored: ${event.reason}`;
  if (event.kind === 'ping') return 'ignored: ping';
  const repository = await deps.deliveries.repositoryOf(row.project_id, row.name);
  if (!repository) return `ignored: the project has no repository ${row.name}`;
  if (repository.host !== 'local' && !sameRepository(repository.repository, event.repositoryUrl)) {
    return `ignored: the event is about ${event.repositoryUrl}, not ${repository.repository}`;
  }
  const watched = await deps.branchOf(repository);
  if (watched !== null ? event.ref !== watched : event.kind === 'push') {
    // Without a known branch only merges count: a push to any branch would look like a change.
    return `ignored: a change of branch ${event.ref}, not the watched ${watched ?? 'default branch'}`;
  }
  // A merge says when it landed: an automation created after it never runs for it, even on a
  // late delivery or a redelivery (as when the poll finds it). A push does not say.
  const arrival: ChangeArrival =
    event.kind === 'merged-change'
      ? mergedChangeArrival(row.project_id, row.name, event, event.mergedAt)
      : pushArrival(row.project_id, row.name, event);
  const runs = await deps.automations.fireForChange(arrival);
  return `runs: ${runs.length}`;
}
