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

/**
 * The floors of src/, from the bottom up, and what each may import besides itself. A folder is
 * named `src/<folder>/`; a file of src/ itself by its name. Everything of src/ is placed: a new
 * folder must be given its floor here.
 *
 * - base: the shared vocabulary (errors, ids, logging, redaction, retry, validation…);
 * - store: the database (SQL, migrations, signals); agent: the model loop, no HTTP, DB or git;
 *   git: checkouts and code hosts, knowing nothing of projects or jobs; config.ts;
 * - services own their SQL: projects, keys, operators, servers, jobs, webhooks, automations,
 *   conversations;
 * - app.ts: the composition of the services one process shares (and metrics.ts);
 * - work: worker/, the background loops of a process (job runs, webhook sends, automations);
 * - http: the floor the surfaces share (problems, auth, event streams, request logs);
 * - surfaces, peers that call services, never the store: api (v2), compat (v1), dashboard, hooks;
 * - server.ts: the composition root, one server of every surface (and openapi.ts, their description);
 * - edges: the CLI, eval, the typed client, the MCP server, the GitHub Action, the index.
 */
const BASE = [
  'errors.ts',
  'ids.ts',
  'logger.ts',
  'redact.ts',
  'retry.ts',
  'validation.ts',
  'version.ts',
  'web-link.ts',
  'glob.ts',
  'environment-secrets.ts',
  'public-address.ts',
  'ref-name.ts',
  'database-errors.ts',
];
const SERVICES = [
  'projects',
  'keys',
  'operators',
  'servers',
  'jobs',
  'webhooks',
  'automations',
  'conversations',
];
const SURFACES = ['api', 'compat', 'dashboard', 'hooks'];
/** What every service may import: the base, the configuration, the store and git. */
const BELOW_SERVICES = [...BASE, 'config.ts', 'store', 'git'];
const ALLOWED: Record<string, string[]> = {
  ...Object.fromEntries(BASE.map((file) => [file, BASE])),
  store: [...BASE],
  agent: [...BASE],
  git: [...BASE],
  'config.ts': [...BASE, 'agent'],
  projects: [...BELOW_SERVICES, 'keys'],
  keys: BELOW_SERVICES,
  operators: BELOW_SERVICES,
  servers: BELOW_SERVICES,
  jobs: [...BELOW_SERVICES, 'projects', 'keys'],
  webhooks: [...BELOW_SERVICES, 'projects', 'jobs'],
  automations: [...BELOW_SERVICES, 'projects', 'jobs'],
  // Pull request comments (and Slack): follow-ups on jobs, read from the hooks automations store.
  conversations: [...BELOW_SERVICES, 'projects', 'jobs', 'automations'],
  'metrics.ts': BELOW_SERVICES,
  'app.ts': [...BELOW_SERVICES, ...SERVICES, 'metrics.ts'],
  // The background work of a process (job runs, webhook sends, automation passes) takes the App.
  worker: [...BELOW_SERVICES, 'agent', ...SERVICES, 'app.ts'],
  // The HTTP floor every surface shares: problem rendering, auth, event streams, request logs.
  http: [...BASE, 'config.ts', ...SERVICES, 'metrics.ts', 'app.ts'],
  api: [...BASE, 'config.ts', ...SERVICES, 'metrics.ts', 'app.ts', 'http'],
  compat: [...BASE, 'config.ts', ...SERVICES, 'app.ts', 'http'],
  dashboard: [...BASE, 'config.ts', ...SERVICES, 'app.ts', 'http'],
  hooks: [...BASE, 'config.ts', ...SERVICES, 'app.ts', 'http'],
  // The composition root: one server of every surface, and the description of them all.
  'server.ts': [...BASE, 'config.ts', ...SERVICES, 'app.ts', 'http', ...SURFACES, 'openapi.ts'],
  'openapi.ts': [...BASE, ...SERVICES, 'http', ...SURFACES, 'openapi-automations.ts'],
  'openapi-automations.ts': [...BASE, ...SERVICES, 'http', ...SURFACES, 'openapi.ts'],
  // Edges: eval runs the pipeline and renders its report with the dashboard's pieces.
  eval: [...BELOW_SERVICES, 'agent', ...SERVICES, 'worker', 'app.ts', 'dashboard'],
  client: [...BASE, 'http', 'api', 'jobs', 'automations'],
  mcp: [...BASE, 'client', 'jobs'],
  action: [...BASE, 'client'],
  cli: ['*'],
  'index.ts': [...BASE, 'client'],
};

/** `src/<folder>/…` → `<folder>`; `src/<file>.ts` → `<file>.ts`. */
const placeOf = (file: string) => /^src\/([^/]+)\//.exec(file)?.[1] ?? file.slice('src/'.length);

test('every import of src/ stays on its floor or goes down (surfaces never reach the store)', async () => {
  const graph = await importGraph();
  const unplaced = new Set<string>();
  const violations: string[] = [];
  for (const [file, imports] of graph) {
    if (!file.startsWith('src/')) continue;
    const from = placeOf(file);
    const allowed = ALLOWED[from];
    if (!allowed) {
      unplaced.add(from);
      continue;
    }
    for (const target of imports) {
      const to = placeOf(target);
      if (to === from || allowed.includes('*') || allowed.includes(to)) continue;
      violations.push(`${file} → ${target}`);
    }
  }
  assert.deepEqual([...unplaced], [], 'every folder and file of src/ has a floor in ALLOWED');
  assert.deepEqual(violations.sort(), [], 'imports against the grain');
});
