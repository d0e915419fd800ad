import type { Logger } from '../logger.ts';
import { Backoff, logTaskFailure } from './backoff.ts';

/** What a claim loop claims, and when it may. */
export interface ClaimLoopOptions {
  /** Names the work in log lines ("claim", "webhook claim"). */
  task: string;
  log: Logger;
  /** Longest pause after failures of a database that refuses writes. */
  maxBackoffMs: number;
  /** Whether claiming is allowed at all now (false while stopping). */
  enabled(): boolean;
  /** Claims once if there is room, starting what it claimed; true if it may be worth claiming again. */
  claimOnce(): Promise<boolean>;
}

/**
 * Claims work while there is room, one pass at a time. Wake-ups arrive from many places at once
 * (signals, the poll, a slot freeing up): one during a pass asks for one more pass instead of
 * starting a second claimer, so none is lost and no two race for the same slots.
 */
export class ClaimLoop {
  readonly #options: ClaimLoopOptions;
  readonly #backoff: Backoff;
  #running = false;
  #again = false;
  #pass: Promise<void> = Promise.resolve();

  constructor(options: ClaimLoopOptions) {
    this.#options = options;
    this.#backoff = new Backoff(1_000, options.maxBackoffMs);
  }

  /** Claims pause after failures of a database that refuses writes. */
  get pausing(): boolean {
    return this.#backoff.pausing;
  }

  /** Starts a pass, or asks the pass under way for one more. */
  wake(): void {
    const { enabled, claimOnce, log, task } = this.#options;
    if (!enabled() || this.#backoff.pausing) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = true;
    this.#pass = (async () => {
      try {
        do {
          this.#again = false;
          while (enabled() && (await claimOnce()));
        } while (this.#again && enabled());
        if (this.#backoff.succeeded()) log.info(`${task}s work again`);
      } catch (error) {
        logTaskFailure(log, task, this.#backoff, error);
      } finally {
        this.#running = false;
      }
    })();
  }

  /** Resolves once the pass under way, if any, is over. */
  settled(): Promise<void> {
    return this.#pass;
  }
}
