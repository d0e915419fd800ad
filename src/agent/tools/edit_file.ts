import { z } from 'zod';
import { toleratedUpTo } from '../edit/ladder.ts';
import { applyEdits, firstMatch, type Place, type Plan, planEdit, rankOf } from '../edit/plan.ts';
import { toLf } from '../edit/text.ts';
import { spellingsOf } from '../path-case.ts';
import { ToolError } from '../types.ts';
import type { Workspace } from '../workspace.ts';
import { decodeText, lineAt, numbered, plural, splitLines } from './shared.ts';
import type { AgentTool } from './tool.ts';

const parameters = z.object({
  path: z.string().describe('File to edit, relative to the repository root. Read it with read_file first.'),
  old_string: z
    .string()
    .describe(
      'The exact text to replace, copied from the file without the line-number prefix of read_file, including indentation. It must occur exactly once unless replace_all is true: include enough surrounding lines to make it unique.',
    ),
  new_string: z
    .string()
    .describe('The text to put in its place (must differ from old_string). Empty deletes it.'),
  replace_all: z
    .boolean()
    .optional()
    .describe('Replace every occurrence of old_string instead of exactly one. Default: false.'),
});

export const editFile: AgentTool<z.infer<typeof parameters>> = {
  name: 'edit_file',
  description:
    'Replace an exact piece of text in a file that was read in this run. Copy old_string from the file exactly. Small slips are tolerated when they leave only one match: line endings, Unicode normalisation, trailing whitespace, indentation (shifted or tabs for spaces; new_string is re-indented the same way) and typographic quotes; the file keeps its own. If old_string matches more than once, the error shows each place: add surrounding lines to make it unique, or set replace_all. To create a file or replace all of it, use write_file.',
  parameters,
  async execute({ path, old_string, new_string, replace_all = false }, { workspace }) {
    if (old_string === '') {
      throw new ToolError(
        'old_string is empty; to create a file or replace all of its content, use write_file.',
      );
    }
    if (old_string === new_string) {
      throw new ToolError('old_string and new_string are identical; there is nothing to change.');
    }
    const given = workspace.locate(path);
    const spelled = spellingsOf(workspace.root, given.relative);
    if ('files' in spelled && spelled.files.length > 1) {
      throw new ToolError(
        `File not found: ${given.relative}. These files match it but for upper and lower case:\n${spelled.files.map((f) => `  ${f}`).join('\n')}\nGive the path exactly as list_files shows it.`,
      );
    }
    const target = 'files' in spelled && spelled.files.length === 1 ? spelled.files[0]! : given.relative;
    const { relative } = workspace.locate(target, { write: true });
    let file: ReturnType<typeof workspace.readFile>;
    try {
      file = workspace.readFile(relative);
    } catch (error) {
      if (error instanceof ToolError && error.message.startsWith('File not found')) {
        throw new ToolError(`${error.message}\nTo create a new file, use write_file.`);
      }
      throw error;
    }
    workspace.assertReadAndUnchanged(relative);
    const content = decodeText(relative, file.bytes);

    const context: Context = { workspace, relative, content, old_string };
    const plan = planEdit(content, old_string, new_string, replace_all);
    if (plan.kind !== 'edit') throw new ToolError(refusal(plan, context));
    // A tolerated match is not taken when old_string matched the file better before an earlier
    // edit: that is the text the model meant, and it is gone.
    const stale = plan.level === null ? null : staleness(context, rankOf(plan.level));
    if (stale !== null) throw new ToolError(staleMessage(relative, stale));
    // The size is known before the new content is built: a replace_all that would grow the file
    // past its cap is refused without ever holding the oversized text.
    let replacedBytes = 0;
    for (const edit of plan.edits) replacedBytes += Buffer.byteLength(content.slice(edit.start, edit.end));
    const bytes = file.bytes.length - replacedBytes + plan.bytes;
    workspace.locate(relative, { write: true, bytes, charge: plan.bytes });
    const updated = applyEdits(content, plan.edits);
    workspace.writeFile(relative, updated, plan.bytes);
    workspace.editHistory.remember(relative, content);

    const first = plan.edits[0]!;
    const notes = [
      relative === given.relative ? '' : `the path was given as ${given.relative}`,
      plan.differences.length > 0 ? `matched ignoring differences in ${listed(plan.differences)}` : '',
    ].filter((n) => n !== '');
    const summary = `Edited ${relative}: replaced ${plural(plan.edits.length, 'occurrence')}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}.`;
    return `${summary}\n${snippet(updated, lineAt(updated, first.start), first.text)}`;
  },
};

interface Context {
  workspace: Workspace;
  relative: string;
  content: string;
  old_string: string;
}

function refusal(plan: Exclude<Plan, { kind: 'edit' }>, context: Context): string {
  const { relative, content } = context;
  if (plan.kind === 'ambiguous') {
    const count = `${plan.total}${plan.atLeast ? ' or more' : ''}`;
    const where =
      plan.level === null
        ? `old_string occurs ${count} times in ${relative}`
        : `old_string is not in ${relative} exactly; ignoring differences in ${toleratedUpTo(plan.level)}, it matches ${count} places`;
    return [
      `${where}:`,
      ...places(content, plan.places, plan.total),
      'Include more surrounding lines in old_string, copied exactly as read_file shows them, so that it matches only one of these; or set replace_all to true to replace every one.',
    ].join('\n');
  }
  if (plan.kind === 'too-many') {
    return `Ignoring differences in ${toleratedUpTo(plan.level)}, old_string may match too many places in ${relative} to tell which one is meant. Copy old_string exactly as read_file shows it, with a line or two that occur nowhere else.`;
  }
  if (plan.kind === 'unindentable') {
    return [
      `old_string matches ${relative} at line ${plan.place.line} with a different indentation, but new_string has a line indented by ${JSON.stringify(plan.indent)}, which cannot be shifted the same way.`,
      'Copy old_string with its indentation exactly as read_file shows it, and indent new_string to match.',
    ].join('\n');
  }
  const stale = staleness(context, Number.POSITIVE_INFINITY);
  if (stale !== null) return staleMessage(relative, stale);
  return notFoundMessage(relative, content, context.old_string, plan.uneven);
}

const staleMessage = (relative: string, then: Place) =>
  `old_string is not in ${relative} as it is now: it is text from before your earlier edit of this file (line ${then.line} then). Read the file again with read_file and copy old_string from its current content.`;

/**
 * Where old_string matched this file, before an earlier edit of this run, more strictly than
 * `rank` (firstMatch's); null when it never did.
 */
function staleness({ workspace, relative, old_string }: Context, rank: number): Place | null {
  for (const version of workspace.editHistory.earlier(relative)) {
    const found = firstMatch(version, old_string);
    if (found !== null && found.rank < rank) return found.place;
  }
  return null;
}

/** Places listed with the text of their first line, as read_file numbers it. */
function places(content: string, list: readonly Place[], total: number): string[] {
  const lines = splitLines(content);
  const shown = list.slice(0, 10).map((p) => {
    const range = p.lastLine > p.line ? `   (lines ${p.line}-${p.lastLine})` : '';
    // The first line of the place that shows something.
    let n = p.line;
    while (n < p.lastLine && (lines[n - 1] ?? '').trim() === '') n++;
    return `${numbered(n, cutForMessage(lines[n - 1] ?? ''))}${range}`;
  });
  if (total > shown.length) {
    const more = list.slice(10).map((p) => p.line);
    const hidden = total - shown.length - more.length;
    shown.push(
      `…and ${total - shown.length} more${more.length > 0 ? `, at lines ${more.join(', ')}` : ''}${hidden > 0 ? ` and ${hidden} others` : ''}.`,
    );
  }
  return shown;
}

function notFoundMessage(relative: string, content: string, oldString: string, uneven: Place[]): string {
  const lines = splitLines(content);
  const parts = [`old_string was not found in ${relative}.`];
  if (uneven.length > 0) {
    parts.push(
      `It matches line ${uneven[0]!.line} but for its indentation, which differs by a different amount from line to line. Copy the indentation exactly as read_file shows it.`,
    );
    return parts.join('\n');
  }
  const prefixed = /^ *\d+\t/m.test(oldString);
  const first = oldString.split('\n').find((l) => l.trim() !== '') ?? oldString;
  const target = (prefixed && /^ *\d+\t/.test(first) ? first.slice(first.indexOf('\t') + 1) : first).trim();
  const scored = lines
    .map((line, i) => ({ number: i + 1, line, score: similarity(target, line.trim()) }))
    .filter((s) => s.score > 0.3)
    .sort((a, b) => b.score - a.score || a.number - b.number)
    .slice(0, 3)
    .sort((a, b) => a.number - b.number);
  if (prefixed) {
    parts.push(
      'It seems to include the line-number prefixes of read_file: copy only the text after the tab.',
    );
  }
  if (scored.length > 0) {
    parts.push(
      `The lines closest to its first line (${JSON.stringify(cutForMessage(target))}) are:`,
      ...scored.map((s) => numbered(s.number, cutForMessage(s.line))),
    );
  } else {
    parts.push(`No line of the file resembles its first line (${JSON.stringify(cutForMessage(target))}).`);
  }
  parts.push('Read the file again and copy the text exactly, including indentation.');
  return parts.join('\n');
}

const cutForMessage = (s: string): string => (s.length > 200 ? `${s.slice(0, 200)}…` : s);

const listed = (items: string[]): string =>
  items.length === 1 ? items[0]! : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;

/** Dice coefficient over character bigrams: how many characters two lines share, in order. */
function similarity(a: string, b: string): number {
  if (a === b) return a === '' ? 0 : 1;
  if (a.length < 2 || b.length < 2) return 0;
  const counts = new Map<string, number>();
  for (let i = 0; i < a.length - 1; i++) {
    const gram = a.slice(i, i + 2);
    counts.set(gram, (counts.get(gram) ?? 0) + 1);
  }
  let shared = 0;
  for (let i = 0; i < b.length - 1; i++) {
    const gram = b.slice(i, i + 2);
    const n = counts.get(gram);
    if (n) {
      shared++;
      counts.set(gram, n - 1);
    }
  }
  return (2 * shared) / (a.length - 1 + b.length - 1);
}

/** The edited region with two lines of context, numbered like read_file. */
function snippet(content: string, firstLine: number, replacement: string): string {
  const lines = splitLines(content);
  const replacedLines = toLf(replacement).split('\n').length;
  const from = Math.max(1, firstLine - 2);
  const to = Math.min(lines.length, firstLine + replacedLines - 1 + 2, from + 20);
  const out: string[] = [];
  for (let n = from; n <= to; n++) out.push(numbered(n, lines[n - 1]!));
  return out.join('\n');
}
