/**
 * `/docwright link prj_…`, `/docwright unlink` and `/docwright help` (docs/slack.mdx), answered
 * ephemerally (only the person who typed it sees the answer). Linking and unlinking are for
 * Slack workspace admins and owners, as Slack tells (`users.info`): a channel's link decides
 * which project anyone there can start jobs on.
 */
import { isDocwrightError } from '../../errors.ts';
import type { SlackLinks } from './links.ts';
import { parseSlashCommand } from './mentions.ts';
import type { SlackCommandWeb } from './slack-client.ts';

export interface SlashCommandAnswer {
  response_type: 'ephemeral';
  text: string;
}

export interface CommandDeps {
  links: SlackLinks;
  /** Undefined without a bot token: who is an admin cannot be asked. */
  web: SlackCommandWeb | undefined;
}

const ephemeral = (text: string): SlashCommandAnswer => ({ response_type: 'ephemeral', text });

async function helpText(links: SlackLinks, channelId: string): Promise<string> {
  const linked = await links.projectOf(channelId).catch(() => undefined);
  return [
    linked ? `This channel is linked to project \`${linked}\`.` : 'This channel is not linked to a project.',
    '• `/docwright link prj_…`: link this channel to a project (Slack admins)',
    '• `/docwright unlink`: unlink it (Slack admins)',
    '• Mention me with an instruction to start a job; mention me again in its thread to follow up; end with “?” to ask a question.',
  ].join('\n');
}

/** Whether `userId` may link channels, or the answer that says why not. */
async function checkAdmin(
  web: SlackCommandWeb | undefined,
  userId: string,
): Promise<SlashCommandAnswer | undefined> {
  if (!web)
    return ephemeral(
      'The docwright server has no Slack bot token (DOCWRIGHT_SLACK_BOT_TOKEN), so it cannot check who you are.',
    );
  try {
    const user = await web.user(userId);
    if (user.isAdmin || user.isOwner) return undefined;
    return ephemeral(
      'Only a Slack workspace admin or owner can link or unlink channels. Ask one, or link it on the docwright server: `docwright slack link`.',
    );
  } catch (error) {
    const reason = (error as { data?: { error?: string } }).data?.error ?? 'Slack did not answer';
    return ephemeral(`I could not ask Slack who you are (${String(reason).slice(0, 60)}); try again.`);
  }
}

/** The answer to one slash command (its form fields as Slack sent them). */
export async function answerSlashCommand(
  form: Record<string, string | undefined>,
  deps: CommandDeps,
): Promise<SlashCommandAnswer> {
  const channelId = form.channel_id ?? '';
  const userId = form.user_id ?? '';
  const command = parseSlashCommand(form.text ?? '');
  if (command.action === 'help') return ephemeral(await helpText(deps.links, channelId));
  if (command.action === 'invalid')
    return ephemeral(`${command.message}. ${await helpText(deps.links, channelId)}`);
  const refused = await checkAdmin(deps.web, userId);
  if (refused) return refused;
  try {
    if (command.action === 'link') {
      const linked = await deps.links.link(command.projectId, channelId, `slack:${userId}`);
      const moved = linked.previousProjectId ? ` (it was linked to \`${linked.previousProjectId}\`)` : '';
      return ephemeral(
        `Linked this channel to project \`${linked.projectId}\`${moved}. Mention me here with an instruction to start a job.`,
      );
    }
    await deps.links.unlink(channelId);
    return ephemeral('Unlinked this channel: mentions here start nothing now.');
  } catch (error) {
    if (isDocwrightError(error) && error.status < 500) return ephemeral(error.message);
    throw error;
  }
}
