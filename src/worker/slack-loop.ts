/**
 * The Slack app's background work in a server process (docs/slack.mdx): stored events processed
 * (woken by the events route after each store; those left by a crash or another process are
 * found by the periodic check), and each thread's status message brought up to date when its
 * job changes (woken by the jobs' signals, which reach every process sharing the database). Any
 * number of processes may run this beside one database: events are claimed, status updates
 * taken conditionally (src/conversations/slack/).
 */
import type { App } from '../app.ts';
import { SinglePass } from './single-pass.ts';

/** What the loop uses of the App. */
export type SlackLoopDeps = Pick<App, 'slack' | 'signals' | 'logger'>;

export interface SlackLoopOptions {
  /** How often waiting events and stale status messages are looked for without a wake-up (default 5 s). */
  checkMs?: number;
  /** How long a wake-up waits for more (a run's events come in bursts; default 200 ms). */
  settleMs?: number;
}

/**
 * How long a stored event waits for the burst it came in to end (no event for this long) before
 * the pass that processes it, and at most (`EVENT_BURST_MAX_MS`): on SQLite a pass's statements
 * run on the event loop that acknowledges Slack's requests, and processing in the middle of a
 * burst would hold the other events' answers behind it (as src/worker/automation-loop.ts does).
 */
export const EVENT_QUIET_MS = 25;
export const EVENT_BURST_MAX_MS = 2_000;

export class SlackLoop {
  readonly #app: SlackLoopDeps;
  readonly #checkMs: number;
  readonly #settleMs: number;
  #timer: NodeJS.Timeout | undefined;
  #settle: NodeJS.Timeout | undefined;
  #burst: { timer: NodeJS.Timeout; since: number } | undefined;
  readonly #passes: SinglePass;
  #stopping = false;
  readonly #unsubscribe: (() => void)[] = [];

  constructor(app: SlackLoopDeps, options: SlackLoopOptions = {}) {
    this.#app = app;
    this.#passes = new SinglePass(
      () => this.runPass(),
      (error) => this.#app.logger.warn({ err: { message: error.message } }, 'Slack pass failed'),
    );
    this.#checkMs = options.checkMs ?? 5_000;
    this.#settleMs = options.settleMs ?? 200;
  }

  start(): void {
    this.#unsubscribe.push(this.#app.slack.onEventStored(() => this.#wakeAfterBurst()));
    this.#unsubscribe.push(
      this.#app.signals.subscribe((signal) => {
        if (signal.kind === 'job-event' || signal.kind === 'job-changed' || signal.kind === 'jobs-changed') {
          this.#wakeSoon();
        }
      }),
    );
    this.#timer = setInterval(() => this.wake(), this.#checkMs);
    this.#timer.unref();
    this.wake();
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    for (const unsubscribe of this.#unsubscribe) unsubscribe();
    clearInterval(this.#timer);
    clearTimeout(this.#settle);
    clearTimeout(this.#burst?.timer);
    await this.#passes.stop();
  }

  /** A pass once events stop arriving for `EVENT_QUIET_MS` (or `EVENT_BURST_MAX_MS` after the first). */
  #wakeAfterBurst(): void {
    if (this.#stopping) return;
    const now = Date.now();
    const since = this.#burst?.since ?? now;
    clearTimeout(this.#burst?.timer);
    const delay = Math.min(EVENT_QUIET_MS, Math.max(0, since + EVENT_BURST_MAX_MS - now));
    const timer = setTimeout(() => {
      this.#burst = undefined;
      this.wake();
    }, delay);
    timer.unref();
    this.#burst = { timer, since };
  }

  /** A pass once the burst of job signals settles. */
  #wakeSoon(): void {
    if (this.#settle || this.#stopping) return;
    this.#settle = setTimeout(() => {
      this.#settle = undefined;
      this.wake();
    }, this.#settleMs);
    this.#settle.unref();
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

  /** One pass: every waiting event, then every status message that is behind. */
  async runPass(): Promise<void> {
    await this.processEvents();
    if (this.#stopping) return;
    await this.#app.slack.updateStatuses();
  }

  /** Processes waiting events until none is left; returns how many. */
  async processEvents(): Promise<number> {
    const { slack, logger } = this.#app;
    let done = 0;
    while (!this.#stopping) {
      const row = await slack.events.claimNext();
      if (!row) break;
      // A failure here (the database, Slack unreachable) leaves the event claimed: it is taken
      // again once the claim lapses, and what it created is keyed by its event id.
      const result = await slack.processEvent(row);
      await slack.events.markProcessed(row.id, result);
      const fields = { event: row.event_id, type: row.event_type, result };
      if (/^(job|follow-up):/.test(result)) logger.info(fields, 'Slack event processed');
      else logger.warn(fields, `Slack event started nothing: ${result}`);
      done++;
      // Requests waiting on the event loop are served between two events (SQLite runs on it),
      // and a new burst of events pauses the pass: its answers to Slack come first, and the pass
      // goes on once the burst ends (#wakeAfterBurst).
      await new Promise((resolve) => setImmediate(resolve));
      if (this.#burst) break;
    }
    return done;
  }
}
