/**
 * The background work of automations in a server process (docs/automations.mdx): stored webhook deliveries
 * processed (woken by the hook endpoint after each store; those left by a crash are picked up at
 * start), schedules checked when due, repositories polled every `DOCWRIGHT_AUTOMATION_POLL_SECONDS`,
 * and runs whose job a stopped process never created started. Any number of processes may run
 * this beside one database: every run is recorded once by its keys (run-store.ts), so that two
 * processes handling one delivery or one scheduled time create one run.
 */
import type { App } from '../app.ts';
import { type ListChanges, listThroughHost } from '../automations/change-listing.ts';
import type { HookHost } from '../automations/code-events.ts';
import { processDelivery } from '../automations/hook-processing.ts';
import { pollOnce } from '../automations/poller.ts';
import { tickSchedules } from '../automations/scheduler.ts';
import {
  type DefaultBranchOf,
  defaultBranchThroughHost,
  type WatchedBranchOf,
  watchedBranches,
} from '../automations/watched-branch.ts';
import { isCommentEvent } from '../conversations/comments/comment-events.ts';
import { isDocwrightError } from '../errors.ts';
import { SinglePass } from './single-pass.ts';

/** What the loop uses of the App. */
export type AutomationLoopDeps = Pick<
  App,
  'automations' | 'comments' | 'config' | 'logger' | 'now' | 'projects' | 'store'
>;

export interface AutomationLoopOptions {
  /** How often waiting deliveries and due schedules are looked for without a wake-up (default 15 s). */
  checkMs?: number;
  /** Polling period; default the configuration's `automationPollSeconds` (0: off). */
  pollSeconds?: number;
  /** How a repository's changes are listed (tests give a double). */
  listChanges?: ListChanges;
  /** How the default branch of a repository without `ref` is found (default: its host's API). */
  defaultBranchOf?: DefaultBranchOf;
  /**
   * How long a push delivery waits before it is processed (default 2 s): a merge sends its pull
   * request event beside the push, and the pull request's (with its labels and head branch) must
   * make the run, not the push that shares its commit. Hosts send the two together.
   */
  pushSettleMs?: number;
}

/**
 * Long enough for the pull request event a host sends with a merge's push (GitHub, GitLab and
 * Gitea send both at once); short, since every push waits it (issue 35: it was 20 s, and a
 * push, waiting for a pass after that, took 23–30 s where the docs said 2 s).
 */
export const DEFAULT_PUSH_SETTLE_MS = 2_000;

/**
 * How long a stored delivery waits for the burst it came in to end (no delivery for this long)
 * before the pass that processes it, and at most (`DELIVERY_BURST_MAX_MS`). On SQLite the pass's
 * statements run synchronously on the event loop that answers the hook endpoint: processing in
 * the middle of a burst would hold the remaining deliveries' 202s behind it.
 */
export const DELIVERY_QUIET_MS = 25;
export const DELIVERY_BURST_MAX_MS = 2_000;

export class AutomationLoop {
  readonly #app: AutomationLoopDeps;
  readonly #checkMs: number;
  readonly #pollMs: number;
  readonly #listChanges: ListChanges;
  readonly #branchOf: WatchedBranchOf;
  readonly #pushSettleMs: number;
  #settleTimer: NodeJS.Timeout | undefined;
  #burst: { timer: NodeJS.Timeout; since: number } | undefined;
  readonly #timers: NodeJS.Timeout[] = [];
  readonly #passes: SinglePass;
  #stopping = false;
  #unsubscribe: (() => void) | undefined;

  constructor(app: AutomationLoopDeps, options: AutomationLoopOptions = {}) {
    this.#app = app;
    this.#passes = new SinglePass(
      () => this.runPass(),
      (error) => this.#app.logger.warn({ err: { message: error.message } }, 'automation pass failed'),
    );
    this.#checkMs = options.checkMs ?? 15_000;
    this.#pollMs = (options.pollSeconds ?? app.config.automationPollSeconds) * 1000;
    const hostOptions = { allowLinkLocal: app.config.allowLinkLocalRepositories };
    this.#listChanges = options.listChanges ?? listThroughHost(hostOptions);
    this.#branchOf = watchedBranches(options.defaultBranchOf ?? defaultBranchThroughHost(hostOptions));
    this.#pushSettleMs = options.pushSettleMs ?? DEFAULT_PUSH_SETTLE_MS;
  }

  start(): void {
    this.#unsubscribe = this.#app.automations.onDelivery(() => this.#wakeAfterBurst());
    const every = (ms: number, task: () => unknown) => {
      const timer = setInterval(task, ms);
      timer.unref();
      this.#timers.push(timer);
    };
    every(this.#checkMs, () => this.wake());
    if (this.#pollMs > 0) every(this.#pollMs, () => void this.poll().catch(() => {}));
    this.wake();
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#unsubscribe?.();
    for (const timer of this.#timers) clearInterval(timer);
    clearTimeout(this.#settleTimer);
    clearTimeout(this.#burst?.timer);
    await this.#passes.stop();
  }

  /** Runs a pass soon (another one after the current pass when one is going). */
  wake(): void {
    if (this.#stopping) return;
    this.#passes.wake();
  }

  /** Waits for the pass under way, if any (tests). */
  async idle(): Promise<void> {
    await this.#passes.idle();
  }

  /** One pass: waiting deliveries, due schedules, runs to resume. */
  async runPass(): Promise<void> {
    await this.processDeliveries();
    if (this.#stopping) return;
    await this.tickSchedules(this.#app.now());
    await this.#app.automations.resumeRuns();
  }

  /** Processes every waiting delivery; returns how many. */
  async processDeliveries(): Promise<number> {
    const service = this.#app.automations;
    const { deliveries } = service;
    let done = 0;
    for (;;) {
      const pushesBefore = new Date(this.#app.now().getTime() - this.#pushSettleMs).toISOString();
      const batch = await deliveries.waiting(pushesBefore);
      if (batch.length === 0 || this.#stopping) {
        await this.#wakeForPushes();
        return done;
      }
      for (const row of batch) {
        let result: string;
        try {
          // A comment on the docs repository's pull request asks for a follow-up (docs/pull-request-comments.mdx).
          result =
            row.name === 'docs' && isCommentEvent(row.host as HookHost, row.event)
              ? await this.#app.comments.receiveDelivery(row)
              : await processDelivery(row, { deliveries, automations: service, branchOf: this.#branchOf });
        } catch (error) {
          // A database failure leaves the delivery waiting for the next pass; a refusal is its result.
          if (!isDocwrightError(error) || error.status >= 500) throw error;
          result = `failed: ${error.code}`;
        }
        await deliveries.markProcessed(row.id, result);
        this.#logDelivery(row, result);
        done++;
      }
    }
  }

  /** A pass once deliveries stop arriving for `DELIVERY_QUIET_MS` (or `DELIVERY_BURST_MAX_MS` after the first). */
  #wakeAfterBurst(): void {
    const now = Date.now();
    const since = this.#burst?.since ?? now;
    clearTimeout(this.#burst?.timer);
    const delay = Math.min(DELIVERY_QUIET_MS, Math.max(0, since + DELIVERY_BURST_MAX_MS - now));
    const timer = setTimeout(() => {
      this.#burst = undefined;
      this.wake();
    }, delay);
    timer.unref();
    this.#burst = { timer, since };
  }

  /** What became of a delivery, for the operator: the database column alone went unseen. */
  #logDelivery(row: { id: string; project_id: string; name: string; event: string | null }, result: string) {
    const fields = {
      delivery: row.id,
      projectId: row.project_id,
      repository: row.name,
      event: row.event,
      result,
    };
    if (/^(runs:|follow-up|waiting)/.test(result)) this.#app.logger.info(fields, 'hook delivery processed');
    // Most comments on a pull request are people talking to each other: no warning for those.
    else if (result.startsWith('ignored: no @'))
      this.#app.logger.debug(fields, `hook delivery started nothing: ${result}`);
    else this.#app.logger.warn(fields, `hook delivery started nothing: ${result}`);
  }

  /**
   * A pass when the oldest push held back is due: timed from when it arrived, not from this pass,
   * so that it waits the settle time and no longer (the periodic check would be later).
   */
  async #wakeForPushes(): Promise<void> {
    if (this.#stopping || this.#pushSettleMs === 0) return;
    const oldest = await this.#app.automations.deliveries.oldestWaitingPush();
    if (oldest === undefined || this.#stopping) return;
    const due = Date.parse(oldest) + this.#pushSettleMs + 50 - this.#app.now().getTime();
    clearTimeout(this.#settleTimer);
    this.#settleTimer = setTimeout(
      () => {
        this.#settleTimer = undefined;
        this.wake();
      },
      Math.max(0, due),
    );
    this.#settleTimer.unref();
  }

  /** Checks the schedules at `now` (the app's clock by default). */
  tickSchedules(now: Date) {
    return tickSchedules(this.#deps(), now);
  }

  /** Polls every watched repository once. */
  poll() {
    return pollOnce({ ...this.#deps(), db: this.#app.store.db, now: this.#app.now });
  }

  #deps() {
    return {
      automations: this.#app.automations,
      projects: this.#app.projects,
      contexts: this.#app.automations.contexts,
      listChanges: this.#listChanges,
      branchOf: this.#branchOf,
      logger: this.#app.logger,
    };
  }
}
