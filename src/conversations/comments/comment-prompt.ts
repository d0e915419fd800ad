/**
 * The follow-up instruction a comment becomes (docs/pull-request-comments.mdx): its text without
 * the mention, who asked and where; a review comment on a line adds the file, the line and the
 * diff hunk the host sent, so that the model knows what "this" is.
 */
import type { PullRequestComment } from '../../git/hosts/index.ts';
import { withoutMention } from './mention.ts';

/** The most of the comment's text and of a diff hunk carried into the instruction. */
export const MAX_INSTRUCTION_CHARS = 20_000;
export const MAX_HUNK_CHARS = 4_000;

const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max)}\n[… cut]`);

/** The instruction, or null when the comment asks nothing but the mention. */
export function commentInstruction(
  comment: PullRequestComment,
  options: { mention: string; number: number; maxChars: number },
): string | null {
  const asked = withoutMention(comment.body, options.mention);
  if (asked === '') return null;
  // Room is left for who asked and the hunk within the longest prompt the service takes.
  const lines = [
    cut(asked, Math.max(100, Math.min(MAX_INSTRUCTION_CHARS, options.maxChars - MAX_HUNK_CHARS - 500))),
  ];
  const where = comment.position;
  const on = where ? ` on ${where.path}${where.line !== null ? `, line ${where.line}` : ''}` : '';
  lines.push('', `(A comment by @${comment.author.login} on pull request #${options.number}${on}.)`);
  if (where?.diffHunk) {
    const fence = where.diffHunk.includes('```') ? '~~~~' : '```';
    lines.push(
      '',
      'The diff hunk the comment is on:',
      `${fence}diff`,
      cut(where.diffHunk, MAX_HUNK_CHARS),
      fence,
    );
  }
  return lines.join('\n');
}
