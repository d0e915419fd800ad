/**
 * The background work of pull request comments in a server process (docs/pull-request-comments.mdx):
 * comments that waited for their job start when it ends, replies owed are posted ("started", then
 * the outcome once the follow-up's run ended), and pull requests of projects without a docs hook
 * are polled every `DOCWRIGHT_AUTOMATION_POLL_SECONDS`. Woken by this process's comment service
 * and by the signals of the jobs that have comments open (any process's, on PostgreSQL), with a
 * periodic pass as the fallback. Any number of processes may run it beside one database: starts
 * are claimed in the follow-up's transaction and replies under a lease (conversations/comments/).
 */
import type { App } from '../app.ts';
import { SinglePass } from './single-pass.ts';

export type CommentLoopDeps = Pick<App, 'comments' | 'config' | 'logger' | 'signals'>;

export interface CommentLoopOptions {
  /** How often a pass runs without a wake-up (default 15 s). */
  checkMs?: number;
  /** Polling period; default the configuration's `automationPollSeconds` (0: off). */
  pollSeconds?: number;
}

/** How long wake-ups wait to share one pass (a finishing run sends several signals). */
export const WAKE_GATHER_MS = 20;

export class CommentLoop {
  readonly #app: CommentLoopDeps;
  readonly #checkMs: number;
  readonly #pollMs: number;
  readonly #timers: NodeJS.Timeout[] = [];
  readonly #unsubscribe: (() => void)[] = [];
  /** Jobs with comments not done: only their signals wake the loop (refreshed every pass). */
  #watched = new Set<string>();
  readonly #passes: SinglePass;
  #soon: NodeJS.Timeout | undefined;
  #polling: Promise<unknown> | undefined;
  #stopping = false;

  constructor(app: CommentLoopDeps, options: CommentLoopOptions = {}) {
    this.#app = app;
    this.#passes = new SinglePass(
      () => this.runPass(),
      (error) => this.#app.logger.warn({ err: { message: error.message } }, 'comment pass failed'),
    );
    this.#checkMs = options.checkMs ?? 15_000;
    this.#pollMs = (options.pollSeconds ?? app.config.automationPollSeconds) * 1000;
  }

  start(): void {
    this.#unsubscribe.push(
      this.#app.comments.onChange(() => this.wakeSoon()),
      this.#app.signals.subscribe((signal) => {
        if (
          (signal.kind === 'job-event' || signal.kind === 'job-changed') &&
          this.#watched.has(signal.jobId)
        ) {
          this.wakeSoon();
        } else if (signal.kind === 'jobs-changed') {
          this.wakeSoon();
        }
      }),
    );
    const every = (ms: number, task: () => unknown) => {
      const timer = setInterval(task, ms);
      timer.unref();
      this.#timers.push(timer);
    };
    every(this.#checkMs, () => this.wake());
    if (this.#pollMs > 0) every(this.#pollMs, () => void this.poll());
    this.wake();
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    for (const off of this.#unsubscribe) off();
    for (const timer of this.#timers) clearInterval(timer);
    clearTimeout(this.#soon);
    await Promise.all([this.#passes.stop(), this.#polling]);
  }

  /** A pass after `WAKE_GATHER_MS`, shared by the wake-ups meanwhile. */
  wakeSoon(): void {
    if (this.#soon || this.#stopping) return;
    this.#soon = setTimeout(() => {
      this.#soon = undefined;
      this.wake();
    }, WAKE_GATHER_MS);
    this.#soon.unref();
  }

  wake(): void {
    if (this.#stopping) return;
    this.#passes.wake();
  }

  /** Waits for the pass under way, if any (tests). */
  async idle(): Promise<void> {
    await this.#passes.idle();
  }

  async runPass(): Promise<void> {
    const { comments } = this.#app;
    await comments.startWaiting();
    if (this.#stopping) return;
    await comments.postReplies();
    this.#watched = new Set(await comments.store.openJobs());
  }

  /** One poll tick (one at a time); its follow-ups are replied to by the next pass. */
  poll(): Promise<unknown> {
    this.#polling ??= this.#app.comments
      .poll()
      .then((received) => {
        if (received > 0) this.wake();
      })
      .catch((error: unknown) =>
        this.#app.logger.warn({ err: { message: (error as Error).message } }, 'comment poll failed'),
      )
      .finally(() => {
        this.#polling = undefined;
      });
    return this.#polling;
  }
}
