/**
 * The thread scrypt runs on (src/operators/passwords.ts starts it). Each hash takes 128 MiB
 * and a few hundred milliseconds of CPU; on libuv's shared pool a burst of sign-ins would
 * hold up file reads, DNS lookups and every other operation that uses it. Here they queue
 * on one thread of their own.
 */
import { scryptSync } from 'node:crypto';
import { parentPort } from 'node:worker_threads';

export interface ScryptRequest {
  id: number;
  password: string;
  salt: Uint8Array;
  length: number;
  N: number;
  r: number;
  p: number;
}

export type ScryptAnswer = { id: number; key: Uint8Array } | { id: number; error: string };

parentPort!.on('message', (request: ScryptRequest) => {
  try {
    const key = scryptSync(request.password, request.salt, request.length, {
      N: request.N,
      r: request.r,
      p: request.p,
      // Node refuses more than 32 MiB by default; scrypt needs 128·N·r bytes.
      maxmem: 128 * request.N * request.r + 1024 * 1024,
    });
    parentPort!.postMessage({ id: request.id, key } satisfies ScryptAnswer);
  } catch (error) {
    parentPort!.postMessage({ id: request.id, error: (error as Error).message } satisfies ScryptAnswer);
  }
});
