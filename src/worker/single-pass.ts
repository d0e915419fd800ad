/**
 * One pass at a time, for the background loops that are woken (automations, pull request
 * comments, Slack): a wake-up while a pass runs asks for one more pass after it, so that nothing
 * woken for is missed and no two passes of a loop ever overlap.
 */
export class SinglePass {
  readonly #run: () => Promise<void>;
  readonly #onError: (error: Error) => void;
  #pass: Promise<void> | undefined;
  #again = false;
  #stopped = false;

  /** `onError` hears what a pass threw; the next wake-up tries again. */
  constructor(run: () => Promise<void>, onError: (error: Error) => void) {
    this.#run = run;
    this.#onError = onError;
  }

  /** Runs a pass now, or once more after the one under way. */
  wake(): void {
    if (this.#stopped) return;
    if (this.#pass) {
      this.#again = true;
      return;
    }
    this.#pass = this.#run()
      .catch((error: unknown) => this.#onError(error instanceof Error ? error : new Error(String(error))))
      .finally(() => {
        this.#pass = undefined;
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
  }

  /** Starts no pass any more, and waits for the one under way. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.idle();
  }

  /** Waits until no pass runs (nor one asked for after it). */
  async idle(): Promise<void> {
    while (this.#pass) await this.#pass;
  }
}
