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

/** `90d`, `12h`, `30m` → milliseconds. */
export function duration(value: string): number {
  const match = /^(\d+)([dhm])$/.exec(value);
  if (!match) throw new InvalidArgumentError('must be a duration such as 90d, 12h or 30m');
  const unit = { d: 86_400_000, h: 3_600_000, m: 60_000 }[match[2] as 'd' | 'h' | 'm'];
  return Number(match[1]) * unit;
}

export function isoDate(value: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(value)) {
    throw new InvalidArgumentError('must be an ISO 8601 date such as 2027-01-31 or 2027-01-31T12:00:00Z');
  }
  return date;
}
