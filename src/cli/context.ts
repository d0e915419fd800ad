/**
 * `docwright context add|list|remove` (docs/code-context.mdx): a project's context repositories, the code its
 * agent reads. Admin commands: they use the database directly, as `project` does.
 */
import { type Command, Option } from 'commander';
import { DocwrightError } from '../errors.ts';
import { type ContextRepositoryView, DEFAULT_BASE_URL } from '../projects/context-repositories.ts';
import { HOSTS } from '../projects/repository.ts';
import { print, table, withApp } from './output.ts';
import { secretFile } from './parsers.ts';

/** The service's field names as the flags a user typed. */
const FLAGS: Record<string, string> = {
  name: '--name',
  repository: '--repository',
  host: '--host',
  apiUrl: '--api-url',
  ref: '--ref',
  token: '--token-file',
};

/** Retells validation errors with the flags, and says what to do next. */
function withFlagNames(error: unknown): never {
  if (error instanceof DocwrightError && error.code === 'invalid-request' && error.fields?.length) {
    const message = error.fields.map((f) => `${FLAGS[f.field] ?? f.field}: ${f.message}`).join('; ');
    throw new DocwrightError(error.code, message, { fields: error.fields, cause: error });
  }
  if (error instanceof DocwrightError && error.code === 'project-not-found') {
    throw new DocwrightError(error.code, `${error.message}; list projects with: docwright project list`, {
      cause: error,
    });
  }
  throw error;
}

/** Without DOCWRIGHT_PUBLIC_URL the webhook URL is a guess: say so. */
export function noteBaseUrl(publicUrl: string | undefined): void {
  if (publicUrl) return;
  process.stderr.write(
    `docwright: note: webhookUrl starts with ${DEFAULT_BASE_URL} because DOCWRIGHT_PUBLIC_URL is not set; ` +
      'set it to the address code hosts reach docwright at\n',
  );
}

const row = (r: ContextRepositoryView) => [
  r.name,
  r.host,
  r.repository,
  r.ref ?? '(default)',
  r.hasToken ? 'set' : '-',
];

export function registerContextCommands(program: Command): void {
  const context = program
    .command('context')
    .description("manage a project's context repositories: code the agent reads, never writes");

  context
    .command('add')
    .description('add a context repository (its webhook secret is shown once)')
    .requiredOption('--project <id>', 'project id')
    .requiredOption('--name <name>', 'slug naming it in jobs and tools (lowercase letters, digits, - and _)')
    .requiredOption('--repository <url-or-path>', 'repository web URL, local path or file:// URL')
    .addOption(new Option('--host <host>', 'code host (detected from the URL when possible)').choices(HOSTS))
    .option('--api-url <url>', 'API base URL of a self-hosted code host')
    .option(
      '--token-file <path>',
      'read a read-only access token from a file (- reads stdin); stored encrypted',
      (p: string) => secretFile(p).trim(),
    )
    .option('--ref <branch>', 'branch the agent reads (default: the repository default branch)')
    .option('--json', 'print the entry as JSON')
    .action(async (options) => {
      const input: Record<string, unknown> = { name: options.name, repository: options.repository };
      for (const field of ['host', 'apiUrl', 'ref'] as const) {
        if (options[field] !== undefined) input[field] = options[field];
      }
      if (options.tokenFile !== undefined) input.token = options.tokenFile;
      const [added, publicUrl] = await withApp(
        async (app) =>
          [await app.contextRepositories.add(options.project, input), app.config.publicUrl] as const,
      ).catch(withFlagNames);
      noteBaseUrl(publicUrl);
      print(options.json, added, () =>
        [
          `context repository ${added.name} for project ${options.project}: ${added.repository}`,
          `host: ${added.host}${added.apiUrl ? ` (${added.apiUrl})` : ''}`,
          `ref: ${added.ref ?? 'the repository default branch'}`,
          `token: ${added.hasToken ? 'set' : 'not set'}`,
          '',
          `webhook URL: ${added.webhookUrl}`,
          `webhook secret: ${added.webhookSecret}`,
          '',
          'The secret is shown only now: give both to the code host’s webhook settings.',
        ].join('\n'),
      );
    });

  context
    .command('list')
    .description("list a project's context repositories")
    .requiredOption('--project <id>', 'project id')
    .option('--json', 'print as JSON')
    .action(async (options) => {
      const [contextRepositories, publicUrl] = await withApp(
        async (app) => [await app.contextRepositories.list(options.project), app.config.publicUrl] as const,
      ).catch(withFlagNames);
      if (contextRepositories.length > 0) noteBaseUrl(publicUrl);
      print(options.json, { contextRepositories }, () =>
        contextRepositories.length === 0
          ? `project ${options.project} has no context repositories; add one with: docwright context add --project ${options.project} --name NAME --repository URL`
          : [
              table(['NAME', 'HOST', 'REPOSITORY', 'REF', 'TOKEN'], contextRepositories.map(row)),
              '',
              ...contextRepositories.map((r) => `${r.name} webhook URL: ${r.webhookUrl}`),
            ].join('\n'),
      );
    });

  context
    .command('remove')
    .description('remove a context repository; jobs no longer read it')
    .requiredOption('--project <id>', 'project id')
    .requiredOption('--name <name>', 'its name')
    .option('--json', 'print what was removed as JSON')
    .action(async (options) => {
      const removed = await withApp((app) =>
        app.contextRepositories.remove(options.project, options.name),
      ).catch((error: unknown) => {
        if (error instanceof DocwrightError && error.code === 'context-repository-not-found') {
          throw new DocwrightError(
            error.code,
            `${error.message}; see its context repositories with: docwright context list --project ${options.project}`,
            { cause: error },
          );
        }
        return withFlagNames(error);
      });
      print(
        options.json,
        removed,
        () =>
          `removed context repository ${removed.name} (${removed.repository}) from project ${options.project}\n` +
          `Delete the code host's webhook to ${removed.webhookUrl} too.`,
      );
    });
}
