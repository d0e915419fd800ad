import pino from 'pino';
import { type App, type OpenAppOptions, openApp } from '../app.ts';
import { loadConfig } from '../config.ts';
import { createLogger } from '../logger.ts';

/** Prints one JSON document (with `--json`) or the human form of a record. */
export function print(json: boolean | undefined, value: unknown, human: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
}

/** `key: value` lines, nested objects flattened with dots; arrays joined. */
export function describe(record: Record<string, unknown>, prefix = ''): string {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    const name = prefix + key;
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      lines.push(describe(value as Record<string, unknown>, `${name}.`));
    } else {
      lines.push(`${name}: ${Array.isArray(value) ? value.join(', ') : String(value ?? '-')}`);
    }
  }
  return lines.join('\n');
}

/** A plain table with aligned columns. */
export function table(headers: string[], rows: string[][]): string {
  if (rows.length === 0) return '(none)';
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/**
 * Runs an admin command against the configured database. Logs go to stderr
 * so that stdout holds only the command's output.
 */
export async function withApp<T>(
  fn: (app: App) => Promise<T>,
  options: Omit<OpenAppOptions, 'logger'> = {},
): Promise<T> {
  const config = loadConfig();
  for (const notice of config.notices) process.stderr.write(`docwright: note: ${notice}\n`);
  const app = await openApp(config, {
    ...options,
    logger: createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, pino.destination(2)),
  });
  try {
    return await fn(app);
  } finally {
    await app.close();
  }
}
