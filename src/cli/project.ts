import { createInterface } from 'node:readline/promises';
import { type Command, Option } from 'commander';
import { DocwrightError } from '../errors.ts';
import type { ProjectDeletionImpact } from '../projects/project-deletion.ts';
import type { ProjectView } from '../projects/projects.ts';
import { refWarning } from '../projects/ref-check.ts';
import { HOSTS } from '../projects/repository.ts';
import { noteBaseUrl } from './context.ts';
import { modelReport } from './model-report.ts';
import { describe, print, table, withApp } from './output.ts';
import { list, positiveInt, secretFile } from './parsers.ts';

/**
 * CLI option → project field. Options not given leave the field unchanged.
 * A function, because commander keeps parse state on Option objects and
 * `create` makes some of them mandatory: each command gets its own.
 */
const fieldOptions = (): [Option, string][] => [
  [new Option('--name <name>', 'project name'), 'name'],
  [new Option('--repository <url-or-path>', 'repository web URL, local path or file:// URL'), 'repository'],
  [new Option('--host <host>', 'code host (detected from the URL when possible)').choices(HOSTS), 'host'],
  [new Option('--api-url <url>', 'API base URL of a self-hosted code host'), 'apiUrl'],
  ...secretOptions('--token', 'token', 'code-host access token'),
  [new Option('--github-app-id <id>', 'GitHub App id'), 'githubAppId'],
  [
    new Option(
      '--github-private-key-file <path>',
      'GitHub App private key (PEM file; - reads stdin)',
    ).argParser(secretFile),
    'githubPrivateKey',
  ],
  [new Option('--github-installation-id <id>', 'GitHub App installation id'), 'githubInstallationId'],
  ...secretOptions(
    '--anthropic-api-key',
    'anthropicApiKey',
    'Anthropic API key for this project (default ANTHROPIC_API_KEY)',
  ),
  ...secretOptions(
    '--openai-api-key',
    'openaiApiKey',
    'OpenAI API key for this project (default OPENAI_API_KEY)',
  ),
  ...secretOptions(
    '--openai-compatible-api-key',
    'openaiCompatibleApiKey',
    'key for the OpenAI-compatible endpoint (default DOCWRIGHT_OPENAI_COMPATIBLE_API_KEY)',
  ),
  [new Option('--ref <branch>', 'base branch (default: the repository default branch)'), 'ref'],
  [new Option('--docs-dir <path>', 'documentation directory, relative to the repository root'), 'docsDir'],
  [
    new Option('--writable <globs>', 'globs the agent may write (comma-separated, repeatable)').argParser(
      list,
    ),
    'writable',
  ],
  [new Option('--model <provider/model>', 'model, e.g. anthropic/claude-sonnet-4-5'), 'model'],
  [
    new Option('--allowed-models <models>', 'models a request may choose (comma-separated)').argParser(list),
    'allowedModels',
  ],
  [
    new Option('--openai-compatible-base-url <url>', 'base URL of an OpenAI-compatible endpoint'),
    'openaiCompatibleBaseUrl',
  ],
  [new Option('--draft', 'open pull requests as drafts'), 'draft'],
  [new Option('--no-draft', 'open ready pull requests'), 'draft'],
  [
    new Option(
      '--comment-on-source',
      'comment on each source pull request a job documents with the docs pull request or the reason for none',
    ),
    'commentOnSource',
  ],
  [new Option('--no-comment-on-source', 'do not comment on source pull requests'), 'commentOnSource'],
  [new Option('--labels <labels>', 'pull request labels (comma-separated)').argParser(list), 'labels'],
  [new Option('--branch-prefix <prefix>', 'head branch prefix (default docwright/)'), 'branchPrefix'],
  [new Option('--author-name <name>', 'commit author name'), 'authorName'],
  [new Option('--author-email <email>', 'commit author email'), 'authorEmail'],
  [new Option('--rate-limit <n>', 'jobs and follow-ups per hour').argParser(positiveInt), 'rateLimit'],
  [
    new Option(
      '--monthly-token-budget <n>',
      'model tokens per calendar month; new jobs are refused once spent',
    ).argParser(positiveInt),
    'monthlyTokenBudget',
  ],
  [
    new Option(
      '--check <command>',
      'a check command run in the sandboxed checkout after each job (repeatable; replaces the list)',
    ).argParser(collect),
    'checks',
  ],
  [new Option('--clear-checks', 'remove every check command').conflicts('check'), 'checks'],
];

/** `--check` is repeatable: each one adds a command, whole (commas and all). */
function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/**
 * A secret's two options: `--x-file <path>` (`-` reads stdin), and the bare `--x <value>`, which
 * still works but is warned about, since command lines show in `ps` and shell history.
 */
function secretOptions(flag: string, field: string, what: string): [Option, string][] {
  const bare = new Option(
    `${flag} <value>`,
    `${what}; stored encrypted (visible in ps: prefer ${flag}-file)`,
  );
  const file = new Option(
    `${flag}-file <path>`,
    `read the ${what.split(' (')[0]} from a file (- reads stdin)`,
  )
    .argParser((p) => secretFile(p).trim())
    .conflicts(bare.attributeName());
  return [
    [bare, field],
    [file, field],
  ];
}

/** The flags that take a secret as their value, to warn about. */
const bareSecretFlags = ['--token', '--anthropic-api-key', '--openai-api-key', '--openai-compatible-api-key'];

function warnAboutBareSecrets(options: Record<string, unknown>): void {
  for (const flag of bareSecretFlags) {
    const attribute = new Option(`${flag} <value>`).attributeName();
    if (options[attribute] === undefined) continue;
    process.stderr.write(
      `docwright: warning: ${flag} puts the secret in your shell history and the process list (ps); ` +
        `use ${flag}-file <path>, or ${flag}-file - to read it from stdin\n`,
    );
  }
}

/** The flag that sets each field, to name it in error messages (the first one when several do). */
const flagOf = new Map<string, string>();
for (const [option, field] of fieldOptions()) if (!flagOf.has(field)) flagOf.set(field, option.long!);

function inputFrom(options: Record<string, unknown>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [option, field] of fieldOptions()) {
    const value = options[option.attributeName()];
    if (value !== undefined) input[field] = value;
  }
  if (options.clearChecks === true) input.checks = [];
  return input;
}

/**
 * The project service names fields as the API does (`rateLimit`); a CLI user
 * typed `--rate-limit`, so validation errors are retold with the flags.
 */
function withFlagNames(error: unknown): never {
  // A list's item is named by its index (`checks.0`): the flag is the list's.
  const flag = (field: string) => flagOf.get(field.replace(/\.\d+$/, ''));
  if (error instanceof DocwrightError && error.fields?.every((f) => flag(f.field) !== undefined)) {
    const message = error.fields.map((f) => `${flag(f.field)}: ${f.message}`).join('; ');
    throw new DocwrightError(error.code, message, { fields: error.fields, cause: error });
  }
  throw error;
}

/** The project in lines; its check commands one a line, since a command may hold commas. */
const human = (p: ProjectView) => {
  const { checks, ...rest } = p;
  const commands = checks.length === 0 ? ['checks: -'] : checks.map((command) => `check: ${command}`);
  return [describe(rest as unknown as Record<string, unknown>), ...commands].join('\n');
};

const counted = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** What a deletion removes, in words. */
function removal(impact: ProjectDeletionImpact & { mirrors?: number }): string {
  const jobs = counted(impact.jobs, 'job');
  const active = impact.activeJobs > 0 ? ` (${impact.activeJobs} active, cancelled)` : '';
  const mirrors = impact.mirrors ? `, ${counted(impact.mirrors, 'git mirror')}` : '';
  return `${jobs}${active}, ${counted(impact.keys, 'API key')}, ${counted(impact.webhookEndpoints, 'webhook endpoint')}${mirrors}`;
}

/**
 * Asks on the terminal for the project's name before deleting it; without a terminal there is no
 * one to ask, and `--yes` must say it. Refusing throws: nothing is deleted.
 */
async function confirmDeletion(project: ProjectView, impact: ProjectDeletionImpact): Promise<void> {
  const what = `project ${project.id} (${project.name}) and ${removal(impact)}`;
  if (!process.stdin.isTTY || !process.stderr.isTTY) {
    throw new DocwrightError(
      'invalid-request',
      `this deletes ${what}; nothing was deleted: pass --yes to confirm`,
    );
  }
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await prompt.question(
      `This deletes ${what}. Pushed branches and pull requests stay on the code host.\nType the project's name (${project.name}) to delete it: `,
    );
    if (answer.trim() !== project.name) {
      throw new DocwrightError('invalid-request', 'the name did not match; nothing was deleted');
    }
  } finally {
    prompt.close();
  }
}

export function registerProjectCommands(program: Command): void {
  const project = program.command('project').description('manage projects');

  const withFields = (command: Command, required: string[] = []) => {
    for (const [option, field] of fieldOptions()) {
      command.addOption(required.includes(field) ? option.makeOptionMandatory() : option);
    }
    return command.option('--json', 'print the project as JSON');
  };

  withFields(project.command('create').description('create a project'), ['name', 'repository']).action(
    async (options) => {
      warnAboutBareSecrets(options);
      const [created, report, missingRef] = await withApp(async (app) => {
        const project = await app.projects.create(inputFrom(options));
        const secrets = await app.projects.getSecrets(project.id);
        return [project, await modelReport(app, project), await refWarning(project, secrets)] as const;
      }).catch(withFlagNames);
      for (const warning of [...report.warnings, ...(missingRef ? [missingRef] : [])]) {
        process.stderr.write(`docwright: warning: ${warning}\n`);
      }
      for (const note of report.notes) process.stderr.write(`docwright: note: ${note}\n`);
      print(
        options.json,
        created,
        () => `${human(created)}\n\nCreate an API key with: docwright key create --project ${created.id}`,
      );
    },
  );

  withFields(
    project.command('update').description("change a project's settings").argument('<id>', 'project id'),
  ).action(async (id: string, options) => {
    warnAboutBareSecrets(options);
    const input = inputFrom(options);
    // Without this, a forgotten flag would go unnoticed: the update would succeed and change nothing.
    if (Object.keys(input).length === 0) {
      throw new DocwrightError('invalid-request', 'nothing to change: give at least one field option');
    }
    const [updated, missingRef] = await withApp(async (app) => {
      const project = await app.projects.update(id, input);
      // A new ref or repository: does the ref exist there? (Jobs that failed on the old one take the new one when retried.)
      const moved = input.ref !== undefined || input.repository !== undefined;
      return [
        project,
        moved ? await refWarning(project, await app.projects.getSecrets(id)) : undefined,
      ] as const;
    }).catch(withFlagNames);
    if (missingRef) process.stderr.write(`docwright: warning: ${missingRef}\n`);
    print(options.json, updated, () => human(updated));
  });

  project
    .command('list')
    .description('list projects')
    .option('--json', 'print as JSON')
    .action(async (options) => {
      const projects = await withApp((app) => app.projects.list());
      print(options.json, { projects }, () =>
        table(
          ['ID', 'NAME', 'HOST', 'REPOSITORY', 'REF'],
          projects.map((p) => [p.id, p.name, p.host, p.repository, p.ref]),
        ),
      );
    });

  project
    .command('delete')
    .description('delete a project with its jobs, API keys and webhooks (running jobs are cancelled)')
    .argument('<id>', 'project id')
    .option('--yes', 'delete without asking (required when not on a terminal)')
    .option('--json', 'print what was deleted as JSON')
    .action(async (id: string, options: { yes?: boolean; json?: boolean }) => {
      const deleted = await withApp(async (app) => {
        const found = await app.projects.get(id);
        if (!options.yes) await confirmDeletion(found, await app.projects.deletionImpact(id));
        return app.projects.delete(id);
      });
      print(
        options.json,
        deleted,
        () => `deleted project ${deleted.id} (${deleted.name}): ${removal(deleted.deleted)}`,
      );
    });

  project
    .command('hook-secret')
    .description(
      "make a new secret for code-host webhooks of the project's own repository (/hooks/<id>/docs), replacing any earlier one; shown once",
    )
    .argument('<id>', 'project id')
    .option('--json', 'print the webhook URL and secret as JSON')
    .action(async (id: string, options) => {
      const [made, publicUrl] = await withApp(
        async (app) =>
          [await app.contextRepositories.newDocsWebhookSecret(id), app.config.publicUrl] as const,
      );
      noteBaseUrl(publicUrl);
      print(options.json, made, () =>
        [
          `webhook URL: ${made.webhookUrl}`,
          `webhook secret: ${made.webhookSecret}`,
          '',
          'The secret is shown only now, and any earlier one no longer verifies: give both to the docs',
          'repository’s webhook settings (push events) for docs-push automations.',
        ].join('\n'),
      );
    });

  project
    .command('show')
    .description('show a project')
    .argument('<id>', 'project id')
    .option('--json', 'print as JSON')
    .action(async (id: string, options) => {
      const shown = await withApp((app) => app.projects.get(id));
      print(options.json, shown, () => human(shown));
    });
}
