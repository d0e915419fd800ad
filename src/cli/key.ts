import { type Command, Option } from 'commander';
import { DocwrightError } from '../errors.ts';
import { type ApiKeyView, DEFAULT_KEY_EXPIRY_DAYS } from '../keys/keys.ts';
import { print, table, withApp } from './output.ts';
import { duration, isoDate } from './parsers.ts';

const row = (k: ApiKeyView) => [
  k.id,
  k.display,
  k.name ?? '-',
  k.createdAt,
  k.lastUsedAt ?? 'never',
  k.expiresAt ?? 'never',
  k.revokedAt ? 'revoked' : 'active',
];

export function registerKeyCommands(program: Command): void {
  const key = program.command('key').description('manage admin API keys');

  key
    .command('create')
    .description('create an API key for a project (shown once)')
    .requiredOption('--project <id>', 'project id')
    .option('--name <name>', 'a label for the key')
    .addOption(
      new Option(
        '--expires-in <duration>',
        `expire after e.g. 30d, 12h (default ${DEFAULT_KEY_EXPIRY_DAYS}d)`,
      )
        .argParser(duration)
        .conflicts(['expiresAt', 'expiry']),
    )
    .addOption(
      new Option('--expires-at <date>', 'expire at an ISO 8601 time').argParser(isoDate).conflicts('expiry'),
    )
    .option('--no-expiry', 'never expire')
    .option('--json', 'print as JSON')
    .action(async (options) => {
      // `!== undefined`, not truthiness: a zero duration must not mean "never expires". Nothing
      // chosen: the key service's default, as on the dashboard.
      const expiresAt: Date | null | undefined =
        options.expiry === false
          ? null
          : (options.expiresAt ??
            (options.expiresIn !== undefined ? new Date(Date.now() + options.expiresIn) : undefined));
      if (expiresAt && expiresAt.getTime() <= Date.now()) {
        throw new DocwrightError('invalid-request', '--expires-at must be in the future');
      }
      const created = await withApp((app) =>
        app.keys.create(options.project, { name: options.name, expiresAt }),
      );
      print(options.json, created, () =>
        [
          `API key ${created.id} for project ${created.projectId}:`,
          '',
          `  ${created.key}`,
          '',
          'It is shown only now; store it as a secret.',
        ].join('\n'),
      );
    });

  key
    .command('list')
    .description("list a project's API keys")
    .requiredOption('--project <id>', 'project id')
    .option('--json', 'print as JSON')
    .action(async (options) => {
      const keys = await withApp(async (app) => {
        await app.projects.get(options.project);
        return app.keys.list(options.project);
      });
      print(options.json, { keys }, () =>
        table(['ID', 'KEY', 'NAME', 'CREATED', 'LAST USED', 'EXPIRES', 'STATE'], keys.map(row)),
      );
    });

  key
    .command('revoke')
    .description('revoke an API key (takes effect at once)')
    .argument('<key-id>', 'key id (key_…)')
    .option('--json', 'print as JSON')
    .action(async (keyId: string, options) => {
      const revoked = await withApp((app) => app.keys.revoke(keyId));
      print(
        options.json,
        revoked,
        () => `revoked ${revoked.id} (${revoked.display}) at ${revoked.revokedAt}`,
      );
    });
}
