// The shape of src/'s imports: no file imports itself through others (a cycle), and the lower
// layers do not reach up: the agent knows nothing of HTTP, the database or git (it runs in a
// process of its own), git and its code hosts know nothing of projects, jobs or the database.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { parseCircular, parseDependencyTree } from 'dpdm';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Every file of src/ and what it imports from src/, type-only imports included. */
async function importGraph(): Promise<Map<string, string[]>> {
  const tree = await parseDependencyTree('src/**/*.ts', {
    context: ROOT,
    cwd: ROOT,
    transform: false,
    skipDynamicImports: false,
  });
  const graph = new Map<string, string[]>();
  for (const [file, dependencies] of Object.entries(tree)) {
    graph.set(
      file,
      (dependencies ?? []).flatMap((d) => (d.id?.startsWith('src/') ? [d.id] : [])),
    );
  }
  return graph;
}

test('no circular imports in src/, type-only ones included', async () => {
  const tree = await parseDependencyTree('src/**/*.ts', {
    context: ROOT,
    cwd: ROOT,
    transform: false,
    skipDynamicImports: false,
  });
  assert.ok(Object.keys(tree).length > 100, 'the whole of src/ was read');
  assert.deepEqual(
    parseCircular(tree).map((cycle) => cycle.join(' → ')),
    [],
  );
});

test('types are imported by import statements, which the cycle check sees (not by import("…") in a type)', () => {
  const offenders: string[] = [];
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(file);
      else if (entry.name.endsWith('.ts') && /:\s*import\(['"]/.test(readFileSync(file, 'utf8')))
        offenders.push(path.relative(ROOT, file));
    }
  };
  visit(path.join(ROOT, 'src'));
  assert.deepEqual(offenders, []);
});

/** For each folder of src/, the folders and files of src/ it must not import. */
const FORBIDDEN: Record<string, RegExp> = {
  'src/agent/':
    /^src\/(api|cli|compat|dashboard|git|jobs|keys|mcp|operators|projects|store|webhooks|worker)\/|^src\/(app|config)\.ts$/,
  'src/git/':
    /^src\/(api|cli|compat|dashboard|jobs|keys|mcp|operators|projects|store|webhooks|worker)\/|^src\/(app|config)\.ts$/,
  'src/store/':
    /^src\/(api|cli|compat|dashboard|jobs|keys|mcp|operators|projects|webhooks|worker|agent|git)\//,
};

test('the lower layers do not import the upper ones', async () => {
  const graph = await importGraph();
  const violations: string[] = [];
  for (const [file, imports] of graph) {
    for (const [folder, forbidden] of Object.entries(FORBIDDEN)) {
      if (!file.startsWith(folder)) continue;
      for (const target of imports) if (forbidden.test(target)) violations.push(`${file} → ${target}`);
    }
  }
  assert.deepEqual(violations, []);
});
