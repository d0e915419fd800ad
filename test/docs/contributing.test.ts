// CONTRIBUTING.md, the contributors' map, stays true to the repository: every link and every
// repository path it names exists, and its picture of the floors of src/ names every folder and
// file of src/ (so that a new or renamed folder shows up on the map as it does in
// test/imports.test.ts). The README links to it.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** Where a repository path starts: what a path in backticks must begin with to be checked. */
const TOP = /^(src|test|docs|scripts|bench|bin|\.ci)\//;
/** Placeholders of a path to create (`NNNN-name.ts`, `NAME-events.ts`) or a pattern: not checked. */
const PLACEHOLDER = /NNNN|NAME|[<>*…]/;

/** GitHub's heading anchors of a Markdown text (outside code blocks). */
function anchorsOf(text: string): Set<string> {
  const out = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const match = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (match)
      out.add(
        match[1]!
          .toLowerCase()
          .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
          .replace(/ /g, '-'),
      );
  }
  return out;
}

/** What in `text` (CONTRIBUTING.md's) names nothing in the repository: links, paths, the floors. */
function mapProblems(text: string, srcEntries: string[]): string[] {
  const problems: string[] = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^(https?|mailto):/.test(target!)) continue;
    const [file = '', anchor] = target!.split('#');
    if (!existsSync(path.join(ROOT, file))) problems.push(`the link ${target} names no file`);
    else if (anchor && !anchorsOf(read(file)).has(anchor))
      problems.push(`the link ${target} names no heading of ${file}`);
  }
  for (const [, code] of text.matchAll(/`([^`\n]+)`/g)) {
    // `src/jobs/create-postgres.ts`, also within a longer span: `node --test test/x.test.ts`.
    for (const word of code!.split(/\s+/)) {
      const candidate = word.replace(/[,;:]$/, '');
      if (!TOP.test(candidate) || PLACEHOLDER.test(candidate)) continue;
      if (!existsSync(path.join(ROOT, candidate))) problems.push(`${candidate} does not exist`);
    }
  }
  const floors = /## The floors of src\/[\s\S]*?```\n([\s\S]*?)```/.exec(text)?.[1] ?? '';
  if (floors === '') problems.push('no picture of the floors of src/');
  for (const entry of srcEntries) {
    const name = entry.endsWith('/') ? entry : entry.replace(/\.ts$/, '');
    const escaped = name.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
    if (!new RegExp(`(?<![\\w-])${escaped}(?![\\w-])`).test(floors))
      problems.push(`src/${entry} is not on the floors picture`);
  }
  return problems;
}

/** The folders (`jobs/`) and TypeScript files (`app.ts`) of src/ itself. */
const srcEntries = () =>
  readdirSync(path.join(ROOT, 'src'), { withFileTypes: true })
    .filter((e) => e.isDirectory() || e.name.endsWith('.ts'))
    .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
    .sort();

describe('CONTRIBUTING.md', () => {
  const text = read('CONTRIBUTING.md');

  test('every link and repository path it names exists, and the floors picture names all of src/', () => {
    const entries = srcEntries();
    assert.ok(entries.includes('jobs/') && entries.includes('app.ts'), 'src/ was read');
    assert.ok([...text.matchAll(/`src\//g)].length > 40, 'the paths of the file were found');
    assert.deepEqual(mapProblems(text, entries), []);
  });

  test('a dead link, a path that is gone and a folder missing from the floors are each reported', () => {
    const broken = `${text
      .replace('`src/jobs/create-postgres.ts`', '`src/jobs/create-on-postgres.ts`')
      .replace('(README.md#two-commands)', '(README.md#three-commands)')}\n[gone](NOWHERE.md)\n`;
    const problems = mapProblems(broken, [...srcEntries(), 'queue/']).join('\n');
    assert.match(problems, /src\/jobs\/create-on-postgres\.ts does not exist/);
    assert.match(problems, /the link README\.md#three-commands names no heading of README\.md/);
    assert.match(problems, /the link NOWHERE\.md names no file/);
    assert.match(problems, /src\/queue\/ is not on the floors picture/);
  });

  test('the README links to it from its Development section', () => {
    const development = /## Development\n([\s\S]*?)(\n## |$)/.exec(read('README.md'))?.[1] ?? '';
    assert.match(development, /\[CONTRIBUTING\.md\]\(CONTRIBUTING\.md\)/);
  });
});
