import { randomBytes, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { DocwrightError } from '../errors.ts';
import type { ScryptAnswer, ScryptRequest } from './scrypt-thread.ts';

/**
 * Operator password hashes (docs/dashboard.mdx: scrypt), stored as
 * `scrypt$N=131072,r=8,p=1$<salt>$<hash>` (salt and hash in unpadded base64url). The
 * parameters travel with each hash, so that raising them later leaves older hashes
 * verifiable; a hash whose parameters are not the current ones is re-hashed at the next
 * successful sign-in (`needsRehash`).
 */

export interface ScryptParams {
  /** CPU/memory cost, a power of two. */
  N: number;
  /** Block size. */
  r: number;
  /** Parallelisation. */
  p: number;
}

/** OWASP's recommendation for scrypt: 2^17, 8, 1 (128 MiB and a few hundred milliseconds per hash). */
export const CURRENT_PARAMS: Readonly<ScryptParams> = Object.freeze({ N: 2 ** 17, r: 8, p: 1 });

const SALT_BYTES = 16;
const KEY_BYTES = 32;

/**
 * Bounds on parameters read back from the database: a stored hash is trusted data, but a
 * corrupt or hand-edited one must not be able to make one sign-in allocate gigabytes.
 */
const MAX_N = 2 ** 20;
const MAX_R = 32;
const MAX_P = 16;

const hashPattern = /^scrypt\$N=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9_-]{16,})\$([A-Za-z0-9_-]{32,})$/;

export interface ParsedHash {
  params: ScryptParams;
  salt: Buffer;
  hash: Buffer;
}

const unsupported = (why: string) =>
  new DocwrightError('internal-error', `unsupported password hash in the database: ${why}`);

/** Reads a stored hash; throws `internal-error` naming what is wrong with one we cannot verify. */
export function parseHash(stored: string): ParsedHash {
  const algorithm = stored.split('$', 1)[0];
  if (algorithm !== 'scrypt') {
    throw unsupported(`algorithm ${JSON.stringify(algorithm?.slice(0, 20))} (only scrypt is known)`);
  }
  const match = hashPattern.exec(stored);
  if (!match) throw unsupported('expected scrypt$N=…,r=…,p=…$salt$hash');
  const [N, r, p] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (N < 2 || N > MAX_N || (N & (N - 1)) !== 0)
    throw unsupported(`N=${match[1]} (a power of two up to 2^20)`);
  if (r < 1 || r > MAX_R) throw unsupported(`r=${match[2]} (1 to ${MAX_R})`);
  if (p < 1 || p > MAX_P) throw unsupported(`p=${match[3]} (1 to ${MAX_P})`);
  return {
    params: { N, r, p },
    salt: Buffer.from(match[4]!, 'base64url'),
    hash: Buffer.from(match[5]!, 'base64url'),
  };
}

/** Hashes waiting for the scrypt thread at most; more get 503 instead of an ever longer queue. */
const MAX_QUEUED = 32;

/** The one thread scrypt runs on (see scrypt-thread.ts), started on first use. */
class ScryptThread {
  #worker: Worker | undefined;
  readonly #pending = new Map<number, { resolve: (key: Buffer) => void; reject: (error: Error) => void }>();
  #nextId = 0;

  derive(password: string, salt: Buffer, params: ScryptParams, length: number): Promise<Buffer> {
    if (this.#pending.size >= MAX_QUEUED) {
      return Promise.reject(
        new DocwrightError('service-unavailable', 'too many password checks at once; try again in a moment', {
          retryAfter: 2,
        }),
      );
    }
    const worker = this.#start();
    const id = ++this.#nextId;
    const request: ScryptRequest = { id, password, salt, length, ...params };
    return new Promise<Buffer>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      // Busy, the thread keeps the process alive (a CLI command waits for its hash); idle, it does not.
      worker.ref();
      worker.postMessage(request);
    });
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const here = fileURLToPath(import.meta.url);
    const worker = new Worker(
      fileURLToPath(new URL(`./scrypt-thread${path.extname(here)}`, import.meta.url)),
    );
    worker.on('message', (answer: ScryptAnswer) => {
      const waiting = this.#pending.get(answer.id);
      this.#pending.delete(answer.id);
      if (this.#pending.size === 0) worker.unref();
      if (!waiting) return;
      if ('key' in answer) waiting.resolve(Buffer.from(answer.key));
      else waiting.reject(new Error(answer.error));
    });
    worker.on('error', (error) => this.#fail(error));
    worker.on('exit', () => this.#fail(new Error('the scrypt thread stopped')));
    worker.unref();
    this.#worker = worker;
    return worker;
  }

  #fail(error: Error): void {
    this.#worker = undefined;
    for (const waiting of this.#pending.values()) waiting.reject(error);
    this.#pending.clear();
  }
}

const scryptThread = new ScryptThread();

function derive(password: string, salt: Buffer, params: ScryptParams, length: number): Promise<Buffer> {
  return scryptThread.derive(password.normalize('NFKC'), salt, params, length);
}

/** A new hash of `password` with a fresh random salt. */
export async function hashPassword(password: string, params: ScryptParams = CURRENT_PARAMS): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, params, KEY_BYTES);
  return `scrypt$N=${params.N},r=${params.r},p=${params.p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

/** Whether `password` matches `stored`, compared in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  const candidate = await derive(password, parsed.salt, parsed.params, parsed.hash.length);
  return timingSafeEqual(candidate, parsed.hash);
}

/** True when `stored` was made with other parameters than the current ones. */
export function needsRehash(stored: string, params: ScryptParams = CURRENT_PARAMS): boolean {
  const current = parseHash(stored).params;
  return current.N !== params.N || current.r !== params.r || current.p !== params.p;
}

/** Longest accepted password: scrypt takes any length, but nobody types a megabyte. */
export const PASSWORD_MAX_CHARS = 1024;
export const PASSWORD_MIN_CHARS = 12;

/** The password policy; undefined when `password` is acceptable, else why not. */
export function passwordProblem(password: string): string | undefined {
  // Characters as people count them (code points), not UTF-16 units.
  const length = [...password.normalize('NFKC')].length;
  if (length < PASSWORD_MIN_CHARS)
    return `must be at least ${PASSWORD_MIN_CHARS} characters (it has ${length})`;
  if (length > PASSWORD_MAX_CHARS) return `must be at most ${PASSWORD_MAX_CHARS} characters`;
  if (password.trim() === '') return 'must not be only whitespace';
  return undefined;
}
