import type { App } from '../app.ts';
import { createPipeline } from '../pipeline/pipeline.ts';
import type { Runner } from '../pipeline/runner.ts';
import { AutomationLoop } from './automation-loop.ts';
import { CommentLoop } from './comment-loop.ts';
import { SlackLoop } from './slack-loop.ts';
import { WebhookDispatcher } from './webhook-dispatcher.ts';
import { Worker } from './worker.ts';

/** One loop of a process's background work: started once, stopped (gracefully) on shutdown. */
export interface BackgroundLoop {
  start(): void;
  stop(): Promise<void>;
}

export interface BackgroundOptions {
  /** Whether this process runs jobs (claims runs, sends webhooks); false still sweeps (`serve --no-worker`). */
  runsJobs: boolean;
  /** Whether it is an API process (`serve`, not `worker`): it processes incoming hook deliveries, polls, schedules and Slack events. */
  servesApi: boolean;
  /** Runs at once in this process (default: the configuration's). */
  concurrency?: number;
  /** What runs a claimed run (default: the pipeline; tests give their own). */
  runner?: Runner;
}

/** The background loops of one process, composed once for `docwright serve` and `docwright worker`. */
export interface Background {
  /** The job worker (every process has one: API-only processes still sweep). */
  worker: Worker;
  /** The loops this process runs, by name, in the order they start. */
  names: readonly string[];
  start(): void;
  /** Stops every loop at once, each with its own grace period. */
  stop(): Promise<void>;
}

export function backgroundLoops(app: App, options: BackgroundOptions): Background {
  const worker = new Worker(app, {
    runner: options.runner ?? createPipeline(app),
    claim: options.runsJobs,
    concurrency: options.concurrency,
  });
  // One line a loop; a loop this process does not run is left out.
  const candidates: [string, BackgroundLoop | false][] = [
    // API-only processes still sweep, so that no job outlives a crash of every worker.
    ['worker', worker],
    // Webhooks are sent by the processes that run jobs (docs/webhooks.mdx).
    ['webhooks', options.runsJobs && new WebhookDispatcher(app)],
    // Inbound deliveries are processed by the process that stored them (and any other, after a crash).
    ['automations', options.servesApi && new AutomationLoop(app)],
    // Pull request comments: waiting follow-ups started, replies posted, comments polled.
    ['comments', options.servesApi && new CommentLoop(app)],
    // Slack events are processed, and status messages kept up to date, by every API process of a
    // deployment with a Slack app (docs/slack.mdx).
    ['slack', options.servesApi && app.slack.configured && new SlackLoop(app)],
  ];
  const loops = candidates.filter((entry): entry is [string, BackgroundLoop] => entry[1] !== false);
  return {
    worker,
    names: loops.map(([name]) => name),
    start() {
      for (const [, loop] of loops) loop.start();
    },
    async stop() {
      await Promise.all(loops.map(([, loop]) => loop.stop()));
    },
  };
}
