// A `node --test` reporter that writes one line per skipped test or suite, with its reason:
// scripts/run-tests.ts prints them after the run, so that a skip is seen in the summary rather
// than scrolled past among hundreds of passes.
import path from 'node:path';

interface TestEvent {
  type: string;
  data: { name?: string; file?: string; skip?: string | boolean };
}

export default async function* skippedTests(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  for await (const event of source) {
    const { name, file, skip } = event.data;
    if (event.type !== 'test:pass' || skip === undefined || skip === false) continue;
    const where = file ? path.relative(process.cwd(), file) : '?';
    yield `${where} › ${name}: ${skip === true ? '(no reason given)' : skip}\n`;
  }
}
