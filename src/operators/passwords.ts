import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import { DocwrightError } from '../errors.ts';

/**
 * Operator password hashes (SPEC §10: scrypt), stored as
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

function derive(password: string, salt: Buffer, params: ScryptParams, length: number): Promise<Buffer> {
  const options: ScryptOptions = {
    N: params.N,
    r: params.r,
    p: params.p,
    // Node refuses more than 32 MiB by default; scrypt needs 128·N·r bytes.
    maxmem: 128 * params.N * params.r + 1024 * 1024,
  };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, length, options, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
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
