/**
 * Which database errors mean "the database cannot answer right now" (a 503 the client may retry)
 * rather than a bug, for PostgreSQL and SQLite alike: shared by the store, which retries them,
 * and the HTTP floor, which renders them.
 */
const pgUnavailableCodes = new Set([
  '57P01', // admin_shutdown (pg_terminate_backend)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up / shutting down)
  '53300', // too_many_connections
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '25006', // read_only_sql_transaction (a standby, or a role made read-only)
]);
const networkCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
]);
const sqliteUnavailable =
  /SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|PERM)|database is locked|disk I\/O error|readonly database|database or disk is full|unable to open database file/i;
/** SQLite's primary result codes for the same conditions (node:sqlite reports extended codes in `errcode`). */
const sqliteUnavailableCodes = new Set([
  3, // SQLITE_PERM
  5, // SQLITE_BUSY
  6, // SQLITE_LOCKED
  8, // SQLITE_READONLY: the file or its directory became read-only
  10, // SQLITE_IOERR
  13, // SQLITE_FULL
  14, // SQLITE_CANTOPEN
]);

/**
 * True when an error means "the database cannot answer right now" (and the
 * request may succeed later) rather than a bug: it becomes a 503, not a 500.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, errcode } = error as { code?: unknown; errcode?: unknown };
  if (typeof code === 'string') {
    if (pgUnavailableCodes.has(code) || code.startsWith('08') || networkCodes.has(code)) return true;
  }
  if (typeof errcode === 'number' && sqliteUnavailableCodes.has(errcode & 0xff)) return true;
  if (
    /Connection terminated|timeout exceeded when trying to connect|not queryable|Connection ended|Query read timeout/i.test(
      error.message,
    )
  )
    return true;
  if (sqliteUnavailable.test(error.message)) return true;
  // Aggregate errors (e.g. a connect that tried ::1 and 127.0.0.1) carry the cause inside.
  const cause = (error as { cause?: unknown }).cause;
  if (cause && cause !== error && isDatabaseUnavailable(cause)) return true;
  if (error instanceof AggregateError) return error.errors.some(isDatabaseUnavailable);
  return false;
}

/**
 * True when the database refuses writes for a reason that lasts (a read-only file or directory, a
 * standby, a read-only role), as opposed to a dropped connection or a busy lock that the next
 * attempt may not meet. Still "unavailable" (a 503), but not worth retrying at once.
 */
export function isReadOnlyDatabase(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, errcode } = error as { code?: unknown; errcode?: unknown };
  if (code === '25006' || (typeof errcode === 'number' && (errcode & 0xff) === 8)) return true;
  if (/readonly database/i.test(error.message)) return true;
  const cause = (error as { cause?: unknown }).cause;
  return cause !== undefined && cause !== error && isReadOnlyDatabase(cause);
}
