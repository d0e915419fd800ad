import type { App } from '../app.ts';
import type { WorkerSettings } from '../config.ts';
import { toAgentJob } from '../jobs/agent-job.ts';
import { parseChangeRequests } from '../jobs/changes.ts';
import { type ClaimedRun, claimNextRun } from '../jobs/queue/claim.ts';
import { finishRun } from '../jobs/queue/finish.ts';
import { cancelledRuns, type Lease, lostLeases, releaseLease, renewLease } from '../jobs/queue/lease.ts';
import { recordRunEvent } from '../jobs/queue/run-events.ts';
import { sweepRuns, timeLimitError } from '../jobs/queue/sweep.ts';
import type { RunOutcome } from '../jobs/run-outcome.ts';
import { runHistory } from '../jobs/runs.ts';
import { jobSpending, recordUsage, type TokenUsage } from '../jobs/usage.ts';
import type { Logger } from '../logger.ts';
import type { DeferTask, RunnableJob, Runner } from '../pipeline/runner.ts';
import type { JobRunRow } from '../store/schema.ts';
import { isTransientDatabaseError, retryDatabase } from '../store/transient.ts';
import { Backoff, logTaskFailure } from './backoff.ts';
import { ClaimLoop } from './claim-loop.ts';
import { processRunDirectory, removeOwnRunDirectory, removeStaleRunDirectories } from './run-directories.ts';
import { goneWorkerProcess, newWorkerId } from './worker-identity.ts';

/** What the worker uses of the App: its settings, the store it claims from, the wake-ups and the clock. */
export type WorkerDeps = Pick<App, 'config' | 'logger' | 'metrics' | 'now' | 'signals' | 'store'>;

/** How often checkouts left by processes that died are looked for. */
const LEFTOVER_SWEEP_MS = 10 * 60_000;

export interface WorkerOptions extends Partial<WorkerSettings> {
  /** Called once per run; see `Runner`. */
  runner: Runner;
  /** Names this worker in leases and logs (default host-pid-random@machine: see worker-identity.ts). */
  workerId?: string;
  /** Fallback claim poll when no wake-up signal arrives (default 1 s). */
  pollMs?: number;
  /** How often running runs are checked for cancellation or a stolen lease (default 1 s). */
  cancelCheckMs?: number;
  /** How often expired leases and overdue runs are swept (default: a quarter of the lease, at most 5 s). */
  sweepMs?: number;
  /** Whether this worker claims runs; false leaves only the sweeper (API-only processes). */
  claim?: boolean;
}

/** Why a run's AbortSignal fired. */
export type AbortReason = 'cancelled' | 'lease-lost' | 'time-limit' | 'shutdown' | 'database-unavailable';

export class RunAborted extends Error {
  readonly reason: AbortReason;
  constructor(reason: AbortReason) {
    super(`run aborted: ${reason}`);
    this.name = 'RunAborted';
    this.reason = reason;
  }
}

interface ActiveRun {
  run: JobRunRow;
  lease: Lease;
  controller: AbortController;
  done: Promise<void>;
}

/** A claim's key among the active runs: a run claimed again (after its lease was lost) is another. */
const leaseKey = (run: JobRunRow) => `${run.id}#${run.attempts}`;

/**
 * Claims queued runs and executes them with the runner, holding a lease that
 * heartbeats renew (docs/worker.mdx). One per process; any number share a database.
 */
export class Worker {
  readonly id: string;
  readonly #app: WorkerDeps;
  readonly #log: Logger;
  readonly #settings: WorkerSettings;
  readonly #options: WorkerOptions;
  readonly #active = new Map<string, ActiveRun>();
  readonly #timers: NodeJS.Timeout[] = [];
  #unsubscribe: (() => void) | undefined;
  #stopping = false;
  /** Claims runs into free slots; stop() waits for its pass. */
  readonly #claims: ClaimLoop;

  constructor(app: WorkerDeps, options: WorkerOptions) {
    this.#app = app;
    this.#options = options;
    this.#settings = { ...app.config.worker, ...definedOnly(options) };
    this.id = options.workerId ?? newWorkerId();
    this.#log = app.logger.child({ workerId: this.id });
    this.#claims = new ClaimLoop({
      task: 'claim',
      log: this.#log,
      maxBackoffMs: MAX_BACKOFF_MS,
      enabled: () => !this.#stopping && options.claim !== false,
      claimOnce: () => this.#claimOnce(),
    });
  }

  get running(): number {
    return this.#active.size;
  }

  start(): void {
    const { leaseMs } = this.#settings;
    const every = (task: string, ms: number, fn: () => Promise<unknown>, keepAlive = false) => {
      const backoff = new Backoff(ms, MAX_BACKOFF_MS);
      const timer = setInterval(() => {
        if (backoff.pausing) return;
        void fn().then(
          () => backoff.succeeded() && this.#log.info(`${task} works again`),
          (error) => logTaskFailure(this.#log, task, backoff, error),
        );
      }, ms);
      if (!keepAlive) timer.unref();
      this.#timers.push(timer);
    };
    every('sweep', this.#options.sweepMs ?? Math.min(leaseMs / 4, 5_000), () => this.sweep());
    void this.sweep().catch((error) => this.#log.warn({ err: error }, 'sweep failed'));
    if (this.#options.claim === false) return;
    const removeLeftovers = async () => {
      const removed = await removeStaleRunDirectories();
      if (removed.length > 0) this.#log.info({ removed }, 'removed checkouts of runs whose process is gone');
    };
    every('removing old checkouts', LEFTOVER_SWEEP_MS, removeLeftovers);
    void removeLeftovers().catch((error) => this.#log.warn({ err: error }, 'removing old checkouts failed'));

    this.#unsubscribe = this.#app.signals.subscribe((signal) => {
      if (signal.kind === 'run-queued') this.#claims.wake();
      if (
        signal.kind === 'run-cancelled' &&
        [...this.#active.values()].some((a) => a.run.id === signal.runId)
      )
        void this.#checkLost();
    });
    // The claim poll holds the process open until stop(): a worker-only process
    // on SQLite has no socket that would, and would exit as soon as it started.
    every('claim poll', this.#options.pollMs ?? 1_000, async () => this.#claims.wake(), true);
    every('heartbeat', leaseMs / 3, () => this.#heartbeat());
    every('cancellation check', this.#options.cancelCheckMs ?? 1_000, () => this.#checkLost());
    this.#claims.wake();
    this.#log.info({ concurrency: this.#settings.concurrency, leaseMs }, 'worker started');
  }

  /**
   * Stops claiming, lets running runs finish for up to the grace period,
   * then aborts the rest and hands their runs back to the queue.
   */
  async stop(graceMs = this.#settings.shutdownGraceMs): Promise<void> {
    this.#stopping = true;
    this.#unsubscribe?.();
    // A claim already in flight still lands: wait for it, so that its run gets
    // the grace period and the release too instead of outliving stop() with a lease.
    await this.#claims.settled();
    const settled = Promise.all([...this.#active.values()].map((a) => a.done));
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), graceMs);
    });
    if ((await Promise.race([settled, graceOver])) === 'timeout') {
      this.#log.info({ running: this.#active.size }, 'grace period over; releasing running jobs');
      for (const active of this.#active.values()) active.controller.abort(new RunAborted('shutdown'));
      await settled;
    }
    clearTimeout(timer);
    for (const t of this.#timers) clearInterval(t);
    this.#options.runner.close?.();
    if (this.#options.claim !== false) await removeOwnRunDirectory();
    this.#log.info('worker stopped');
  }

  /** One sweep (also run on a timer); returns what it changed. */
  async sweep() {
    const result = await sweepRuns(this.#app.store.db, {
      now: this.#app.now(),
      maxAttempts: this.#settings.maxAttempts,
      jobTimeLimitMs: this.#settings.jobTimeLimitMs,
      queueTimeLimitMs: this.#settings.queueTimeLimitMs,
      goneWorker: goneWorkerProcess,
    });
    if (result.workerGone.length > 0)
      this.#log.warn({ runs: result.workerGone }, 'recovering runs whose worker process is gone');
    if (result.requeued.length > 0) {
      this.#log.warn({ runs: result.requeued }, 'requeued runs whose worker stopped renewing its lease');
      await this.#app.signals.publish({ kind: 'run-queued' });
    }
    if (result.lost.length > 0) this.#log.warn({ runs: result.lost }, 'runs failed: worker lost too often');
    if (result.timedOut.length > 0) this.#log.warn({ runs: result.timedOut }, 'runs failed: time limit');
    if (result.neverStarted.length > 0)
      this.#log.warn({ runs: result.neverStarted }, 'runs failed: waited too long in the queue');
    return result;
  }

  /** Claims one run into a free slot, if there is one and a run is due. */
  async #claimOnce(): Promise<boolean> {
    if (this.#active.size >= this.#settings.concurrency) return false;
    const claimed = await claimNextRun(this.#app, {
      workerId: this.id,
      now: this.#app.now(),
      leaseMs: this.#settings.leaseMs,
      projectConcurrency: this.#settings.projectConcurrency,
    });
    if (!claimed) return false;
    this.#start(claimed);
    return true;
  }

  #start(claimed: ClaimedRun): void {
    const { run } = claimed;
    const controller = new AbortController();
    const lease: Lease = { runId: run.id, workerId: this.id, attempt: run.attempts };
    const active: ActiveRun = { run, lease, controller, done: Promise.resolve() };
    const key = leaseKey(run);
    this.#active.set(key, active);
    active.done = this.#execute(claimed, lease, controller).finally(() => {
      this.#active.delete(key);
      this.#claims.wake();
    });
  }

  async #execute(claimed: ClaimedRun, lease: Lease, controller: AbortController): Promise<void> {
    const { run } = claimed;
    const deferred: (() => Promise<void>)[] = [];
    try {
      await this.#runAndRecord(claimed, lease, controller, (task) => deferred.push(task));
    } catch (error) {
      // Nothing a run does may take the process down: what could not be recorded is retried
      // by another attempt once the lease expires.
      this.#log.error({ err: error, runId: run.id, jobId: run.job_id }, 'run could not be recorded');
    } finally {
      // What the runner put off until its outcome was recorded (removing its checkout): callers
      // see the result sooner, while the worker's slot and a graceful stop still wait for it.
      for (const result of await Promise.allSettled(deferred.map((task) => task()))) {
        if (result.status === 'rejected')
          this.#log.warn({ err: result.reason, runId: run.id }, 'run clean-up failed');
      }
    }
  }

  async #runAndRecord(
    { run, job: row }: ClaimedRun,
    lease: Lease,
    controller: AbortController,
    defer: DeferTask,
  ): Promise<void> {
    const { db } = this.#app.store;
    const log = this.#log.child({ jobId: run.job_id, runId: run.id });
    const started = this.#app.now();
    const metrics = this.#app.metrics;
    metrics.runAttempts.observe(run.attempts);
    if (run.attempts === 1)
      metrics.pickupLatency.observe((started.getTime() - Date.parse(run.created_at)) / 1000);
    // Counted from when the run first started: a retried attempt inherits the time already spent,
    // and time spent waiting in the queue is not charged (the sweeper bounds that separately).
    const firstStarted = Date.parse(run.started_at ?? started.toISOString());
    const deadline = firstStarted + this.#settings.jobTimeLimitMs - started.getTime();
    const timeLimit = setTimeout(() => controller.abort(new RunAborted('time-limit')), Math.max(0, deadline));

    // The database may drop a connection or restart under a run: idempotent steps are tried again.
    const retrying = <T>(operation: () => Promise<T>) =>
      retryDatabase(operation, {
        withinMs: this.#settings.leaseMs / 2,
        onRetry: (error, attempt) =>
          log.warn({ err: { message: (error as Error).message }, attempt }, 'database unavailable; retrying'),
      });

    const emit = async (type: string, data?: unknown) => {
      if (controller.signal.aborted) return;
      let written: boolean;
      try {
        written = await retrying(() =>
          recordRunEvent(db, {
            ...lease,
            jobId: run.job_id,
            type,
            data,
            now: this.#app.now(),
          }),
        );
      } catch (error) {
        if (!isTransientDatabaseError(error)) throw error;
        controller.abort(new RunAborted('database-unavailable'));
        return;
      }
      if (!written) controller.abort(new RunAborted('lease-lost'));
      else await this.#app.signals.publish({ kind: 'job-event', jobId: run.job_id }).catch(() => {});
    };

    // Tokens are spent whether or not the run keeps its lease: they are recorded either way.
    const recordTokens = async (usage: TokenUsage) => {
      await retrying(() => recordUsage(db, { run, usage, at: this.#app.now() }));
      metrics.tokens.inc({ direction: 'input' }, usage.inputTokens);
      metrics.tokens.inc({ direction: 'output' }, usage.outputTokens);
      await this.#app.signals.publish({ kind: 'job-event', jobId: run.job_id }).catch(() => {});
    };

    let outcome: RunOutcome | undefined;
    try {
      const job: RunnableJob = {
        ...toAgentJob(row),
        projectId: row.project_id,
        draft: row.draft === null ? null : row.draft === 1,
      };
      const history = await retrying(() => runHistory(db, run.job_id, run.seq));
      const spent = await retrying(() => jobSpending(db, run, started));
      log.info({ attempt: run.attempts }, 'run started');
      const result = await this.#options.runner(
        job,
        {
          id: run.id,
          seq: run.seq,
          prompt: run.prompt,
          attempt: run.attempts,
          history,
          spent,
          changes: parseChangeRequests(run.changes),
        },
        { signal: controller.signal, emit, defer, recordUsage: recordTokens, tmpDir: processRunDirectory() },
      );
      if (!controller.signal.aborted) outcome = result;
    } catch (error) {
      if (!controller.signal.aborted && isTransientDatabaseError(error)) {
        // Not the job's fault: the run goes back to the queue rather than failing.
        controller.abort(new RunAborted('database-unavailable'));
      } else if (!controller.signal.aborted) {
        log.error({ err: error }, 'runner threw');
        outcome = {
          status: 'failed',
          error: { code: 'internal-error', message: 'the run failed unexpectedly; see the server log' },
        };
      }
    } finally {
      clearTimeout(timeLimit);
    }

    const reason = controller.signal.aborted ? (controller.signal.reason as RunAborted).reason : undefined;
    if (reason === 'time-limit') {
      outcome = { status: 'failed', error: timeLimitError(this.#settings.jobTimeLimitMs) };
    }
    const seconds = (this.#app.now().getTime() - started.getTime()) / 1000;
    if (reason === 'shutdown' || reason === 'database-unavailable') {
      // If the database stays away, the sweeper requeues the run once its lease has expired.
      const released = await retryDatabase(() => releaseLease(db, lease), {
        withinMs: this.#settings.leaseMs,
      }).catch((error) => log.warn({ err: error }, 'release failed'));
      if (released) await this.#app.signals.publish({ kind: 'run-queued' }).catch(() => {});
      metrics.runDuration.observe({ outcome: 'released' }, seconds);
      log.info({ reason }, 'run released for another attempt');
      return;
    }
    if (!outcome) {
      // Cancelled or lease lost: the run is someone else's business now; write nothing.
      metrics.runDuration.observe({ outcome: reason ?? 'aborted' }, seconds);
      log.info({ reason }, 'run aborted');
      return;
    }
    // Conditional on the lease: a retry after a commit whose answer was lost finds the run
    // finished and writes nothing twice.
    const now = this.#app.now();
    const finished = await retrying(() => finishRun(this.#app, { run, workerId: this.id, outcome, now }));
    metrics.runDuration.observe({ outcome: finished ? outcome.status : 'lease-lost' }, seconds);
    if (finished) {
      log.info(
        { status: outcome.status, error: outcome.status === 'failed' ? outcome.error.code : undefined },
        'run finished',
      );
    } else {
      log.warn('run finished after losing its lease; outcome discarded');
    }
  }

  async #heartbeat(): Promise<void> {
    const until = new Date(this.#app.now().getTime() + this.#settings.leaseMs);
    for (const active of [...this.#active.values()]) {
      if (active.controller.signal.aborted) continue;
      const held = await renewLease(this.#app.store.db, { ...active.lease, until });
      if (!held) active.controller.abort(new RunAborted('lease-lost'));
    }
  }

  /** Aborts runs that were cancelled (archived) or taken from us. */
  async #checkLost(): Promise<void> {
    const active = [...this.#active.values()];
    if (active.length === 0) return;
    const lost = new Set(
      await lostLeases(
        this.#app.store.db,
        active.map((a) => a.lease),
      ),
    );
    if (lost.size === 0) return;
    const cancelledIds = await cancelledRuns(
      this.#app.store.db,
      [...lost].map((l) => l.runId),
    );
    for (const { lease, controller } of active) {
      if (!lost.has(lease)) continue;
      controller.abort(new RunAborted(cancelledIds.has(lease.runId) ? 'cancelled' : 'lease-lost'));
    }
  }
}

/** The longest pause between attempts of a task that keeps failing. */
const MAX_BACKOFF_MS = 30_000;

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
