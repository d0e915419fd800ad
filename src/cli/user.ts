import { type Command, Option } from 'commander';
import { DocwrightError } from '../errors.ts';
import { print, table, withApp } from './output.ts';
import { fileContents } from './parsers.ts';

/**
 * `docwright user`: dashboard operator accounts (docs/dashboard.mdx, docs/cli.mdx). A password is read from a
 * file or stdin, never from an argument: command lines show up in `ps` and shell history.
 */

interface PasswordOptions {
  passwordFile?: string;
  passwordStdin?: boolean;
  password?: unknown;
}

/** One trailing line break is how files and `echo` end; anything else is part of the password. */
const withoutFinalNewline = (text: string) => text.replace(/\r?\n$/, '');

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('password (then Enter and Ctrl-D): ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function readPassword(options: PasswordOptions): Promise<string> {
  if (options.password !== undefined) {
    throw new DocwrightError(
      'invalid-request',
      'a password is not accepted on the command line (it would show in ps and shell history): use --password-file <path> or --password-stdin',
    );
  }
  if (options.passwordFile !== undefined && options.passwordStdin) {
    throw new DocwrightError('invalid-request', 'give either --password-file or --password-stdin, not both');
  }
  if (options.passwordFile !== undefined) return withoutFinalNewline(options.passwordFile);
  if (options.passwordStdin) return withoutFinalNewline(await readStdin());
  throw new DocwrightError(
    'invalid-request',
    'give the password with --password-file <path> or --password-stdin',
  );
}

const passwordOptions = (command: Command) =>
  command
    .addOption(
      new Option('--password-file <path>', 'read the password from a file').argParser((p) => fileContents(p)),
    )
    .option('--password-stdin', 'read the password from standard input')
    // Accepted only to refuse it with an explanation (commander would echo `--password=value`).
    .addOption(new Option('--password [value]').hideHelp());

export function registerUserCommands(program: Command): void {
  const user = program.command('user').description('manage dashboard operator accounts');

  passwordOptions(
    user
      .command('create')
      .description('create an operator account')
      .requiredOption('--email <email>', 'sign-in e-mail address (case-insensitive)'),
  )
    .option('--json', 'print the operator as JSON')
    .action(async (options: PasswordOptions & { email: string; json?: boolean }) => {
      const password = await readPassword(options);
      const created = await withApp((app) => app.operators.create({ email: options.email, password }));
      print(options.json, created, () => `created operator ${created.id} (${created.email})`);
    });

  user
    .command('list')
    .description('list operator accounts')
    .option('--json', 'print as JSON')
    .action(async (options: { json?: boolean }) => {
      const operators = await withApp((app) => app.operators.list());
      print(options.json, { operators }, () =>
        table(
          ['ID', 'EMAIL', 'CREATED', 'LAST SIGN-IN', 'STATE'],
          operators.map((o) => [
            o.id,
            o.email,
            o.createdAt,
            o.lastSignInAt ?? 'never',
            o.disabledAt ? 'disabled' : 'active',
          ]),
        ),
      );
    });

  user
    .command('disable')
    .description('disable an operator account and end its sessions')
    .requiredOption('--email <email>', 'the account')
    .option('--json', 'print the operator as JSON')
    .action(async (options: { email: string; json?: boolean }) => {
      const disabled = await withApp((app) => app.operators.disable(options.email));
      print(
        options.json,
        disabled,
        () => `disabled ${disabled.id} (${disabled.email}) at ${disabled.disabledAt}`,
      );
    });

  passwordOptions(
    user
      .command('password')
      .description("set an operator's password (ends the account's sessions)")
      .requiredOption('--email <email>', 'the account'),
  )
    .option('--json', 'print the operator as JSON')
    .action(async (options: PasswordOptions & { email: string; json?: boolean }) => {
      const password = await readPassword(options);
      const changed = await withApp((app) => app.operators.changePassword(options.email, password));
      print(options.json, changed, () => `changed the password of ${changed.id} (${changed.email})`);
    });
}
