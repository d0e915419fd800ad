/**
 * The mention that makes a comment an instruction (`@docwright`, `DOCWRIGHT_MENTION`): matched as
 * a word, in any case — `@DocWright` counts, `@docwrightbot`, `@docwright-ci` and
 * `someone@docwright.dev` do not — and removed from the instruction the follow-up runs.
 */

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `@name` not inside another word, e-mail address or longer name (a trailing `.` ends a sentence). */
function mentionPattern(name: string): RegExp {
  return new RegExp(`(?<![\\w@./-])@${escapeRegExp(name)}(?![\\w-]|\\.\\w)`, 'giu');
}

export function mentions(text: string, name: string): boolean {
  return mentionPattern(name).test(text);
}

/** The text without the mention (and the punctuation that addressed it: `@docwright, please…`). */
export function withoutMention(text: string, name: string): string {
  const pattern = new RegExp(`${mentionPattern(name).source}[,:]?`, 'giu');
  return text
    .replace(pattern, '')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
}
