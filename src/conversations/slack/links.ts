/**
 * Channel ↔ project links (docs/slack.mdx): a Slack channel is linked to one project, a project to
 * any number of channels. Mentions of the app in a linked channel start jobs on its project.
 * Linking a channel that is linked already moves it (the answer says from where).
 */
import type { Kysely } from 'kysely';
import { DocwrightError } from '../../errors.ts';
import type { ProjectService } from '../../projects/projects.ts';
import type { Database } from '../../store/schema.ts';

export interface SlackLink {
  channelId: string;
  projectId: string;
  linkedBy: string;
  createdAt: string;
}

/** What a link did: `previousProjectId` when the channel was linked to another project. */
export interface LinkResult extends SlackLink {
  previousProjectId: string | null;
}

/** Slack's channel ids: public `C…`, private `G…` (older) and direct-message `D…` conversations. */
const CHANNEL_ID = /^[CGD][A-Z0-9]{2,30}$/;

/** A channel id as given (any case, surrounding spaces), or a field error. */
export function parseChannelId(raw: unknown): string {
  const value = typeof raw === 'string' ? raw.trim().toUpperCase() : '';
  if (!CHANNEL_ID.test(value)) {
    const message = 'must be a Slack channel ID such as C0123ABCD (channel details → About, at the bottom)';
    throw new DocwrightError('invalid-request', `channel ${message}`, {
      fields: [{ field: 'channel', message }],
    });
  }
  return value;
}

const toLink = (row: { channel_id: string; project_id: string; linked_by: string; created_at: string }) => ({
  channelId: row.channel_id,
  projectId: row.project_id,
  linkedBy: row.linked_by,
  createdAt: row.created_at,
});

export type SlackLinks = ReturnType<typeof createSlackLinks>;

export function createSlackLinks(deps: {
  db: Kysely<Database>;
  projects: Pick<ProjectService, 'getRow'>;
  now: () => Date;
}) {
  const { db } = deps;
  return {
    /** Links `channel` to the project (moving it from another); `linkedBy` says who. */
    async link(projectId: string, channel: unknown, linkedBy: string): Promise<LinkResult> {
      const channelId = parseChannelId(channel);
      if (!(await deps.projects.getRow(projectId))) {
        throw new DocwrightError('project-not-found', `project ${projectId} does not exist`);
      }
      return db.transaction().execute(async (trx) => {
        const before = await trx
          .selectFrom('slack_links')
          .select('project_id')
          .where('channel_id', '=', channelId)
          .executeTakeFirst();
        const row = {
          channel_id: channelId,
          project_id: projectId,
          linked_by: linkedBy.slice(0, 200),
          created_at: deps.now().toISOString(),
        };
        await trx
          .insertInto('slack_links')
          .values(row)
          .onConflict((oc) =>
            oc.column('channel_id').doUpdateSet({
              project_id: row.project_id,
              linked_by: row.linked_by,
              created_at: row.created_at,
            }),
          )
          .execute();
        const previous = before && before.project_id !== projectId ? before.project_id : null;
        return { ...toLink(row), previousProjectId: previous };
      });
    },

    /** Unlinks `channel`; refuses a channel that is not linked (`not-found`). */
    async unlink(channel: unknown, options: { projectId?: string } = {}): Promise<SlackLink> {
      const channelId = parseChannelId(channel);
      let query = db.deleteFrom('slack_links').where('channel_id', '=', channelId);
      if (options.projectId) query = query.where('project_id', '=', options.projectId);
      const [removed] = await query.returningAll().execute();
      if (!removed) {
        throw new DocwrightError(
          'not-found',
          `channel ${channelId} is not linked${options.projectId ? ` to project ${options.projectId}` : ''}`,
        );
      }
      return toLink(removed);
    },

    /** Every link, or the project's; by channel id. */
    async list(projectId?: string): Promise<SlackLink[]> {
      let query = db.selectFrom('slack_links').selectAll();
      if (projectId !== undefined) query = query.where('project_id', '=', projectId);
      return (await query.orderBy('channel_id').execute()).map(toLink);
    },

    /** The project `channelId` is linked to, if any. */
    async projectOf(channelId: string): Promise<string | undefined> {
      const row = await db
        .selectFrom('slack_links')
        .select('project_id')
        .where('channel_id', '=', channelId)
        .executeTakeFirst();
      return row?.project_id;
    },
  };
}
