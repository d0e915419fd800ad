/**
 * `docwright slack link|unlink|links` (docs/slack.mdx): which Slack channels start jobs on which
 * project. Admin commands: they use the database directly, as `context` does.
 */
import type { Command } from 'commander';
import type { SlackLink } from '../conversations/slack/links.ts';
import { DocwrightError } from '../errors.ts';
import { print, table, withApp } from './output.ts';

/** Says what to do next after the errors a user can fix. */
function withHints(error: unknown): never {
  if (error instanceof DocwrightError && error.code === 'project-not-found') {
    throw new DocwrightError(error.code, `${error.message}; list projects with: docwright project list`, {
      cause: error,
    });
  }
  if (error instanceof DocwrightError && error.code === 'not-found') {
    throw new DocwrightError(error.code, `${error.message}; see the links with: docwright slack links`, {
      cause: error,
    });
  }
  if (error instanceof DocwrightError && error.fields?.[0]?.field === 'channel') {
    throw new DocwrightError(error.code, `--channel ${error.fields[0].message}`, { cause: error });
  }
  throw error;
}

const row = (link: SlackLink) => [link.channelId, link.projectId, link.linkedBy, link.createdAt];

export function registerSlackCommands(program: Command): void {
  const slack = program.command('slack').description('link Slack channels to projects (the Slack app)');

  slack
    .command('link')
    .description('link a Slack channel to a project: mentions of the app there start jobs on it')
    .requiredOption('--project <id>', 'project id')
    .requiredOption('--channel <id>', 'Slack channel ID (C…), from the channel’s details')
    .option('--json', 'print the link as JSON')
    .action(async (options: { project: string; channel: string; json?: boolean }) => {
      const [linked, configured] = await withApp(
        async (app) =>
          [
            await app.slack.links.link(options.project, options.channel, 'cli'),
            app.slack.configured,
          ] as const,
      ).catch(withHints);
      print(options.json, linked, () =>
        [
          `linked Slack channel ${linked.channelId} to project ${linked.projectId}` +
            (linked.previousProjectId ? ` (moved from project ${linked.previousProjectId})` : ''),
          ...(configured
            ? []
            : [
                'note: DOCWRIGHT_SLACK_SIGNING_SECRET is not set in this shell; the server needs it (docs: Slack)',
              ]),
        ].join('\n'),
      );
    });

  slack
    .command('unlink')
    .description('unlink a Slack channel: mentions there start nothing')
    .requiredOption('--channel <id>', 'Slack channel ID (C…)')
    .option('--json', 'print what was unlinked as JSON')
    .action(async (options: { channel: string; json?: boolean }) => {
      const removed = await withApp((app) => app.slack.links.unlink(options.channel)).catch(withHints);
      print(
        options.json,
        removed,
        () => `unlinked Slack channel ${removed.channelId} from project ${removed.projectId}`,
      );
    });

  slack
    .command('links')
    .description('list the Slack channels linked to projects')
    .option('--project <id>', 'only this project’s channels')
    .option('--json', 'print as JSON')
    .action(async (options: { project?: string; json?: boolean }) => {
      const links = await withApp((app) => app.slack.links.list(options.project)).catch(withHints);
      print(options.json, { links }, () =>
        links.length === 0
          ? `no Slack channel is linked${options.project ? ` to project ${options.project}` : ''}; link one with: docwright slack link --project ID --channel CHANNEL_ID`
          : table(['CHANNEL', 'PROJECT', 'LINKED BY', 'SINCE'], links.map(row)),
      );
    });
}
