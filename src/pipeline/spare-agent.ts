import type { AgentProcessLimits } from '../config.ts';
import { AgentProcess } from './agent-process.ts';

/** A spare unused for this long is stopped: an idle server gives its memory back. */
const SPARE_IDLE_MS = 10 * 60_000;

/**
 * One agent process started ahead of the next run. Starting Node and loading the agent takes
 * ≈ 0.4 s on a small machine, longer than a checkout from a warm mirror, so a run that starts a
 * process of its own waits for it. The spare is started when a run has ended (never while one
 * starts, so that the two do not compete for the CPU); the next run takes it, and a run that finds
 * none starts its own as before. Each run still gets a process of its own: a spare is used once.
 */
export class SpareAgentProcess {
  readonly #limits: AgentProcessLimits | undefined;
  readonly #idleMs: number;
  #spare: AgentProcess | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(limits?: AgentProcessLimits, idleMs = SPARE_IDLE_MS) {
    this.#limits = limits;
    this.#idleMs = idleMs;
  }

  /** The spare if it is still alive, otherwise a process started now. */
  take(): AgentProcess {
    const spare = this.#spare;
    this.#forget();
    if (spare?.alive) {
      spare.setKeepsServerAlive(true);
      return spare;
    }
    spare?.kill();
    return AgentProcess.spawn(this.#limits);
  }

  /** Starts a spare unless one is waiting (after a run: the machine is about to be idle). */
  replenish(): void {
    if (this.#closed || this.#spare?.alive) return;
    this.#spare?.kill();
    const spare = AgentProcess.spawn(this.#limits);
    spare.setKeepsServerAlive(false);
    this.#spare = spare;
    this.#idleTimer = setTimeout(() => {
      if (this.#spare === spare) this.#forget();
      spare.kill();
    }, this.#idleMs);
    this.#idleTimer.unref();
  }

  /** Stops the spare; nothing is started afterwards. */
  close(): void {
    this.#closed = true;
    this.#spare?.kill();
    this.#forget();
  }

  #forget(): void {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    this.#spare = undefined;
  }
}
