import { isDatabaseUnavailable, isReadOnlyDatabase } from '../database-errors.ts';
import { isDocwrightError } from '../errors.ts';
import { retry } from '../retry.ts';

/**
 * True for a failure that a later attempt may not meet: a dropped connection, a restart, a lock.
 * A database that refuses writes (read-only storage) is unavailable too, but not for a moment.
 */
export const isTransientDatabaseError = (error: unknown): boolean =>
  !isReadOnlyDatabase(error) &&
  (isDatabaseUnavailable(error) || (isDocwrightError(error) && error.code === 'service-unavailable'));

/**
 * Runs a database operation again while it fails for a transient reason (connection terminated,
 * administrator shutdown, serialization failure, a busy SQLite file), for up to `withinMs`
 * (default 30 s). Only for operations that are safe to repeat: conditional updates, reads.
 */
export function retryDatabase<T>(
  operation: () => Promise<T>,
  options: {
    withinMs?: number;
    onRetry?: (error: unknown, attempt: number) => void;
  } = {},
): Promise<T> {
  return retry(operation, {
    retryable: isTransientDatabaseError,
    attempts: 50,
    baseDelayMs: 100,
    maxDelayMs: 2_000,
    withinMs: options.withinMs ?? 30_000,
    onRetry: options.onRetry,
  });
}
