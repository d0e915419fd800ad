import { readFileSync } from 'node:fs';
import { InvalidArgumentError } from 'commander';

/** Option-value parsers: a bad value stops the command with a message naming the option. */
export function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a whole number ≥ 1');
  return Number(value);
}

export function port(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535)
    throw new InvalidArgumentError('must be a port number 0–65535');
  return Number(value);
}

/** Comma-separated or repeated: `--labels a,b --labels c` → [a, b, c]. */
export function list(value: string, previous: string[] = []): string[] {
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) throw new InvalidArgumentError('must not be empty');
  return [...previous, ...items];
}

export function fileContents(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new InvalidArgumentError(
      `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
}

let stdinTaken = false;

/** `fileContents`, where `-` reads standard input (which one option of a command at most may do). */
export function secretFile(path: string): string {
  if (path !== '-') return fileContents(path);
  if (stdinTaken) throw new InvalidArgumentError('only one option can read standard input (-)');
  stdinTaken = true;
  try {
    return readFileSync(0, 'utf8');
  } catch (error) {
    throw new InvalidArgumentError(
      `cannot read standard input: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
}

/** Longest accepted duration: beyond it `Date` overflows, and a key that outlives us needs no expiry. */
const MAX_DURATION_DAYS = 36_500;

/** `90d`, `12h`, `30m` → milliseconds; at least one minute, so that `0d` cannot mean "never expires". */
export function duration(value: string): number {
  const match = /^(\d+)([dhm])$/.exec(value);
  if (!match) throw new InvalidArgumentError('must be a duration such as 90d, 12h or 30m');
  const unit = { d: 86_400_000, h: 3_600_000, m: 60_000 }[match[2] as 'd' | 'h' | 'm'];
  const ms = Number(match[1]) * unit;
  if (ms < 60_000 || ms > MAX_DURATION_DAYS * 86_400_000) {
    throw new InvalidArgumentError(`must be between 1m and ${MAX_DURATION_DAYS}d`);
  }
  return ms;
}

/**
 * `2027-01-31` (midnight UTC) or `2027-01-31T12:00[:00[.000]]` with `Z` or an
 * offset. A time needs its zone: local time would silently depend on the
 * TZ of whichever machine runs the command. `Date` itself would accept
 * `2027-02-30` as 2 March, so the calendar fields are checked here.
 */
const isoPattern =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

export function isoDate(value: string): Date {
  const match = isoPattern.exec(value);
  const date = new Date(value);
  if (match && !Number.isNaN(date.getTime())) {
    const [year, month, day, hour, minute, second] = match.slice(1).map((f) => Number(f ?? 0)) as number[];
    const calendar = new Date(Date.UTC(year!, month! - 1, day!));
    const validCalendar = calendar.getUTCMonth() === month! - 1 && calendar.getUTCDate() === day;
    if (validCalendar && hour! < 24 && minute! < 60 && second! < 60) return date;
  }
  throw new InvalidArgumentError(
    'must be an ISO 8601 date such as 2027-01-31 or 2027-01-31T12:00:00Z (a time needs Z or an offset)',
  );
}

/** A code change as `job create|message --change` takes it, repeatable. */
export type ChangeFlag =
  | { repository: string; pullRequest: number }
  | { repository: string; commit: string }
  | { repository: string; range: string };

/**
 * `api#42` (a pull/merge request), `api@1a2b3c4` (a commit), `api@v1.0..main` (a range), where
 * `api` is a context repository's name or `docs`: `--change api#42 --change docs@1a2b3c4`.
 */
export function change(value: string, previous: ChangeFlag[] = []): ChangeFlag[] {
  const pull = /^([^#@\s]+)#(\d+)$/.exec(value);
  if (pull) return [...previous, { repository: pull[1]!, pullRequest: Number(pull[2]) }];
  const at = /^([^#@\s]+)@(\S+)$/.exec(value);
  if (at) {
    const target = at[2]!;
    return [
      ...previous,
      target.includes('..') ? { repository: at[1]!, range: target } : { repository: at[1]!, commit: target },
    ];
  }
  throw new InvalidArgumentError(
    'must be NAME#NUMBER (a pull request), NAME@SHA (a commit) or NAME@BASE..HEAD (a range), NAME a context repository or docs',
  );
}
