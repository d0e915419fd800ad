/**
 * `docwright automation create|list|show|runs|deliveries|run|enable|disable|delete` (docs/automations.mdx). Admin
 * commands: they use the database directly, as `webhook` does. `run` starts a job like the API's
 * trigger — with the running server's default model, not this shell's — and a worker
 * (`docwright serve` or `docwright worker`) runs it.
 */
import { type Command, Option } from 'commander';
import type { Automation, AutomationRun } from '../automations/automation.ts';
import { TRIGGER_TYPES } from '../automations/automation.ts';
import type { HookDeliverySummary } from '../automations/hook-deliveries.ts';
import { describe, print, table, withApp } from './output.ts';
import { fileContents, list, positiveInt } from './parsers.ts';

const when = (a: Automation) => {
  const t = a.trigger;
  switch (t.type) {
    case 'code-change':
      return `code-change ${t.repositories.length ? t.repositories.join(',') : '(all context repositories)'}${t.paths.length ? ` paths ${t.paths.join(',')}` : ''}`;
    case 'schedule':
      return `schedule "${t.cron}" ${t.timeZone}${t.batch ? ' batch' : ''}`;
    case 'docs-push':
      return `docs-push${t.paths.length ? ` paths ${t.paths.join(',')}` : ''}`;
    default:
      return t.type;
  }
};

const automationRow = (a: Automation) => [
  a.id,
  a.name,
  when(a),
  a.enabled ? 'enabled' : 'disabled',
  a.createdAt,
];

const runRow = (r: AutomationRun) => [
  r.id,
  r.trigger.type,
  r.outcome,
  r.reason ?? '',
  r.jobId ?? '-',
  r.trigger.scheduledFor ?? r.createdAt,
];

const deliveryRow = (d: HookDeliverySummary) => [
  d.receivedAt,
  d.name,
  `${d.host} ${d.event ?? '-'}`,
  d.deliveryId,
  d.result ?? 'waiting to be processed',
];

interface CreateOptions {
  project: string;
  name: string;
  trigger: string;
  repository?: string[];
  paths?: string[];
  cron?: string;
  timeZone?: string;
  batch?: boolean;
  instruction?: string;
  instructionFile?: string;
  draft?: boolean;
  json?: boolean;
}

/** The trigger the flags describe; the service validates it (and names the field at fault). */
function triggerOf(options: CreateOptions): Record<string, unknown> {
  switch (options.trigger) {
    case 'code-change':
      return {
        type: 'code-change',
        ...(options.repository && { repositories: options.repository }),
        ...(options.paths && { paths: options.paths }),
      };
    case 'schedule':
      return {
        type: 'schedule',
        cron: options.cron ?? '',
        ...(options.timeZone && { timeZone: options.timeZone }),
        ...(options.batch && { batch: true }),
      };
    case 'docs-push':
      return { type: 'docs-push', ...(options.paths && { paths: options.paths }) };
    default:
      return { type: options.trigger };
  }
}

export function registerAutomationCommands(program: Command): void {
  const automation = program
    .command('automation')
    .description("manage a project's automations: jobs started by merged code, pushes or a schedule");

  automation
    .command('create')
    .description('add an automation')
    .requiredOption('--project <id>', 'project id')
    .requiredOption('--name <name>', 'what it is called')
    .addOption(
      new Option('--trigger <type>', 'what starts it').choices([...TRIGGER_TYPES]).makeOptionMandatory(),
    )
    .option(
      '--repository <name>',
      'code-change: a context repository to watch (repeatable; default all)',
      list,
    )
    .option('--paths <glob>', 'code-change, docs-push: a glob the change must touch (repeatable)', list)
    .option('--cron <expression>', 'schedule: 5-field cron expression, such as "0 9 * * 1"')
    .option('--time-zone <zone>', 'schedule: IANA time zone of the cron expression (default UTC)')
    .option('--batch', 'schedule: each job carries the changes merged since the previous run')
    .option('--instruction <text>', 'what the agent is asked to do each time')
    .option('--instruction-file <file>', 'the instruction, from a file')
    .option('--draft', 'open the pull requests as drafts')
    .option('--json', 'print as JSON')
    .action(async (options: CreateOptions) => {
      if ((options.instruction === undefined) === (options.instructionFile === undefined)) {
        process.stderr.write(
          'docwright: pass --instruction <text> or --instruction-file <file> (one of them)\n',
        );
        process.exitCode = 2;
        return;
      }
      const instruction = options.instruction ?? fileContents(options.instructionFile!);
      const created = await withApp((app) =>
        app.automations.create(options.project, {
          name: options.name,
          trigger: triggerOf(options),
          instruction,
          ...(options.draft && { draft: true }),
        }),
      );
      print(options.json, created, () => `automation ${created.id} "${created.name}": ${when(created)}`);
    });

  automation
    .command('list')
    .description("list a project's automations, newest first")
    .requiredOption('--project <id>', 'project id')
    .option('--json', 'print as JSON')
    .action(async (options) => {
      const automations = await withApp((app) => app.automations.list(options.project));
      print(options.json, { automations }, () =>
        table(['ID', 'NAME', 'TRIGGER', 'STATE', 'CREATED'], automations.map(automationRow)),
      );
    });

  automation
    .command('show')
    .description('show an automation')
    .requiredOption('--project <id>', 'project id')
    .argument('<automation-id>', 'automation id (aut_…)')
    .option('--json', 'print as JSON')
    .action(async (id: string, options) => {
      const found = await withApp((app) => app.automations.get(options.project, id));
      print(options.json, found, () => describe({ ...found, trigger: when(found) }));
    });

  automation
    .command('runs')
    .description("an automation's runs, newest first, with their outcome and reason")
    .requiredOption('--project <id>', 'project id')
    .argument('<automation-id>', 'automation id (aut_…)')
    .option('--limit <n>', 'how many (1–100, default 20)', positiveInt)
    .option('--cursor <cursor>', 'continue after an earlier page (its nextCursor)')
    .option('--json', 'print as JSON')
    .action(async (id: string, options) => {
      const page = await withApp((app) =>
        app.automations.runs(options.project, id, {
          limit: options.limit === undefined ? undefined : String(options.limit),
          cursor: options.cursor,
        }),
      );
      print(options.json, page, () => {
        const rows = table(['ID', 'TRIGGER', 'OUTCOME', 'REASON', 'JOB', 'FOR'], page.runs.map(runRow));
        return page.nextCursor ? `${rows}\n\nmore: --cursor ${page.nextCursor}` : rows;
      });
    });

  automation
    .command('deliveries')
    .description(
      "the code host's webhook deliveries to the project's hook URLs, newest first, with what each started or why nothing",
    )
    .requiredOption('--project <id>', 'project id')
    .option(
      '--repository <name>',
      'only those to this hook URL: a context repository, or docs (repeatable)',
      list,
    )
    .option('--limit <n>', 'how many (1–100, default 20)', positiveInt)
    .option('--json', 'print as JSON')
    .action(async (options: { project: string; repository?: string[]; limit?: number; json?: boolean }) => {
      const deliveries = await withApp(async (app) => {
        await app.projects.get(options.project);
        return app.automations.deliveries.recent(options.project, {
          names: options.repository,
          limit: Math.min(options.limit ?? 20, 100),
        });
      });
      print(options.json, { deliveries }, () =>
        deliveries.length === 0
          ? `no deliveries yet: the hook URLs are /hooks/${options.project}/<repository> (docs/automations.mdx)`
          : table(['RECEIVED', 'REPOSITORY', 'EVENT', 'DELIVERY', 'RESULT'], deliveries.map(deliveryRow)),
      );
    });

  automation
    .command('run')
    .description('run an automation now (a job that a worker runs; counts against the rate limit)')
    .requiredOption('--project <id>', 'project id')
    .argument('<automation-id>', 'automation id (aut_…)')
    .option('--json', 'print as JSON')
    .action(async (id: string, options) => {
      // The job gets the running server's default model, as the API's trigger and Run now give it.
      const started = await withApp((app) => app.automations.trigger(options.project, id, {}), {
        serverDefaults: true,
      });
      const result = { automationId: started.automationId, runId: started.runId, jobId: started.jobId };
      print(options.json, result, () => `run ${result.runId} started job ${result.jobId}`);
    });

  for (const [command, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    automation
      .command(command)
      .description(
        enabled
          ? 'enable an automation (scheduled times passed while disabled do not fire)'
          : 'disable an automation (changes it would have run for are recorded skipped: disabled)',
      )
      .requiredOption('--project <id>', 'project id')
      .argument('<automation-id>', 'automation id (aut_…)')
      .option('--json', 'print as JSON')
      .action(async (id: string, options) => {
        const updated = await withApp((app) => app.automations.update(options.project, id, { enabled }));
        print(options.json, updated, () => `${command}d automation ${updated.id} "${updated.name}"`);
      });
  }

  automation
    .command('delete')
    .description('delete an automation and its runs (their jobs stay)')
    .requiredOption('--project <id>', 'project id')
    .argument('<automation-id>', 'automation id (aut_…)')
    .option('--json', 'print as JSON')
    .action(async (id: string, options) => {
      const deleted = await withApp((app) => app.automations.delete(options.project, id));
      print(options.json, deleted, () => `deleted automation ${deleted.id} "${deleted.name}"`);
    });
}
