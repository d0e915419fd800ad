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
 * - services own their SQL: projects, keys, operators, processes, jobs, webhooks, automations,
 *   conversations;
 * - app.ts: the composition of the services one process shares (and metrics.ts);
 * - work: pipeline/, one run's stages; worker/, the background loops of a process (scheduling
 *   runs, webhook sends, automations);
 * - http: the floor the surfaces share (problems, auth, event streams, request logs);
 * - surfaces, peers that call services, never the store: api (v2), compat (v1), dashboard, inbound-hooks, slack;
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
  'repository-names.ts',
];
const SERVICES = [
  'projects',
  'keys',
  'operators',
  'processes',
  'jobs',
  'webhooks',
  'automations',
  'conversations',
];
const SURFACES = ['api', 'compat', 'dashboard', 'inbound-hooks', 'slack'];
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
  processes: BELOW_SERVICES,
  jobs: [...BELOW_SERVICES, 'projects', 'keys'],
  webhooks: [...BELOW_SERVICES, 'projects', 'jobs'],
  automations: [...BELOW_SERVICES, 'projects', 'jobs'],
  // Where the team talks (SPEC §20): pull request comments and Slack start jobs and follow-ups
  // on projects; comments are read from the deliveries the automations' hook store keeps.
  conversations: [...BELOW_SERVICES, 'projects', 'jobs', 'automations'],
  // Metrics read their gauges from the jobs service (src/jobs/job-counts.ts).
  'metrics.ts': [...BELOW_SERVICES, 'jobs'],
  'app.ts': [...BELOW_SERVICES, ...SERVICES, 'metrics.ts'],
  // A run's pipeline (resolve → checkout → agent → verify → publish) takes the App and the agent.
  pipeline: [...BELOW_SERVICES, 'agent', ...SERVICES, 'app.ts'],
  // The background work of a process (scheduling runs, webhook sends, automation passes) takes the App.
  worker: [...BELOW_SERVICES, ...SERVICES, 'app.ts', 'pipeline'],
  // The HTTP floor every surface shares: problem rendering, auth, event streams, request logs.
  http: [...BASE, 'config.ts', ...SERVICES, 'metrics.ts', 'app.ts'],
  api: [...BASE, 'config.ts', ...SERVICES, 'metrics.ts', 'app.ts', 'http'],
  compat: [...BASE, 'config.ts', ...SERVICES, 'app.ts', 'http'],
  dashboard: [...BASE, 'config.ts', ...SERVICES, 'app.ts', 'http'],
  'inbound-hooks': [...BASE, 'config.ts', ...SERVICES, 'app.ts', 'http'],
  // Slack's requests in (events, slash commands): verified, stored, answered; services do the rest.
  slack: [...BASE, 'config.ts', ...SERVICES, 'app.ts', 'http'],
  // The composition root: one server of every surface, and the description of them all.
  'server.ts': [...BASE, 'config.ts', ...SERVICES, 'app.ts', 'http', ...SURFACES, 'openapi.ts'],
  'openapi.ts': [...BASE, ...SERVICES, 'http', ...SURFACES],
  // Edges: eval runs the pipeline and renders its report with the dashboard's pieces.
  eval: [...BELOW_SERVICES, 'agent', ...SERVICES, 'pipeline', 'worker', 'app.ts', 'dashboard'],
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

/**
 * Services own their SQL: a Kysely query builder started on a database or transaction, a `sql`
 * template, a raw or compiled query, run outside the store and the service folders is SQL in the
 * wrong place (worker/ schedules and runs; metrics, the CLI and the surfaces ask a service).
 */
const SQL_HOMES = ['store', ...SERVICES];
const SQL_PATTERNS: [string, RegExp][] = [
  [
    'a query builder',
    /\.(selectFrom|updateTable|insertInto|deleteFrom|replaceInto|mergeInto|selectNoFrom)\s*\(/,
  ],
  ['a sql template', /\bsql\s*(<[^`;]*>)?\s*`/],
  ['a sql helper', /\bsql\.(raw|ref|id|lit|table|join|val)\s*\(/],
  ['a raw query', /\b(executeQuery|CompiledQuery\.raw)\s*\(/],
];

/** The SQL of a source text, as `what (line n)`. */
function sqlIn(text: string): string[] {
  return text
    .split('\n')
    .flatMap((line, i) =>
      SQL_PATTERNS.filter(([, pattern]) => pattern.test(line)).map(([what]) => `${what} (line ${i + 1})`),
    );
}

test('no SQL outside store/ and the services (worker/, metrics, the CLI, the surfaces ask a service)', () => {
  const offenders: string[] = [];
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) visit(file);
      else if (entry.name.endsWith('.ts')) {
        const relative = path.relative(ROOT, file).split(path.sep).join('/');
        if (SQL_HOMES.includes(placeOf(relative))) continue;
        for (const found of sqlIn(readFileSync(file, 'utf8'))) offenders.push(`${relative}: ${found}`);
      }
    }
  };
  visit(path.join(ROOT, 'src'));
  assert.deepEqual(offenders, []);
});

test('the SQL scan sees each kind of statement it forbids', () => {
  for (const line of [
    'await db.selectFrom("job_runs").selectAll().execute();',
    'await trx\n  .updateTable("job_runs")',
    'await sql`select 1`.execute(db);',
    'await sql<{ n: number }>`select 1 as n`.execute(db);',
    'await sql.raw("select 1").execute(db);',
    'await db.executeQuery(query);',
    'CompiledQuery.raw("select 1", [])',
  ]) {
    assert.notDeepEqual(sqlIn(line), [], line);
  }
  assert.deepEqual(sqlIn('const selected = rows.filter((r) => r.insertedAt);'), []);
});

/**
 * The run queue (src/jobs/queue/: claim, lease, sweep, queue, finish, run events) is used by the
 * jobs service and the worker only; its statements (src/jobs/queue/sql/) by the queue only.
 */
test('the run queue is used by jobs/ and worker/ only, its statements by the queue only', async () => {
  const graph = await importGraph();
  const violations: string[] = [];
  for (const [file, imports] of graph) {
    for (const target of imports) {
      if (target.startsWith('src/jobs/queue/sql/')) {
        if (!file.startsWith('src/jobs/queue/')) violations.push(`${file} → ${target}`);
      } else if (target.startsWith('src/jobs/queue/')) {
        if (!file.startsWith('src/jobs/') && !file.startsWith('src/worker/'))
          violations.push(`${file} → ${target}`);
      }
    }
  }
  assert.deepEqual(violations.sort(), []);
});
