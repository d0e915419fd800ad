/**
 * The automations service as the App holds it (`app.automations`, like `app.jobs`): the
 * service's own calls, with the store of verified webhook deliveries, the context repositories it
 * reads through, and the in-process wake-up from the hook endpoint to the background loop
 * (worker/automation-loop.ts).
 */
import { EventEmitter } from 'node:events';
import type { Kysely } from 'kysely';
import type { JobService } from '../jobs/job-service.ts';
import type { Logger } from '../logger.ts';
import type { ProjectService } from '../projects/projects.ts';
import type { Database } from '../store/schema.ts';
import { type AutomationService, createAutomationService } from './automations.ts';
import type { ChangeDetailsOf } from './change-listing.ts';
import { createHookDeliveryStore, type HookDeliveryStore } from './hook-deliveries.ts';
import type { ContextRepositories } from './repositories.ts';

export interface Automations extends AutomationService {
  deliveries: HookDeliveryStore;
  contexts: ContextRepositories;
  /** Tells this process's loop that a delivery was stored. */
  deliveryStored(): void;
  /** Returns the unsubscribe function. */
  onDelivery(listener: () => void): () => void;
}

export function createAutomations(deps: {
  store: { db: Kysely<Database> };
  jobs: JobService;
  projects: ProjectService;
  contexts: ContextRepositories;
  logger: Logger;
  now: () => Date;
  changeDetails?: ChangeDetailsOf;
  /** `DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL`: see git/repository-address.ts. */
  allowLinkLocalRepositories?: boolean;
}): Automations {
  const events = new EventEmitter();
  return {
    ...createAutomationService(deps),
    deliveries: createHookDeliveryStore(deps),
    contexts: deps.contexts,
    deliveryStored: () => events.emit('stored'),
    onDelivery(listener) {
      events.on('stored', listener);
      return () => events.off('stored', listener);
    },
  };
}
