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
