/**
 * Sends webhook deliveries (docs/webhooks.mdx). One per worker process, started next to the Worker by
 * `docwright serve` and `docwright worker`; any number share a database. It claims due
 * deliveries with a lease that heartbeats renew, POSTs them signed, and records each attempt:
 * a 2xx ends the delivery, a 410 disables the endpoint, anything else is retried on the
 * schedule of schedule.ts until it has failed for good.
 *
 * Endpoints that hang until the time limit must not hold up the others (one project's dead
 * endpoints delayed another project's delivery by 87 s when every slot waited on them): claims
 * go round the endpoints with a few in flight each (claim.ts), and a delivery that has waited
 * `slowAfterMs` for its answer gives its slot back while it goes on waiting.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { App } from '../app.ts';
import type { Logger } from '../logger.ts';
import type { WebhookDeliveryRow } from '../store/schema.ts';
import { VERSION } from '../version.ts';
import {
  anyDeliveryDue,
  claimDueDeliveries,
  recordAttempt,
  releaseDeliveries,
  renewDeliveryLeases,
} from '../webhooks/claim.ts';
import { deliveryContext } from '../webhooks/delivery-context.ts';
import { MAX_ATTEMPTS, retryDelayMs } from '../webhooks/schedule.ts';
import { postWebhook, RESPONSE_KEPT_BYTES, type WebhookAnswer } from '../webhooks/send.ts';
import { signWebhook } from '../webhooks/signature.ts';
import { ClaimLoop } from './claim-loop.ts';

/** What the dispatcher uses of the App. */
export type WebhookDispatcherDeps = Pick<App, 'config' | 'logger' | 'now' | 'signals' | 'store' | 'webhooks'>;

export interface WebhookDispatcherOptions {
  /**
   * Deliveries waiting for a prompt answer at once in this process (default 8). One that has
   * waited `slowAfterMs` no longer counts, so that endpoints that hang cannot hold every slot.
   */
  concurrency?: number;
  /** Deliveries in flight to one endpoint at once, across dispatchers (default 2): all a dead endpoint can tie up. */
  perEndpoint?: number;
  /** How long a delivery waits for its answer before it gives its slot back (default 1 s); it still waits until `timeoutMs`. */
  slowAfterMs?: number;
  /** Deliveries in flight at once in this process, slow ones included (default 128): the bound on open connections. */
  maxInFlight?: number;
  /** Lease on a claimed delivery, renewed every third of it (default: the worker's, `DOCWRIGHT_LEASE_SECONDS`). */
  leaseMs?: number;
  /** How often due deliveries are looked for without a wake-up (default 1 s). */
  pollMs?: number;
  /** Time limit of one POST (docs/webhooks.mdx: 15 s). */
  timeoutMs?: number;
  /** Names this dispatcher in leases and logs (default host-pid-random). */
  id?: string;
  /** Randomness of the retry jitter (tests). */
  random?: () => number;
}

const DEFAULT_TIMEOUT_MS = 15_000;
/** How long the signals that ask whether a delivery is due wait to share one read (SQLite). */
const DUE_CHECK_DELAY_MS = 5;
const DEFAULTS = { concurrency: 8, perEndpoint: 2, slowAfterMs: 1_000, maxInFlight: 128 };

export class WebhookDispatcher {
  readonly id: string;
  readonly #app: WebhookDispatcherDeps;
  readonly #log: Logger;
  readonly #limits: typeof DEFAULTS;
  readonly #leaseMs: number;
  readonly #timeoutMs: number;
  readonly #options: WebhookDispatcherOptions;
  readonly #inFlight = new Map<string, Promise<void>>();
  /** The deliveries in flight that still hold a slot (not yet waiting `slowAfterMs`). */
  readonly #holdingSlot = new Set<string>();
  readonly #timers: NodeJS.Timeout[] = [];
  readonly #shutdown = new AbortController();
  /** The due check that signals asked for, waiting for DUE_CHECK_DELAY_MS (see `#wakeIfDue`). */
  #dueCheck: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  #stopping = false;
  /** Claims due deliveries into free slots; stop() waits for its pass. */
  readonly #claims: ClaimLoop;

  constructor(app: WebhookDispatcherDeps, options: WebhookDispatcherOptions = {}) {
    this.#app = app;
    this.#options = options;
    this.#limits = {
      concurrency: options.concurrency ?? DEFAULTS.concurrency,
      perEndpoint: options.perEndpoint ?? DEFAULTS.perEndpoint,
      slowAfterMs: options.slowAfterMs ?? DEFAULTS.slowAfterMs,
      maxInFlight: options.maxInFlight ?? DEFAULTS.maxInFlight,
    };
    this.#leaseMs = options.leaseMs ?? app.config.worker.leaseMs;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.id = options.id ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}-webhooks`;
    this.#log = app.logger.child({ dispatcherId: this.id });
    this.#claims = new ClaimLoop({
      task: 'webhook claim',
      log: this.#log,
      maxBackoffMs: 30_000,
      enabled: () => !this.#stopping,
      claimOnce: () => this.#claimOnce(),
    });
  }

  /** Deliveries being sent right now. */
  get sending(): number {
    return this.#inFlight.size;
  }

  start(): void {
    const every = (ms: number, task: () => unknown) => {
      const timer = setInterval(task, ms);
      timer.unref();
      this.#timers.push(timer);
    };
    // Job changes publish a signal after they commit; that is when messages appear.
    this.#unsubscribe = this.#app.signals.subscribe((signal) => {
      if (signal.kind === 'job-event' || signal.kind === 'run-queued') this.#wakeIfDue();
    });
    every(this.#options.pollMs ?? 1_000, () => this.#claims.wake());
    every(this.#leaseMs / 3, () =>
      this.#heartbeat().catch((error) => this.#log.warn({ err: error }, 'webhook lease renewal failed')),
    );
    this.#claims.wake();
  }

  /**
   * Stops claiming, lets deliveries in flight finish for up to `graceMs` (each is bounded by
   * the POST time limit), then interrupts the rest and hands them back, due at once.
   */
  async stop(graceMs = this.#timeoutMs): Promise<void> {
    this.#stopping = true;
    this.#unsubscribe?.();
    for (const timer of this.#timers) clearInterval(timer);
    clearTimeout(this.#dueCheck);
    await this.#claims.settled();
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), graceMs);
    });
    const settled = Promise.all(this.#inFlight.values());
    if ((await Promise.race([settled, graceOver])) === 'timeout') {
      const ids = [...this.#inFlight.keys()];
      this.#shutdown.abort();
      await settled;
      await releaseDeliveries(this.#app.store.db, { owner: this.id, ids, now: this.#app.now() }).catch(
        (error) => this.#log.warn({ err: error }, 'could not hand webhook deliveries back'),
      );
    }
    clearTimeout(timer);
  }

  /**
   * A wake-up (one per job event: thousands a second while runs work) claims only when a delivery
   * is due. On SQLite a claim that finds nothing still takes the write lock, holding up the
   * requests and runs that share the database; a read does not. One read answers the signals of
   * DUE_CHECK_DELAY_MS: each was published after its commit, so the read sees what every one of
   * them announced, and a signal after the read asks for another. The poll always claims, so a
   * database that refuses writes is still noticed (and backed off from) as before.
   */
  #wakeIfDue(): void {
    if (this.#app.store.dialect !== 'sqlite') {
      this.#claims.wake();
      return;
    }
    if (this.#dueCheck || this.#stopping || this.#claims.pausing) return;
    this.#dueCheck = setTimeout(() => {
      void anyDeliveryDue(this.#app.store.db, this.#app.now(), this.#limits.perEndpoint)
        .then(
          (due) => due && this.#claims.wake(),
          () => this.#claims.wake(),
        )
        .finally(() => {
          this.#dueCheck = undefined;
        });
    }, DUE_CHECK_DELAY_MS);
  }

  /** Claims the due deliveries there is room for and starts sending them. */
  async #claimOnce(): Promise<boolean> {
    const { concurrency, perEndpoint, slowAfterMs, maxInFlight } = this.#limits;
    const room = Math.min(concurrency - this.#holdingSlot.size, maxInFlight - this.#inFlight.size);
    if (room <= 0) return false;
    const claimed = await claimDueDeliveries(this.#app.store, {
      owner: this.id,
      now: this.#app.now(),
      leaseMs: this.#leaseMs,
      limit: room,
      perEndpoint,
    });
    for (const delivery of claimed) {
      this.#holdingSlot.add(delivery.id);
      const slow = setTimeout(() => {
        this.#holdingSlot.delete(delivery.id);
        this.#claims.wake();
      }, slowAfterMs);
      slow.unref();
      const done = this.#deliver(delivery)
        .catch((error) =>
          this.#log.error({ err: error, deliveryId: delivery.id }, 'webhook delivery failed unexpectedly'),
        )
        .finally(() => {
          clearTimeout(slow);
          this.#holdingSlot.delete(delivery.id);
          this.#inFlight.delete(delivery.id);
          this.#claims.wake();
        });
      this.#inFlight.set(delivery.id, done);
    }
    return claimed.length > 0;
  }

  async #heartbeat(): Promise<void> {
    const ids = [...this.#inFlight.keys()];
    const until = new Date(this.#app.now().getTime() + this.#leaseMs);
    const held = await renewDeliveryLeases(this.#app.store.db, { owner: this.id, ids, until });
    for (const id of ids) {
      if (!held.has(id)) this.#log.warn({ deliveryId: id }, 'lost the lease on a webhook delivery in flight');
    }
  }

  async #deliver(delivery: WebhookDeliveryRow): Promise<void> {
    const log = this.#log.child({ deliveryId: delivery.id, endpointId: delivery.endpoint_id });
    const context = await deliveryContext(this.#app.store.db, delivery.id);
    if (!context) return; // the endpoint was deleted, and the delivery with it
    const attempt = Number(delivery.attempts);
    const started = this.#app.now();
    const record = (result: {
      statusCode: number | null;
      error: string | null;
      responseBody?: string | null;
      next: Parameters<typeof recordAttempt>[1]['next'];
    }) =>
      recordAttempt(this.#app.store.db, {
        deliveryId: delivery.id,
        owner: this.id,
        at: started,
        durationMs: this.#app.now().getTime() - started.getTime(),
        responseBody: null,
        ...result,
      });
    if (context.disabled) {
      await record({
        statusCode: null,
        error: 'not sent: the endpoint is disabled',
        next: { status: 'failed' },
      });
      return;
    }
    if (attempt > MAX_ATTEMPTS) {
      // Claimed again after its dispatchers kept dying mid-send: the schedule is used up.
      await record({
        statusCode: null,
        error: `gave up after ${MAX_ATTEMPTS} attempts`,
        next: { status: 'failed' },
      });
      return;
    }

    const timestamp = Math.floor(started.getTime() / 1000);
    const secret = this.#app.webhooks.openSecret(context.sealedSecret);
    let answer: WebhookAnswer | undefined;
    let error: string | null = null;
    try {
      answer = await postWebhook(
        new URL(context.url),
        context.body,
        {
          'content-type': 'application/json',
          'user-agent': `docwright-webhooks/${VERSION}`,
          'webhook-id': context.messageId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signWebhook(secret, context.messageId, timestamp, context.body),
        },
        {
          timeoutMs: this.#timeoutMs,
          allowPrivate: this.#app.config.webhooks.allowPrivate,
          signal: this.#shutdown.signal,
        },
      );
    } catch (failure) {
      error = (failure as Error).message;
    }
    if (this.#shutdown.signal.aborted) return; // handed back by stop()

    const statusCode = answer?.statusCode ?? null;
    const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
    if (answer && !ok) error = answerError(answer);
    const gone = statusCode === 410;
    const delay = ok || gone ? undefined : retryDelayMs(attempt, answer?.retryAfterMs, this.#options.random);
    const next = ok
      ? ({ status: 'succeeded' } as const)
      : delay === undefined
        ? ({ status: 'failed' } as const)
        : ({ status: 'pending', nextAttemptAt: new Date(this.#app.now().getTime() + delay) } as const);
    const recorded = await record({
      statusCode,
      error,
      responseBody: answer ? answer.body.slice(0, RESPONSE_KEPT_BYTES) : null,
      next,
    });
    if (!recorded) {
      log.warn('webhook attempt finished after its lease was lost; another dispatcher has it');
      return;
    }
    if (gone) {
      await this.#app.webhooks.disableGone(delivery.endpoint_id);
      log.warn('webhook endpoint answered 410 Gone; it is disabled');
    } else if (!ok) {
      log.info({ attempt, status: statusCode, error, next: next.status }, 'webhook delivery attempt failed');
    }
  }
}

/** Why an HTTP answer is not a success, in one line. */
function answerError(answer: WebhookAnswer): string {
  if (answer.statusCode >= 300 && answer.statusCode < 400) {
    return `HTTP ${answer.statusCode}: redirects are not followed${answer.location ? ` (to ${answer.location})` : ''}`;
  }
  if (answer.statusCode === 410) return 'HTTP 410 Gone: the endpoint is disabled';
  return `HTTP ${answer.statusCode}`;
}
