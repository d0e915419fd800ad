import { Command, CommanderError } from 'commander';
import { DocwrightError } from '../errors.ts';
import { VERSION } from '../version.ts';
import { registerAutomationCommands } from './automation.ts';
import { registerContextCommands } from './context.ts';
import { registerDoctorCommand } from './doctor.ts';
import { registerEvalCommand } from './eval.ts';
import { registerJobCommands } from './job.ts';
import { registerKeyCommands } from './key.ts';
import { registerMcpCommand } from './mcp.ts';
import { print, withApp } from './output.ts';
import { registerProjectCommands } from './project.ts';
import { registerServeCommands } from './serve.ts';
import { registerSlackCommands } from './slack.ts';
import { registerUserCommands } from './user.ts';
import { registerWebhookCommands } from './webhook.ts';

const program = new Command('docwright')
  .description('docwright: documentation edits from plain-language instructions')
  .version(VERSION)
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride();

registerServeCommands(program);

program
  .command('migrate')
  .description('apply pending database migrations')
  .option('--json', 'print as JSON')
  .action(async (options) => {
    // Open without migrating, or the migrations would already be applied
    // when we ask and the report would always be empty.
    const { migrateToLatest } = await import('../store/migrations.ts');
    const result = await withApp(
      async (app) => ({
        database: app.store.location,
        ...(await migrateToLatest(
          app.store.db,
          app.store.dialect,
          app.config.databaseSchema,
          app.store.location,
        )),
      }),
      { migrate: false },
    );
    print(options.json, result, () =>
      result.applied.length > 0
        ? `applied ${result.applied.join(', ')} to ${result.database}`
        : `database ${result.database} is up to date`,
    );
  });

registerProjectCommands(program);
registerKeyCommands(program);
registerDoctorCommand(program);
registerJobCommands(program);
registerUserCommands(program);
registerWebhookCommands(program);
registerAutomationCommands(program);
registerContextCommands(program);
registerSlackCommands(program);
registerMcpCommand(program);
registerEvalCommand(program);

try {
  await program.parseAsync();
} catch (error) {
  if (error instanceof CommanderError) {
    // Commander has printed its message (help and version exit with code 0).
    process.exit(error.exitCode === 0 ? 0 : 2);
  }
  if (error instanceof DocwrightError) {
    process.stderr.write(`docwright: ${error.message}\n`);
    process.exit(error.status >= 500 ? 1 : 2);
  }
  process.stderr.write(`docwright: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
