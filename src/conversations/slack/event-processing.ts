/**
 * What a stored Slack event does (docs/slack.mdx). An `app_mention` in a linked channel is an
 * instruction: a new job when its thread has none, a follow-up on the thread's job otherwise
 * (while that job is still working the mention is answered "busy" and starts nothing). A mention
 * in an unlinked channel gets a reply saying how to link it. The app's own messages and other
 * bots' are ignored; files and links in the message are never fetched. Everything a mention
 * creates is keyed by its event id, so that processing it twice creates nothing new.
 */
import { DocwrightError, isDocwrightError } from '../../errors.ts';
import { requestFingerprint } from '../../jobs/idempotency.ts';
import type { JobService } from '../../jobs/job-service.ts';
import type { SlackEventRow } from './events.ts';
import { createBodyFor } from './job-request.ts';
import type { SlackLinks } from './links.ts';
import { mentionPrompt, threadOf } from './mentions.ts';
import type { SlackWeb } from './slack-client.ts';
import { BUSY_TEXT, EMPTY_MENTION_TEXT, howToLinkText, refusedText } from './status-text.ts';
import type { SlackThreads } from './threads.ts';

export interface EventProcessingDeps {
  links: SlackLinks;
  threads: SlackThreads;
  jobs: Pick<JobService, 'create' | 'message'>;
  /** Undefined without a bot token: nothing can be answered. */
  web: SlackWeb | undefined;
}

/** The parts of an `app_mention` event docwright reads. */
interface Mention {
  user?: string;
  bot_id?: string;
  subtype?: string;
  text: string;
  ts: string;
  thread_ts?: string;
  channel: string;
}

interface Envelope {
  event_id: string;
  authorizations?: { user_id?: string; is_bot?: boolean }[];
  event?: Record<string, unknown>;
}

const TS = /^\d{1,12}\.\d{1,9}$/;
const CHANNEL = /^[CGD][A-Z0-9]{2,30}$/;

/** The event as a mention, or why it is not one docwright acts on. */
function mentionOf(envelope: Envelope): Mention | string {
  const event = envelope.event ?? {};
  if (event.type !== 'app_mention') return `ignored: event type ${String(event.type).slice(0, 40)}`;
  if (typeof event.bot_id === 'string' || event.subtype === 'bot_message') return 'ignored: from a bot';
  const { text, ts, channel, thread_ts } = event;
  if (typeof text !== 'string' || typeof ts !== 'string' || !TS.test(ts)) return 'ignored: malformed';
  if (typeof channel !== 'string' || !CHANNEL.test(channel)) return 'ignored: malformed';
  if (thread_ts !== undefined && (typeof thread_ts !== 'string' || !TS.test(thread_ts)))
    return 'ignored: malformed';
  return event as unknown as Mention;
}

/** An error Slack answered (`ok: false`: not_in_channel, channel_not_found…), or undefined. */
function slackRefusal(error: unknown): string | undefined {
  const e = error as { code?: string; data?: { error?: unknown } };
  return e.code === 'slack_webapi_platform_error' ? String(e.data?.error ?? 'error').slice(0, 80) : undefined;
}

/**
 * Processes one stored event; returns what became of it (the event's `result`). Slack refusing an
 * answer (the app is not in the channel…) ends it; Slack unreachable or a database failure throws,
 * and the event is taken again later.
 */
export async function processSlackEvent(row: SlackEventRow, deps: EventProcessingDeps): Promise<string> {
  try {
    return await processEnvelope(row, deps);
  } catch (error) {
    const refusal = slackRefusal(error);
    if (refusal === undefined) throw error;
    return `failed: Slack answered ${refusal}`;
  }
}

async function processEnvelope(row: SlackEventRow, deps: EventProcessingDeps): Promise<string> {
  let envelope: Envelope;
  try {
    envelope = JSON.parse(row.body) as Envelope;
  } catch {
    return 'ignored: not JSON';
  }
  const mention = mentionOf(envelope);
  if (typeof mention === 'string') return mention;
  const { web } = deps;
  if (!web) return 'failed: DOCWRIGHT_SLACK_BOT_TOKEN is not set';
  const botUserId =
    envelope.authorizations?.find((a) => a.is_bot && typeof a.user_id === 'string')?.user_id ??
    (await web.botUserId());
  if (mention.user !== undefined && mention.user === botUserId) return 'ignored: own message';
  const threadTs = threadOf(mention);
  const reply = (text: string) => web.postMessage({ channel: mention.channel, threadTs, text });

  const projectId = await deps.links.projectOf(mention.channel);
  if (!projectId) {
    await reply(howToLinkText(mention.channel));
    return 'ignored: channel not linked (told how to link it)';
  }
  const prompt = mentionPrompt(mention.text, botUserId);
  if (prompt === '') {
    await reply(EMPTY_MENTION_TEXT);
    return 'ignored: nothing besides the mention';
  }
  try {
    return await instruct(
      deps,
      { projectId, channel: mention.channel, threadTs, prompt, eventId: row.event_id },
      reply,
    );
  } catch (error) {
    // A refusal (rate limit, budget, archived job, invalid prompt) is told in the thread; a
    // database failure leaves the event to be processed again.
    if (!isDocwrightError(error) || error.status >= 500) throw error;
    await reply(refusedText(error.message));
    return `refused: ${error.code}`;
  }
}

/** A new job for the thread, or a follow-up on its job. */
async function instruct(
  deps: EventProcessingDeps,
  input: { projectId: string; channel: string; threadTs: string; prompt: string; eventId: string },
  reply: (text: string) => Promise<string>,
): Promise<string> {
  const { projectId, channel, threadTs, prompt, eventId } = input;
  const key = `slack:${eventId}`.slice(0, 200);
  const thread = await deps.threads.find(channel, threadTs);
  if (!thread) {
    const body = createBodyFor(prompt);
    const path = `/v2/agent/${projectId}/job`;
    const created = await deps.jobs.create(projectId, body, {
      key,
      fingerprint: requestFingerprint('POST', path, body),
    });
    const { job } = created;
    await deps.threads.open({ channelId: channel, threadTs, projectId, jobId: job.id, eventId });
    return `job: ${job.id}`;
  }
  // This event opened the thread, and is processed again (a crash before it was marked).
  if (thread.event_id === eventId) return `job: ${thread.job_id}`;
  if (thread.project_id !== projectId) {
    throw new DocwrightError(
      'invalid-request',
      'this thread belongs to a job of the project this channel was linked to before; start a new thread',
    );
  }
  // The job's own state decides (a replay of this event's follow-up is answered from storage).
  const body = { prompt };
  const path = `/v2/agent/${projectId}/job/${thread.job_id}/message`;
  try {
    await deps.jobs.message(projectId, thread.job_id, body, {
      key,
      fingerprint: requestFingerprint('POST', path, body),
    });
  } catch (error) {
    if (!isDocwrightError(error) || error.code !== 'job-busy') throw error;
    await reply(BUSY_TEXT);
    return `busy: ${thread.job_id}`;
  }
  return `follow-up: ${thread.job_id}`;
}
