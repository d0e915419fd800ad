/**
 * The Slack Web API as docwright uses it, through the official `@slack/web-api` client (SPEC §20)
 * pointed at `DOCWRIGHT_SLACK_API_URL`. Two clients share the bot token: the background one retries
 * (Slack's rate limits and brief outages; a status message may wait), the one a slash command
 * waits on does not, so that its answer stays within Slack's 3 seconds. The token lives only in
 * the clients' memory: the client's log lines go to our logger, whose redactor knows it.
 */
import { LogLevel, type Logger as SlackLogger, WebClient } from '@slack/web-api';
import type { Logger } from '../../logger.ts';

export interface SlackUser {
  id: string;
  isAdmin: boolean;
  isOwner: boolean;
  isBot: boolean;
}

/** The calls docwright makes, and nothing else. */
export interface SlackWeb {
  /** Posts `text` in `channel`'s thread `threadTs`; returns the new message's ts. */
  postMessage(input: { channel: string; threadTs: string; text: string }): Promise<string>;
  update(input: { channel: string; ts: string; text: string }): Promise<void>;
  /** The bot's own user id (`auth.test`), asked once. */
  botUserId(): Promise<string>;
}

export interface SlackCommandWeb {
  /** `users.info`: whether the user is a workspace admin or owner. */
  user(id: string): Promise<SlackUser>;
}

/** The client's own log lines, at warn and above, through our logger (the token never appears in them). */
function slackLogger(logger: Logger): SlackLogger {
  const line =
    (level: 'warn' | 'error') =>
    (...message: unknown[]) =>
      logger[level]({ component: 'slack-web-api' }, message.map(String).join(' ').slice(0, 500));
  const quiet = () => {};
  return {
    debug: quiet,
    info: quiet,
    warn: line('warn'),
    error: line('error'),
    setLevel: quiet,
    getLevel: () => LogLevel.WARN,
    setName: quiet,
  };
}

function webClient(
  token: string,
  apiUrl: string,
  logger: Logger,
  options: { retries: number; timeoutMs: number },
) {
  return new WebClient(token, {
    slackApiUrl: apiUrl,
    logger: slackLogger(logger),
    logLevel: LogLevel.WARN,
    timeout: options.timeoutMs,
    // Rate-limited calls wait for Slack's Retry-After and count as a retry.
    retryConfig: {
      retries: options.retries,
      factor: 2,
      minTimeout: 500,
      maxTimeout: 10_000,
      randomize: true,
    },
    // Only the configured API URL is ever called.
    allowAbsoluteUrls: false,
  });
}

export function createSlackWeb(token: string, apiUrl: string, logger: Logger): SlackWeb {
  const client = webClient(token, apiUrl, logger, { retries: 4, timeoutMs: 10_000 });
  let botUser: Promise<string> | undefined;
  return {
    async postMessage({ channel, threadTs, text }) {
      const answer = await client.chat.postMessage({
        channel,
        thread_ts: threadTs,
        text,
        unfurl_links: false,
        unfurl_media: false,
      });
      return String(answer.ts);
    },
    async update({ channel, ts, text }) {
      await client.chat.update({ channel, ts, text });
    },
    botUserId() {
      botUser ??= client.auth.test().then((answer) => String(answer.user_id));
      botUser.catch(() => {
        botUser = undefined;
      });
      return botUser;
    },
  };
}

export function createSlackCommandWeb(token: string, apiUrl: string, logger: Logger): SlackCommandWeb {
  const client = webClient(token, apiUrl, logger, { retries: 0, timeoutMs: 2_000 });
  return {
    async user(id) {
      const answer = await client.users.info({ user: id });
      const user = answer.user ?? {};
      return {
        id,
        isAdmin: user.is_admin === true,
        isOwner: user.is_owner === true || user.is_primary_owner === true,
        isBot: user.is_bot === true,
      };
    },
  };
}
