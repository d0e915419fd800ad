/**
 * When a `schedule` automation fires (docs/automations.mdx): a 5-field cron expression in an IANA time zone,
 * evaluated by croner, and the rule for scheduled times that passed while no process was looking.
 *
 * Nothing here reads the clock: every function takes the time it is asked about, so that the
 * service passes its clock's `now` and tests pass any instant they like.
 *
 * Daylight saving time, as croner defines it: a job at one fixed time of day (`30 2 * * *`)
 * whose time falls in the hour that spring skips runs at the first time after it (03:00), and
 * runs once in the hour that autumn repeats; a job with a wildcard or a step in its minute or
 * hour (`*\/30 * * * *`) skips the missing times and runs at both occurrences of a repeated one,
 * which are different instants. A day-of-month and a day-of-week both given match either (as in
 * Vixie cron).
 *
 * The missed-schedule rule (`dueFiring`): the service keeps the latest scheduled time it has
 * handled (fired or skipped). At any check, of the scheduled times after that one and not after
 * now, only the latest counts: under an hour old it fires, older it is skipped as `missed`; the
 * earlier ones are passed over with it, so a long downtime gives one run, not one per missed
 * time. A time at or before the one handled never fires again, whichever way the clock jumps.
 */
import { Cron } from 'croner';

export const DEFAULT_TIME_ZONE = 'UTC';

/** How old the latest missed scheduled time may be and still fire: an hour (docs/automations.mdx). */
export const MISSED_WINDOW_MS = 60 * 60 * 1000;

/** Longest cron expression and time zone name accepted. */
export const MAX_CRON_LENGTH = 200;
export const MAX_TIME_ZONE_LENGTH = 100;

/** A cron expression or time zone that cannot be used, with the field at fault. */
export class ScheduleError extends Error {
  readonly field: 'cron' | 'timeZone';
  constructor(field: 'cron' | 'timeZone', message: string) {
    super(message);
    this.name = 'ScheduleError';
    this.field = field;
  }
}

/** A validated schedule: make one with `parseSchedule`. */
export interface Schedule {
  readonly cron: string;
  readonly timeZone: string;
  readonly job: Cron;
}

/**
 * `cron` (minute hour day-of-month month day-of-week; names such as `MON` and `JAN`, lists,
 * ranges, steps, and croner's `L`, `W` and `#`) in `timeZone`, or a ScheduleError saying what
 * is wrong: not 5 fields, a value out of range, a date that never comes (`0 0 30 2 *`), or a
 * time zone that is not an IANA name.
 */
export function parseSchedule(cron: string, timeZone: string = DEFAULT_TIME_ZONE): Schedule {
  const zone = checkTimeZone(timeZone);
  const expression = cron.trim();
  if (expression.length > MAX_CRON_LENGTH) {
    throw new ScheduleError('cron', `must be at most ${MAX_CRON_LENGTH} characters`);
  }
  const fields = expression === '' ? 0 : expression.split(/\s+/).length;
  if (fields !== 5) {
    throw new ScheduleError(
      'cron',
      `must have 5 fields (minute hour day-of-month month day-of-week), such as "0 9 * * 1"; it has ${fields}`,
    );
  }
  let job: Cron;
  try {
    job = new Cron(expression, { timezone: zone, mode: '5-part', paused: true });
  } catch (error) {
    const reason = (error as Error).message.replace(/^CronPattern: /, '');
    throw new ScheduleError('cron', `is not a valid cron expression: ${reason}`);
  }
  // Which dates match does not depend on the year (5 fields have none): one search settles it.
  if (job.nextRun(NEVER_REFERENCE) === null) {
    throw new ScheduleError('cron', 'never fires: no date matches it');
  }
  return { cron: expression, timeZone: zone, job };
}

const NEVER_REFERENCE = new Date('2000-01-01T00:00:00Z');

/** The problem with a cron expression and time zone, or null when they make a schedule. */
export function scheduleProblem(cron: string, timeZone?: string): ScheduleError | null {
  try {
    parseSchedule(cron, timeZone);
    return null;
  } catch (error) {
    if (error instanceof ScheduleError) return error;
    throw error;
  }
}

function checkTimeZone(timeZone: string): string {
  const zone = timeZone.trim();
  // IANA names only: Intl also takes offsets such as "+01:00", which have no daylight saving.
  if (zone.length > MAX_TIME_ZONE_LENGTH || !/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(zone)) {
    throw new ScheduleError('timeZone', 'must be an IANA time zone such as Europe/Berlin or UTC');
  }
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    throw new ScheduleError('timeZone', `is not a known time zone (such as Europe/Berlin or UTC): ${zone}`);
  }
  return zone;
}

/** The first scheduled time strictly after `after`, or null when there is none (there always is, in practice). */
export function nextFireTime(schedule: Schedule, after: Date): Date | null {
  return schedule.job.nextRun(after);
}

/** The latest scheduled time that is after `after` and not after `now`, or null when there is none. */
export function latestScheduledTime(schedule: Schedule, now: Date, after: Date): Date | null {
  // croner's previous runs are those strictly before the reference: one millisecond on includes `now`.
  const [latest] = schedule.job.previousRuns(1, new Date(now.getTime() + 1));
  return latest !== undefined && latest.getTime() > after.getTime() ? latest : null;
}

export type ScheduleDecision =
  /** Nothing is due: check again at `next`. */
  | { action: 'wait'; next: Date | null }
  /** Fire for `scheduledFor` (record it as handled), then check again at `next`. */
  | { action: 'fire'; scheduledFor: Date; next: Date | null }
  /** Record a `skipped` run with reason `missed` for `scheduledFor` (handled), then check at `next`. */
  | { action: 'skip'; reason: 'missed'; scheduledFor: Date; next: Date | null };

export interface DueFiringInput {
  /** The time of the check (the service's clock). */
  now: Date;
  /**
   * The latest scheduled time already handled (fired or skipped); for an automation that never
   * fired, the time it was created or enabled, so that earlier times never fire.
   */
  handledThrough: Date;
  /** How old the latest due time may be and still fire (default `MISSED_WINDOW_MS`). */
  windowMs?: number;
}

/**
 * What to do at a check: fire the latest due scheduled time, skip it as missed, or wait. The
 * caller records the run for `scheduledFor` and stores it as `handledThrough`; the run's key
 * (dedupe.ts) makes a second process or a second check that decided the same do nothing.
 */
export function dueFiring(schedule: Schedule, input: DueFiringInput): ScheduleDecision {
  const { now, handledThrough } = input;
  const windowMs = input.windowMs ?? MISSED_WINDOW_MS;
  const next = nextFireTime(schedule, now.getTime() > handledThrough.getTime() ? now : handledThrough);
  const due = latestScheduledTime(schedule, now, handledThrough);
  if (due === null) return { action: 'wait', next };
  if (now.getTime() - due.getTime() < windowMs) return { action: 'fire', scheduledFor: due, next };
  return { action: 'skip', reason: 'missed', scheduledFor: due, next };
}
