import { isReadOnlyDatabase } from '../database-errors.ts';
import type { Logger } from '../logger.ts';

/**
 * Exponential backoff for a task that keeps failing the same way (a database that refuses writes):
 * each failure doubles the pause before the next attempt, up to a ceiling, so that the task
 * neither hammers the database nor fills the log; one success resets it.
 */
export class Backoff {
  readonly #baseMs: number;
  readonly #maxMs: number;
  #failures = 0;
  #until = 0;

  constructor(baseMs: number, maxMs: number) {
    this.#baseMs = baseMs;
    this.#maxMs = Math.max(baseMs, maxMs);
  }

  /** Whether the task should skip this turn. */
  get pausing(): boolean {
    return Date.now() < this.#until;
  }

  /** Failures in a row so far. */
  get failures(): number {
    return this.#failures;
  }

  /** Records a failure; returns how long the task now pauses, in milliseconds. */
  failed(): number {
    this.#failures += 1;
    const delay = Math.min(this.#baseMs * 2 ** Math.min(this.#failures - 1, 30), this.#maxMs);
    this.#until = Date.now() + delay;
    return delay;
  }

  /** Records a success; returns whether the task had been failing until now. */
  succeeded(): boolean {
    const recovered = this.#failures > 0;
    this.#failures = 0;
    this.#until = 0;
    return recovered;
  }
}

/**
 * A task's failure, logged. A database that refuses writes fails every attempt the same way: the
 * task then pauses, longer each time, so that it neither hammers the database nor fills the
 * log. Anything else (a dropped connection) is retried at the next turn, as before.
 */
export function logTaskFailure(log: Logger, task: string, backoff: Backoff, error: unknown): void {
  if (!isReadOnlyDatabase(error)) {
    log.warn({ err: error }, `${task} failed; will retry`);
    return;
  }
  const retryInMs = backoff.failed();
  log.warn(
    { err: error, failures: backoff.failures, retryInMs },
    `${task} failed; retrying in ${Math.ceil(retryInMs / 1000)} s`,
  );
}
