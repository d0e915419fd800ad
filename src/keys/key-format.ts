import { hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * Admin API key format (docs/api/authentication.mdx): `dwk_` + 32 random base62 characters + a
 * 6-character base62 CRC32 of the random part. The checksum lets secret
 * scanners and our own server reject typos and random strings offline,
 * without a database lookup.
 */
export const KEY_PREFIX = 'dwk_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const keyPattern = /^dwk_([0-9A-Za-z]{32})([0-9A-Za-z]{6})$/;

function toBase62(value: number, width: number): string {
  let out = '';
  let rest = value;
  while (rest > 0) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out.padStart(width, '0');
}

export function checksum(randomPart: string): string {
  return toBase62(crc32(randomPart), CHECKSUM_LENGTH);
}

/** Generates a new key. Uniform over base62: bytes ≥ 248 are discarded rather than biasing the modulo. */
export function generateKey(): string {
  let random = '';
  while (random.length < RANDOM_LENGTH) {
    for (const byte of randomBytes(48)) {
      if (byte < 248 && random.length < RANDOM_LENGTH) random += BASE62[byte % 62];
    }
  }
  return `${KEY_PREFIX}${random}${checksum(random)}`;
}

/** Whether `key` has the right shape and a correct checksum (no database involved). */
export function isWellFormedKey(key: string): boolean {
  const match = keyPattern.exec(key);
  return match !== null && checksum(match[1]!) === match[2];
}

/** The stored form of a key. */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}
