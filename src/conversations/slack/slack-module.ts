/**
 * The Slack app of a process (docs/slack.mdx): channel links, stored events, threads and the Web
 * API clients, and the in-process nudge that wakes the background loop when an event is stored.
 */
import { EventEmitter } from 'node:events';
import type { Config } from '../../config.ts';
import type { JobService } from '../../jobs/job-service.ts';
import type { Logger } from '../../logger.ts';
import type { ProjectService } from '../../projects/projects.ts';
import type { Store } from '../../store/database.ts';
import { answerSlashCommand } from './commands.ts';
import { processSlackEvent } from './event-processing.ts';
import { createSlackEvents } from './events.ts';
import { createSlackLinks } from './links.ts';
import {
  createSlackCommandWeb,
  createSlackWeb,
  type SlackCommandWeb,
  type SlackWeb,
} from './slack-client.ts';
import { updateStatuses } from './status-updates.ts';
import { createSlackThreads } from './threads.ts';

export type Slack = ReturnType<typeof createSlack>;

export function createSlack(deps: {
  store: Store;
  config: Pick<Config, 'slack' | 'publicUrl'>;
  projects: Pick<ProjectService, 'getRow'>;
  jobs: Pick<JobService, 'create' | 'message'>;
  logger: Logger;
  now: () => Date;
  /** The Web API clients (tests); default: `@slack/web-api` with the bot token. */
  web?: { events: SlackWeb; commands: SlackCommandWeb };
}) {
  const { slack } = deps.config;
  const links = createSlackLinks({ db: deps.store.db, projects: deps.projects, now: deps.now });
  const events = createSlackEvents({ db: deps.store.db, now: deps.now });
  const threads = createSlackThreads({ db: deps.store.db, now: deps.now });
  const token = slack.botToken;
  const web = deps.web?.events ?? (token ? createSlackWeb(token, slack.apiUrl, deps.logger) : undefined);
  const commandWeb =
    deps.web?.commands ?? (token ? createSlackCommandWeb(token, slack.apiUrl, deps.logger) : undefined);
  const stored = new EventEmitter();
  stored.setMaxListeners(0);
  const publicUrl = deps.config.publicUrl?.replace(/\/+$/, '');

  return {
    /** Whether Slack's requests can be verified (a signing secret is set). */
    configured: slack.signingSecret !== undefined,
    links,
    events,
    threads,
    /** Processes one stored event (the background loop). */
    processEvent: (row: Parameters<typeof processSlackEvent>[0]) =>
      processSlackEvent(row, { links, threads, jobs: deps.jobs, web }),
    /** Brings status messages up to date (the background loop); 0 without a bot token. */
    updateStatuses: () =>
      web
        ? updateStatuses({
            threads,
            web,
            logger: deps.logger,
            jobUrl: (projectId, jobId) =>
              publicUrl ? `${publicUrl}/projects/${projectId}/jobs/${jobId}` : null,
          })
        : Promise.resolve(0),
    answerCommand: (form: Record<string, string | undefined>) =>
      answerSlashCommand(form, { links, web: commandWeb }),
    /** Called by the events route after it stored an event. */
    eventStored(): void {
      stored.emit('stored');
    },
    onEventStored(listener: () => void): () => void {
      stored.on('stored', listener);
      return () => stored.off('stored', listener);
    },
  };
}
