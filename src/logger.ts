import pino, { type Logger } from 'pino';
import { processSecrets } from './redact.ts';

export type { Logger };

/**
 * Paths pino blanks out wherever they appear in a logged object. Secrets are
 * kept out of log calls in the first place; this is the second line, and the
 * finished line is scrubbed of every secret the process holds as the third.
 */
const REDACT = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  '*.authorization',
  'token',
  '*.token',
  'key',
  '*.key',
  'apiKey',
  '*.apiKey',
  'secrets',
  '*.secrets',
  'githubPrivateKey',
  '*.githubPrivateKey',
  'password',
  '*.password',
];

/** JSON lines on stdout (or the given stream), one per event. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT, censor: '[redacted]' },
      base: { service: 'docwright' },
      hooks: { streamWrite: processSecrets.redact },
    },
    destination,
  );
}
