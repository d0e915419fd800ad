/**
 * `docwright job create|get|list|watch|message|retry|archive` (docs/cli.mdx): the HTTP API from the
 * command line, through the typed client of src/client. The server is `DOCWRIGHT_URL` (or
 * `--url`), the key `DOCWRIGHT_API_KEY` (never a flag: command lines end up in `ps` and shell
 * history), the project `--project` or `DOCWRIGHT_PROJECT`.
 *
 * Exit codes: 0 done (with `--wait` and `watch`: the job completed); 1 the API refused or
 * failed, or the job failed or was archived; 2 a usage error, including a request the API
 * rejected as invalid (400, 422); 130 interrupted while waiting (the job runs on).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { createClient, type DocwrightClient } from '../client/client.ts';
import { describeEvent } from '../client/describe-event.ts';
import { describeJob } from '../client/describe-job.ts';
import { DocwrightApiError } from '../client/errors.ts';
import type { AgentJob, JobEvent, JobStatus } from '../client/types.ts';
import { DocwrightError } from '../errors.ts';
import { JOB_STATUSES } from '../jobs/agent-job.ts';
import { jobText } from './job-text.ts';
import { print, table } from './output.ts';
import { type ChangeFlag, change, positiveInt } from './parsers.ts';
import { spinner } from './spinner.ts';

export interface ConnectionFlags {
  url?: string;
  project?: string;
  json?: boolean;
}

interface WaitFlags {
  wait?: boolean;
  quiet?: boolean;
}

/** Flags of the commands that send an instruction (create, message). */
interface WorkFlags extends ConnectionFlags, WaitFlags {
  prompt?: string;
  promptFile?: string;
  idempotencyKey?: string;
  change?: ChangeFlag[];
}

interface CreateFlags extends WorkFlags {
  ref?: string;
  model?: string;
  draft?: boolean;
  /** `mode: "ask"` (docs/questions.mdx): the prompt is a question, answered with citations. */
  ask?: boolean;
}

interface ListFlags extends ConnectionFlags {
  status?: JobStatus;
  limit?: number;
  cursor?: string;
  all?: boolean;
}

interface Connection {
  client: DocwrightClient;
  projectId: string;
}

const usage = (message: string): never => {
  throw new DocwrightError('invalid-request', message);
};

/** Where `docwright serve` listens when started without flags. */
export const DEFAULT_SERVER_URL = 'http://127.0.0.1:8080';

/** The server the flags and environment name: `--url`, else `DOCWRIGHT_URL`, else the local default. */
export function serverUrl(flags: Pick<ConnectionFlags, 'url'>, env: NodeJS.ProcessEnv = process.env): string {
  return (flags.url ?? env.DOCWRIGHT_URL ?? '').trim() || DEFAULT_SERVER_URL;
}

/** The client for the server, key and project the flags and environment name. */
export function connect(flags: ConnectionFlags): Connection {
  const url = serverUrl(flags);
  const apiKey = (process.env.DOCWRIGHT_API_KEY ?? '').trim();
  if (!apiKey) {
    usage(
      'DOCWRIGHT_API_KEY is not set: export an API key of the project (docwright key create --project <id>)',
    );
  }
  const projectId = (flags.project ?? process.env.DOCWRIGHT_PROJECT ?? '').trim();
  if (!projectId) usage('no project: pass --project <id> or set DOCWRIGHT_PROJECT');
  try {
    return { client: createClient({ baseUrl: url, apiKey }), projectId };
  } catch {
    return usage(`the server URL must be an absolute http(s) URL, e.g. http://127.0.0.1:8080 (got ${url})`);
  }
}

/** Options every job command takes. */
function withConnection(command: Command): Command {
  return command
    .option('--url <url>', `docwright server URL (default: DOCWRIGHT_URL, else ${DEFAULT_SERVER_URL})`)
    .option('--project <id>', 'project id (default: DOCWRIGHT_PROJECT)')
    .option('--json', 'print as JSON');
}

/**
 * Runs an action; an API error becomes one line on stderr and exit code 1 (2 for a rejected
 * request). A server that cannot be reached gets a hint instead of the socket's error.
 */
function handled<A extends unknown[]>(action: (...args: A) => Promise<void>) {
  return async (...args: A): Promise<void> => {
    try {
      await action(...args);
    } catch (error) {
      if (!(error instanceof DocwrightApiError)) throw error;
      // Commander passes the options object second to last.
      const url = serverUrl((args.at(-2) ?? {}) as ConnectionFlags);
      process.stderr.write(
        `docwright: ${unreachableHint(error, url) ?? error.message.replace(/\s+/g, ' ')}\n`,
      );
      process.exitCode = error.status === 400 || error.status === 422 ? 2 : 1;
    }
  };
}

/** What to do when nothing answers at the server URL, or undefined for any other failure. */
function unreachableHint(error: DocwrightApiError, url: string): string | undefined {
  if (error.code !== 'network-error') return undefined;
  const cause =
    error.cause instanceof Error && error.cause.cause instanceof Error ? error.cause.cause : error.cause;
  const code = (cause as { code?: unknown } | undefined)?.code;
  const problem =
    code === 'ECONNREFUSED'
      ? 'connection refused'
      : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? 'no such host'
        : code === 'EHOSTUNREACH' || code === 'ENETUNREACH'
          ? 'host unreachable'
          : undefined;
  if (!problem) return undefined;
  return `cannot reach docwright at ${url} (${problem}): is \`docwright serve\` running at ${url}? Start it, or set DOCWRIGHT_URL (or --url) to the server's address`;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The instruction from `--prompt <text>`, `--prompt-file <path>`, or stdin for `-`. */
async function promptOf(flags: WorkFlags): Promise<string> {
  if (flags.prompt !== undefined && flags.promptFile !== undefined) {
    usage('give either --prompt or --prompt-file, not both');
  }
  const source = flags.prompt ?? flags.promptFile;
  if (source === undefined)
    return usage('an instruction is required: --prompt <text>, --prompt-file <path> or --prompt -');
  if (source === '-') return readStdin();
  if (flags.promptFile === undefined) return source;
  try {
    return readFileSync(flags.promptFile, 'utf8');
  } catch (error) {
    return usage(`cannot read ${flags.promptFile}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

function promptOptions(command: Command): Command {
  return workOptions(
    command
      .option('--prompt <text>', 'the instruction (- reads it from stdin)')
      .option('--prompt-file <path>', 'read the instruction from a file (- for stdin)')
      .option(
        '--change <change>',
        'a code change to document, repeatable: NAME#NUMBER (pull request), NAME@SHA (commit) or NAME@BASE..HEAD (range); NAME is a context repository or docs',
        change,
      ),
  );
}

/** Options of every command that queues a run (create, message, retry). */
function workOptions(command: Command): Command {
  return command
    .option(
      '--idempotency-key <key>',
      'repeat-safe request key (default: a new one per run, so a retried request never creates twice)',
    )
    .option('--wait', 'show progress until the job ends; exit 1 unless it completed')
    .option('--quiet', 'with --wait: no progress output');
}

const clock = (iso: string) => new Date(iso).toTimeString().slice(0, 8);
const eventLine = (event: JobEvent) => `${clock(event.createdAt)} ${describeEvent(event)}`;

class Interrupted extends Error {}

/**
 * Waits for the job to leave `active`, handing each new event (those `keep` accepts) to
 * `onEvent` and to the spinner, which shows the latest one. Ctrl-C stops waiting, not the job.
 */
async function follow(
  { client, projectId }: Connection,
  job: AgentJob,
  display: { onEvent?: (event: JobEvent) => void; spinner?: boolean; keep?: (event: JobEvent) => boolean },
): Promise<AgentJob> {
  let latest = 'waiting for a worker';
  let status: string = job.status;
  const bar = display.spinner ? spinner(process.stderr, `${job.id} ${status} · ${latest}`) : undefined;
  const redraw = () => bar?.update(`${job.id} ${status} · ${latest}`);
  const interrupt = new AbortController();
  const onSigint = () => interrupt.abort(new Interrupted());
  process.once('SIGINT', onSigint);
  try {
    return await client.waitForJob(projectId, job.id, {
      signal: interrupt.signal,
      onUpdate: (next) => {
        status = next.status;
        redraw();
      },
      onEvent: (event) => {
        if (display.keep && !display.keep(event)) return;
        latest = describeEvent(event);
        redraw();
        display.onEvent?.(event);
      },
    });
  } catch (error) {
    if (!(interrupt.signal.reason instanceof Interrupted)) throw error;
    bar?.stop();
    process.stderr.write(
      `docwright: stopped waiting; job ${job.id} is still ${status} (docwright job watch ${job.id})\n`,
    );
    return process.exit(130);
  } finally {
    bar?.stop();
    process.off('SIGINT', onSigint);
  }
}

/** `--wait`: progress on stderr (a spinner on a terminal, else one line per event), then the job. */
async function waitAndPrint(
  connection: Connection,
  job: AgentJob,
  flags: WorkFlags,
  keep?: (event: JobEvent) => boolean,
): Promise<void> {
  const quiet = flags.quiet === true;
  const tty = process.stderr.isTTY === true;
  // First, so that a piped or interrupted run still learns which job to look at later.
  if (!quiet)
    process.stderr.write(`${job.id}: following until it ends (Ctrl-C stops following, not the job)\n`);
  const final = await follow(connection, job, {
    keep,
    spinner: !quiet && tty,
    onEvent: quiet || tty ? undefined : (event) => process.stderr.write(`${eventLine(event)}\n`),
  });
  print(flags.json, final, () => jobText(final));
  if (final.status !== 'completed') {
    process.stderr.write(`docwright: ${describeJob(final)}\n`);
    process.exitCode = 1;
  }
}

/** A follow-up or retry just queued: printed, or with `--wait` followed (its own run's events only). */
function printQueued(connection: Connection, queued: AgentJob, flags: WorkFlags): Promise<void> | void {
  // Its events are written from the moment the run was queued.
  if (flags.wait)
    return waitAndPrint(connection, queued, flags, (event) => event.createdAt >= queued.updatedAt);
  print(flags.json, queued, () => jobText(queued));
}

export function registerJobCommands(program: Command): void {
  const job = program
    .command('job')
    .description('create and follow agent jobs through the HTTP API (DOCWRIGHT_URL, DOCWRIGHT_API_KEY)');

  promptOptions(withConnection(job.command('create')))
    .description(
      'create a job: the agent carries out the instruction and opens a pull request (with --ask: answers a question)',
    )
    .option('--ref <branch>', 'base branch (default: the project ref)')
    .option('--model <provider/model>', "one of the project's allowed models")
    .option('--draft', 'open the pull request as a draft')
    .option('--no-draft', 'open a ready pull request')
    .option(
      '--ask',
      'the prompt is a question: answer it from the docs and the code, with citations; change nothing',
    )
    .action(
      handled(async (flags: CreateFlags) => {
        const connection = connect(flags);
        const prompt = await promptOf(flags);
        const input = {
          prompt,
          ...(flags.ref !== undefined && { ref: flags.ref }),
          ...(flags.model !== undefined && { model: flags.model }),
          ...(flags.draft !== undefined && { draft: flags.draft }),
          ...(flags.change && { changes: flags.change }),
          ...(flags.ask && { mode: 'ask' as const }),
        };
        const idempotencyKey = flags.idempotencyKey ?? randomUUID();
        const created = await connection.client.createJob(connection.projectId, input, { idempotencyKey });
        if (flags.wait) return waitAndPrint(connection, created, flags);
        print(flags.json, created, () => jobText(created));
      }),
    );

  withConnection(job.command('get'))
    .description('show a job')
    .argument('<id>', 'job id (job_…)')
    .action(
      handled(async (id: string, flags: ConnectionFlags) => {
        const { client, projectId } = connect(flags);
        const found = await client.getJob(projectId, id);
        print(flags.json, found, () => jobText(found));
      }),
    );

  withConnection(job.command('list'))
    .description("list the project's jobs, newest first")
    .addOption(new Option('--status <status>', 'only jobs in this state').choices(JOB_STATUSES))
    .addOption(
      new Option('--limit <n>', 'how many (1–100, default 20)').argParser(positiveInt).conflicts('all'),
    )
    .option('--cursor <cursor>', 'continue after an earlier page (its nextCursor)')
    .addOption(new Option('--all', 'every job, page by page').conflicts('cursor'))
    .action(
      handled(async (flags: ListFlags) => {
        const { client, projectId } = connect(flags);
        let page: { jobs: AgentJob[]; nextCursor: string | null };
        if (flags.all) {
          const jobs: AgentJob[] = [];
          for await (const found of client.iterateJobs(projectId, { status: flags.status })) jobs.push(found);
          page = { jobs, nextCursor: null };
        } else {
          page = await client.listJobs(projectId, {
            status: flags.status,
            limit: flags.limit,
            cursor: flags.cursor,
          });
        }
        print(flags.json, page, () => {
          const rows = page.jobs.map((j) => [
            j.id,
            j.status,
            j.createdAt,
            j.model,
            j.prLink ?? j.branch ?? '-',
          ]);
          const more = page.nextCursor ? `\n(more: --cursor ${page.nextCursor})` : '';
          return table(['ID', 'STATUS', 'CREATED', 'MODEL', 'PULL REQUEST / BRANCH'], rows) + more;
        });
      }),
    );

  withConnection(job.command('watch'))
    .description("print the job's transcript as it is written, until the job ends")
    .argument('<id>', 'job id (job_…)')
    .action(
      handled(async (id: string, flags: ConnectionFlags) => {
        const connection = connect(flags);
        const events: JobEvent[] = [];
        const found = await connection.client.getJob(connection.projectId, id);
        const final = await follow(connection, found, {
          onEvent: (event) => {
            if (flags.json) events.push(event);
            else process.stdout.write(`${eventLine(event)}\n`);
          },
        });
        print(flags.json, { job: final, events }, () => describeJob(final));
        if (final.status !== 'completed') process.exitCode = 1;
      }),
    );

  promptOptions(withConnection(job.command('message')))
    .description('send a follow-up instruction: the agent continues on the same branch and pull request')
    .argument('<id>', 'job id (job_…)')
    .action(
      handled(async (id: string, flags: WorkFlags) => {
        const connection = connect(flags);
        const prompt = await promptOf(flags);
        const idempotencyKey = flags.idempotencyKey ?? randomUUID();
        const queued = await connection.client.sendMessage(
          connection.projectId,
          id,
          { prompt, ...(flags.change && { changes: flags.change }) },
          { idempotencyKey },
        );
        return printQueued(connection, queued, flags);
      }),
    );

  workOptions(withConnection(job.command('retry')))
    .description("run a failed job's last instruction again, on the same job and branch")
    .argument('<id>', 'job id (job_…)')
    .action(
      handled(async (id: string, flags: WorkFlags) => {
        const connection = connect(flags);
        const idempotencyKey = flags.idempotencyKey ?? randomUUID();
        const before = await connection.client.getJob(connection.projectId, id);
        const queued = await connection.client.retryJob(connection.projectId, id, { idempotencyKey });
        if (queued.source.ref !== before.source.ref) {
          // A job that never pushed takes the project's ref as it is now (project update --ref).
          process.stderr.write(
            `docwright: note: the retry runs on ${queued.source.ref}, the project's ref now (the job was created on ${before.source.ref})\n`,
          );
        }
        return printQueued(connection, queued, flags);
      }),
    );

  withConnection(job.command('archive'))
    .description('archive a job (an active one is cancelled)')
    .argument('<id>', 'job id (job_…)')
    .action(
      handled(async (id: string, flags: ConnectionFlags) => {
        const { client, projectId } = connect(flags);
        const archived = await client.archiveJob(projectId, id);
        print(flags.json, archived, () => `archived ${archived.id} (${archived.archivedAt})`);
      }),
    );
}
