import { type Command, Option } from 'commander';
import { DocwrightError } from '../errors.ts';
import type { ProjectView } from '../projects/projects.ts';
import { HOSTS } from '../projects/repository.ts';
import { modelWarning } from './model-warning.ts';
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
];

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
  return input;
}

/**
 * The project service names fields as the API does (`rateLimit`); a CLI user
 * typed `--rate-limit`, so validation errors are retold with the flags.
 */
function withFlagNames(error: unknown): never {
  if (error instanceof DocwrightError && error.fields?.every((f) => flagOf.has(f.field))) {
    const message = error.fields.map((f) => `${flagOf.get(f.field)}: ${f.message}`).join('; ');
    throw new DocwrightError(error.code, message, { fields: error.fields, cause: error });
  }
  throw error;
}

const human = (p: ProjectView) => describe({ ...p } as unknown as Record<string, unknown>);

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
      const [created, warning] = await withApp(async (app) => {
        const project = await app.projects.create(inputFrom(options));
        return [project, await modelWarning(app, project)] as const;
      }).catch(withFlagNames);
      if (warning) process.stderr.write(`docwright: warning: ${warning}\n`);
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
    const updated = await withApp((app) => app.projects.update(id, input)).catch(withFlagNames);
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
    .command('show')
    .description('show a project')
    .argument('<id>', 'project id')
    .option('--json', 'print as JSON')
    .action(async (id: string, options) => {
      const shown = await withApp((app) => app.projects.get(id));
      print(options.json, shown, () => human(shown));
    });
}
