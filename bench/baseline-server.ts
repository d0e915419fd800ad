/**
 * The baselines of bench/api.ts: a bare node:http server that does the least any server answering
 * the same request must do with the same database, and nothing else (no framework, no key, no
 * rate limit). Run by bench/api.ts as a process of its own, beside `docwright serve`:
 *
 *   BASELINE=select  GET  /v2/agent/{p}/job/{id}: one prepared SELECT of the job row by its
 *                    primary key, answered as JSON (404 when none).
 *   BASELINE=insert  POST /v2/agent/{p}/job: the JSON body parsed, one INSERT of a job row (one
 *                    transaction), answered 201 with the row as JSON.
 *
 * DB=postgres: through `pg` on a pool of POOL_SIZE connections (docwright's default, 10), the
 * statement named so that each connection parses and plans it once. DB=sqlite: through
 * node:sqlite on SQLITE_FILE (a copy of docwright's, see bench/api.ts) in WAL mode with
 * synchronous = NORMAL, as docwright opens it, and SQLite's own checkpoints.
 * The INSERT writes docwright's own `jobs` table (its indexes and foreign key included): rows
 * nobody polls and no run refers to, so the worker never sees them.
 */
import http from 'node:http';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { newJobId } from '../src/ids.ts';

const kind = process.env.BASELINE;
const PORT = Number(process.env.PORT);

const SELECT_JOB = 'select * from jobs where id = $1 and project_id = $2';
const INSERT_JOB = `insert into jobs (id, project_id, status, repository, ref, model, created_at, updated_at, changes)
  values ($1, $2, 'active', $3, 'main', $4, $5, $5, '[]')`;

type Run = (sql: string, name: string, values: unknown[]) => Promise<Record<string, unknown>[]>;

function openDatabase(): Run {
  if (process.env.DB === 'postgres') {
    const pool = new pg.Pool({
      connectionString: process.env.DATABASE_URL,
      max: Number(process.env.POOL_SIZE ?? 10),
      options: `-c search_path=${process.env.SCHEMA}`,
    });
    return async (text, name, values) => (await pool.query({ name, text, values })).rows;
  }
  const db = new DatabaseSync(process.env.SQLITE_FILE!);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA foreign_keys = ON');
  const statements = new Map<string, ReturnType<DatabaseSync['prepare']>>();
  return async (text, name, values) => {
    let statement = statements.get(name);
    if (!statement) {
      // `?5` is SQLite's numbered parameter: the same positions as PostgreSQL's `$5`.
      statement = db.prepare(text.replaceAll(/\$(\d)/g, '?$1'));
      statements.set(name, statement);
    }
    if (/^\s*select/i.test(text)) return statement.all(...(values as string[])) as Record<string, unknown>[];
    statement.run(...(values as string[]));
    return [];
  };
}

const run = openDatabase();

function answer(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  if (req.url === '/') return answer(res, 200, '{}'); // ready
  // /v2/agent/{projectId}/job[/{id}]
  const [, , , projectId = '', , jobId] = (req.url ?? '').split('?')[0]!.split('/');
  if (kind === 'select') {
    req.resume();
    const rows = await run(SELECT_JOB, 'baseline_select_job', [jobId, projectId]);
    if (rows.length === 0) return answer(res, 404, '{"error":"not found"}');
    return answer(res, 200, JSON.stringify(rows[0]));
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString()) as { prompt: string };
  const at = new Date().toISOString();
  const row = {
    id: newJobId(),
    project_id: projectId,
    status: 'active',
    prompt: body.prompt,
    created_at: at,
  };
  await run(INSERT_JOB, 'baseline_insert_job', [row.id, projectId, 'file:///bench', 'anthropic/bench', at]);
  return answer(res, 201, JSON.stringify(row));
}

http
  .createServer((req, res) => {
    handle(req, res).catch((error: Error) => answer(res, 500, JSON.stringify({ error: error.message })));
  })
  .listen(PORT, '127.0.0.1');
