/**
 * What a Slack message says to docwright (docs/slack.mdx), as pure functions of its text: the
 * instruction with the app's mention removed, whether it is a question, and the slash command's
 * words. Slack escapes `&`, `<` and `>` in message text and writes mentions and links as
 * `<@U123>`, `<#C123|name>`, `<https://…|label>`; links are kept as text and never fetched.
 */

/** Longest instruction taken from one message (Slack's own limit is 40,000 characters). */
export const MAX_MENTION_CHARS = 40_000;

/** The message's text as the prompt: the app's mentions removed, Slack's escapes undone, trimmed. */
export function mentionPrompt(text: string, botUserId: string | undefined): string {
  const bounded = text.slice(0, MAX_MENTION_CHARS);
  const withoutBot = botUserId
    ? bounded.replace(new RegExp(`<@${escapeRegExp(botUserId)}(?:\\|[^>]*)?>`, 'g'), ' ')
    : // The bot's id unknown: the first mention is the one that addressed it.
      bounded.replace(/<@[A-Z0-9]+(?:\|[^>]*)?>/, ' ');
  return unescapeSlack(withoutBot)
    .replace(/[ \t]+/g, ' ')
    .trim();
}

/** Slack's three escapes, undone (`&amp;` last, so that `&amp;lt;` reads `&lt;`). */
export function unescapeSlack(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/**
 * Whether an instruction is a question, which becomes an ask job (SPEC §20 "Questions"): one
 * whose last character, past trailing spaces and closing quotes or brackets, is `?` (or the
 * full-width `？`).
 */
export function isQuestion(prompt: string): boolean {
  return /[?？][\s"'”’)\]}*_~`]*$/.test(prompt) && prompt.replace(/[?？\s]/g, '') !== '';
}

/** What `/docwright …` asks for. */
export type SlashCommand =
  | { action: 'link'; projectId: string }
  | { action: 'unlink' }
  | { action: 'help' }
  | { action: 'invalid'; message: string };

const PROJECT_ID = /^prj_[0-9a-hjkmnp-tv-z]{26}$/;

/** The slash command's text (`link prj_…`, `unlink`, `help`, or nothing). */
export function parseSlashCommand(text: string): SlashCommand {
  const words = unescapeSlack(text.slice(0, 1000)).trim().split(/\s+/).filter(Boolean);
  const [verb, ...rest] = words;
  switch (verb?.toLowerCase()) {
    case undefined:
    case 'help':
      return { action: 'help' };
    case 'link': {
      const projectId = rest[0]?.toLowerCase();
      if (rest.length !== 1 || projectId === undefined || !PROJECT_ID.test(projectId)) {
        return { action: 'invalid', message: 'usage: `/docwright link prj_…` with the project’s ID' };
      }
      return { action: 'link', projectId };
    }
    case 'unlink':
      return rest.length === 0
        ? { action: 'unlink' }
        : { action: 'invalid', message: 'usage: `/docwright unlink`' };
    default:
      return { action: 'invalid', message: `unknown command \`${String(verb).slice(0, 40)}\`` };
  }
}

/** The thread a reply to `event` goes in: its own thread, or the thread it started. */
export function threadOf(event: { ts: string; thread_ts?: string | undefined }): string {
  return event.thread_ts ?? event.ts;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
