/**
 * Dashboard page speed: `node bench/dashboard.ts [--db sqlite|postgres|both] [--jobs 10000]
 * [--requests 200]`.
 *
 * Seeds a throw-away database with one project holding `--jobs` jobs (mixed statuses, token
 * usage, one run each; one job with a 200-step transcript and a stored diff; a webhook endpoint
 * with one delivery per job, one in ten failed), signs in, then
 * requests every page `--requests` times one after another over real HTTP and prints the
 * server time of each (Fastify's own timer, from the request's arrival to the reply's end):
 * p50 and p99, against the docs/dashboard.mdx target of 100 ms. As the baseline beside them, the API's
 * own JSON list of the same jobs (GET /v2/agent/{p}/jobs), which reads what the jobs page reads.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { javascriptGzipBytes } from '../src/dashboard/assets.ts';
import { newJobId, newRunId, newWebhookDeliveryId, newWebhookMessageId } from '../src/ids.ts';
import { createLogger } from '../src/logger.ts';
import { buildServer } from '../src/server.ts';
import { createGitRepository } from '../test/helpers/app.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'both' },
    jobs: { type: 'string', default: '10000' },
    requests: { type: 'string', default: '200' },
  },
});
const JOBS = Number(args.jobs);
const REQUESTS = Number(args.requests);
const POSTGRES_URL = process.env.DOCWRIGHT_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PASSWORD = 'benchmark password 1';
const STATUSES = ['completed', 'completed', 'completed', 'failed', 'archived', 'active'] as const;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

async function run(db: 'sqlite' | 'postgres') {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docwright-bench-dashboard-'));
  const schema = `bench_${randomBytes(5).toString('hex')}`;
  const env: Record<string, string> = { DOCWRIGHT_DATA_DIR: dataDir, DOCWRIGHT_LOG_LEVEL: 'silent' };
  if (db === 'postgres') {
    Object.assign(env, {
      DATABASE_URL: POSTGRES_URL,
      DOCWRIGHT_DATABASE_SCHEMA: schema,
      DOCWRIGHT_SECRET_KEY: 'bench-secret-key-0123456789',
    });
  }
  const app = await openApp(loadConfig(env), { logger: createLogger('silent') });
  const repository = createGitRepository();
  const server = buildServer(app);
  try {
    const project = await app.projects.create({
      name: 'Bench',
      repository,
      ref: 'main',
      model: 'anthropic/claude-x',
    });
    const key = await app.keys.create(project.id);
    const endpoint = await app.webhooks.createEndpoint(project.id, {
      url: 'https://hooks.example.com/bench',
    });
    await app.operators.create({ email: 'bench@example.com', password: PASSWORD });

    // 10,000 jobs over the last 40 days, written in batches straight into the tables.
    const start = Date.now() - 40 * 86_400_000;
    let detailed = '';
    for (let offset = 0; offset < JOBS; offset += 500) {
      const jobs = [];
      const runs = [];
      const messages = [];
      const deliveries = [];
      for (let i = offset; i < Math.min(JOBS, offset + 500); i++) {
        const at = new Date(start + (i / JOBS) * 40 * 86_400_000).toISOString();
        const status = STATUSES[i % STATUSES.length]!;
        const id = newJobId();
        jobs.push({
          id,
          project_id: project.id,
          status,
          repository: project.repository,
          ref: 'main',
          model: 'anthropic/claude-x',
          draft: null,
          pr_link: status === 'completed' ? `https://github.com/acme/docs/pull/${i}` : null,
          branch: `docwright/${id.slice(-8)}`,
          summary: status === 'completed' ? 'Updated the page.' : null,
          error_code: status === 'failed' ? 'validation-failed' : null,
          error_message: status === 'failed' ? 'the changes still fail validation' : null,
          input_tokens: 5000 + i,
          output_tokens: 300,
          created_at: at,
          updated_at: at,
          archived_at: status === 'archived' ? at : null,
        });
        runs.push({
          id: newRunId(),
          job_id: id,
          project_id: project.id,
          seq: 1,
          prompt: `Instruction number ${i}: document the change to the rate limit on the API overview page.`,
          status:
            status === 'active'
              ? ('running' as const)
              : status === 'failed'
                ? ('failed' as const)
                : ('succeeded' as const),
          lease_owner: null,
          lease_expires_at: null,
          summary: null,
          error_code: null,
          error_message: null,
          created_at: at,
          started_at: at,
          ended_at: at,
        });
        detailed = id;
        const messageId = newWebhookMessageId();
        const failed = i % 10 === 0;
        messages.push({
          id: messageId,
          project_id: project.id,
          job_id: id,
          type: 'job.completed',
          body: JSON.stringify({ type: 'job.completed', timestamp: at, data: { id } }),
          created_at: at,
        });
        deliveries.push({
          id: newWebhookDeliveryId(),
          message_id: messageId,
          endpoint_id: endpoint.id,
          project_id: project.id,
          status: failed ? ('failed' as const) : ('succeeded' as const),
          attempts: failed ? 8 : 1,
          next_attempt_at: null,
          lease_owner: null,
          lease_expires_at: null,
          last_attempt_at: at,
          last_status_code: failed ? 500 : 204,
          last_error: failed ? 'HTTP 500' : null,
          created_at: at,
          updated_at: at,
        });
      }
      await app.store.db.insertInto('jobs').values(jobs).execute();
      await app.store.db.insertInto('job_runs').values(runs).execute();
      await app.store.db.insertInto('webhook_messages').values(messages).execute();
      await app.store.db.insertInto('webhook_deliveries').values(deliveries).execute();
    }
    const events = Array.from({ length: 200 }, (_, i) => ({
      job_id: detailed,
      run_id: null,
      type: i % 2 ? 'agent.tool_result' : 'agent.tool_call',
      data: JSON.stringify(
        i % 2
          ? { step: i, tool: 'read_file', ok: true, output: 'line of the page\n'.repeat(40) }
          : { step: i, tool: 'read_file', input: { path: `page-${i}.mdx` } },
      ),
      created_at: new Date().toISOString(),
    }));
    await app.store.db.insertInto('job_events').values(events).execute();
    const run = await app.store.db
      .selectFrom('job_runs')
      .select('id')
      .where('job_id', '=', detailed)
      .executeTakeFirstOrThrow();
    const diffText = Array.from(
      { length: 20 },
      (_, f) =>
        `diff --git a/p${f}.mdx b/p${f}.mdx\n--- a/p${f}.mdx\n+++ b/p${f}.mdx\n@@ -1,30 +1,30 @@\n${' context line\n-old line\n+new line\n'.repeat(10)}`,
    ).join('');
    await app.store.db
      .insertInto('run_diffs')
      .values({
        run_id: run.id,
        job_id: detailed,
        base_commit: 'a'.repeat(40),
        head_commit: 'b'.repeat(40),
        diff: diffText,
        truncated: 0,
        files: 20,
        additions: 200,
        deletions: 200,
        created_at: new Date().toISOString(),
      })
      .execute();

    const timings = new Map<string, number[]>();
    server.addHook('onResponse', async (request, reply) => {
      const label = request.headers['x-bench-label'];
      if (typeof label === 'string') timings.set(label, [...(timings.get(label) ?? []), reply.elapsedTime]);
      // (the label is the page's index in `targets`)
    });
    const base = await server.listen({ port: 0, host: '127.0.0.1' });
    const login = await fetch(`${base}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
      body: new URLSearchParams({ email: 'bench@example.com', password: PASSWORD }),
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const list = (
      await (await fetch(`${base}/projects/${project.id}/jobs`, { headers: { cookie } })).text()
    ).match(/cursor=([A-Za-z0-9_-]+)/);
    const p = `/projects/${project.id}`;
    const targets: [string, string, Record<string, string>][] = [
      ['overview /', '/', { cookie }],
      ['jobs list', `${p}/jobs`, { cookie }],
      ['jobs list, page 2', `${p}/jobs?cursor=${list?.[1] ?? ''}`, { cookie }],
      ['jobs list, failed', `${p}/jobs?status=failed`, { cookie }],
      ['job page (200 events, diff)', `${p}/jobs/${detailed}`, { cookie }],
      ['API keys', `${p}/keys`, { cookie }],
      ['settings', `${p}/settings`, { cookie }],
      ['webhooks (deliveries)', `${p}/webhooks`, { cookie }],
      ['webhooks, failed deliveries', `${p}/webhooks?status=failed`, { cookie }],
      ['operators', '/operators', { cookie }],
      [
        'baseline: GET /v2/…/jobs',
        `/v2/agent/${project.id}/jobs?limit=25`,
        { authorization: `Bearer ${key.key}` },
      ],
    ];
    for (const [index, [label, target, headers]] of targets.entries()) {
      for (let i = 0; i < 10; i++) await (await fetch(base + target, { headers })).arrayBuffer(); // warm-up
      for (let i = 0; i < REQUESTS; i++) {
        const response = await fetch(base + target, {
          headers: { ...headers, 'x-bench-label': String(index) },
        });
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`${label}: ${response.status}`);
      }
    }
    console.log(`\n${db}: ${JOBS} jobs in one project, ${REQUESTS} requests per page, server time in ms`);
    console.log(`${'page'.padEnd(30)} ${'p50'.padStart(7)} ${'p99'.padStart(7)}   target p99 < 100`);
    for (const [index, [label]] of targets.entries()) {
      const sorted = [...(timings.get(String(index)) ?? [])].sort((a, b) => a - b);
      const p99 = percentile(sorted, 0.99);
      console.log(
        `${label.padEnd(30)} ${percentile(sorted, 0.5).toFixed(1).padStart(7)} ${p99.toFixed(1).padStart(7)}   ${label.startsWith('baseline') ? '' : p99 < 100 ? 'ok' : 'MISSED'}`,
      );
    }
  } finally {
    await server.close();
    await app.close();
    rmSync(repository, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
    if (db === 'postgres') {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    }
  }
}

console.log(
  `JavaScript shipped: ${(javascriptGzipBytes() / 1024).toFixed(1)} KB gzip in all (target < 50 KB)`,
);
for (const db of args.db === 'both'
  ? (['sqlite', 'postgres'] as const)
  : [args.db as 'sqlite' | 'postgres']) {
  await run(db);
}
