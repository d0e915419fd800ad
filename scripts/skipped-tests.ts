// A `node --test` reporter that writes one JSON line per skipped test or suite, with its reason:
// scripts/run-tests.ts prints them after the run, so that a skip is seen in the summary rather
// than scrolled past among hundreds of passes. Tests and suites are told apart, because Node's
// own summary counts skipped tests only (a skipped suite is one of its `suites`, and the tests
// inside it are never reported).
import path from 'node:path';

interface TestEvent {
  type: string;
  data: { name?: string; file?: string; skip?: string | boolean; details?: { type?: string } };
}

/** One skipped test or suite, as a line of the reporter's output. */
export interface Skipped {
  kind: 'test' | 'suite';
  /** The file, relative to the working directory. */
  file: string;
  name: string;
  reason: string;
}

export default async function* skippedTests(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  for await (const event of source) {
    const { name, file, skip, details } = event.data;
    if (event.type !== 'test:pass' || skip === undefined || skip === false) continue;
    const skipped: Skipped = {
      kind: details?.type === 'suite' ? 'suite' : 'test',
      file: file ? path.relative(process.cwd(), file) : '?',
      name: name ?? '?',
      reason: skip === true ? '(no reason given)' : skip,
    };
    yield `${JSON.stringify(skipped)}\n`;
  }
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** The closing list of one database's run: counts as Node's summary counts them, then each skip. */
export function closingList(db: string, lines: string[]): string {
  const skipped = lines.filter(Boolean).map((line) => JSON.parse(line) as Skipped);
  if (skipped.length === 0) return `\n=== ${db}: nothing skipped ===`;
  const tests = skipped.filter((s) => s.kind === 'test').length;
  const suites = skipped.length - tests;
  const counts = [plural(tests, 'test'), ...(suites > 0 ? [`${plural(suites, 'whole suite')}`] : [])];
  return [
    `\n=== ${db}: ${counts.join(' and ')} skipped (each with why) ===`,
    ...skipped.map(
      (s) => `  SKIPPED ${s.kind === 'suite' ? 'suite ' : ''}${s.file} › ${s.name}: ${s.reason}`,
    ),
  ].join('\n');
}
