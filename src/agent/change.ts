/**
 * The code changes a job documents (docs/code-context.mdx), as the agent sees them: resolved by the worker
 * through the hosts' APIs (src/git/hosts/change.ts `Change`, which is assignable to the shape
 * here), then briefed in the system prompt and read in full with the `read_change` tool.
 *
 * A change is text anyone can write — a title, a description, a diff — so it is always shown as
 * data, inside a fence its content cannot close: the fence's name carries a digest of the
 * content, which the content cannot contain.
 */
import { createHash } from 'node:crypto';
import { CONTEXT_DIR, DOCS_REPOSITORY } from './code.ts';

export type { AgentChange, AgentChangeFile } from './code-types.ts';

import type { AgentChange, AgentChangeFile } from './code-types.ts';

/**
 * Files of a change kept from its host's listing when the run starts (the worker resolves changes
 * with it): read_change says when this, not the host's own listing limit, cut the list.
 */
export const RESOLVED_CHANGE_FILES = 300;

/** Bounds of the brief in the system prompt. */
export const BRIEF_LIMITS = {
  /** Characters of all briefs together. */
  total: 24_000,
  /** Characters of one change's description. */
  description: 2_000,
  /** Files listed per change. */
  files: 40,
  /** Characters of diff shown per change. */
  diff: 6_000,
};

const cut = (text: string, max: number) =>
  text.length <= max
    ? text
    : `${text.slice(0, max)}… [${text.length - max} more characters: read_change shows all]`;

/** How the change is named: `api#42`, `api@1a2b3c4d`, `api 1a2b3c4..5d6e7f8`. */
export function changeLabel(change: AgentChange): string {
  if (change.kind === 'pull-request') return `${change.repository}#${change.number}`;
  if (change.kind === 'range')
    return `${change.repository} ${(change.baseSha ?? '?').slice(0, 8)}..${change.headSha.slice(0, 8)}`;
  return `${change.repository}@${change.headSha.slice(0, 8)}`;
}

/** Where the change's repository can be read with the tools, at the change's head. */
export function changeCodeFolder(change: AgentChange): string {
  return change.repository === DOCS_REPOSITORY
    ? 'the repository itself (its real paths)'
    : `${CONTEXT_DIR}/${change.repository}/`;
}

/** One line per changed file: `M src/a.ts (+3 -1)`. */
export function fileLine(file: AgentChangeFile): string {
  const status = { added: 'A', modified: 'M', removed: 'D', renamed: 'R' }[file.status];
  // A binary file has no lines: hosts count it +0 -0, which says nothing.
  const counts =
    file.additions === null || file.binary ? '' : ` (+${file.additions} -${file.deletions ?? 0})`;
  const from = file.previousPath && file.previousPath !== file.path ? ` (from ${file.previousPath})` : '';
  return `${status} ${file.path}${from}${counts}${file.binary ? ' [binary]' : ''}`;
}

/** The change's metadata, as read_change and the brief show it. */
export function changeHeader(change: AgentChange, index: number): string[] {
  return [
    `Change ${index}: ${changeLabel(change)} (${change.kind}${change.state ? `, ${change.state}` : ''})`,
    `Title: ${cut(change.title, 300)}`,
    ...(change.url ? [`URL: ${change.url}`] : []),
    ...(change.author ? [`Author: ${change.author}`] : []),
    `Base: ${change.baseRef ?? ''}${change.baseSha ? ` ${change.baseSha.slice(0, 12)}` : ''}`.trimEnd(),
    `Head: ${change.headRef ?? ''}${change.headRef ? ' ' : ''}${change.headSha.slice(0, 12)}`,
    `Code at the head: ${changeCodeFolder(change)}`,
  ];
}

/** Text shown as data: fenced by a tag whose name its content cannot hold. */
export function fenced(kind: string, content: string): string {
  let tag = `${kind}_${createHash('sha256').update(content).digest('hex').slice(0, 16)}`;
  for (let salt = 0; content.includes(tag); salt++) {
    tag = `${kind}_${createHash('sha256').update(`${salt}:${content}`).digest('hex').slice(0, 16)}`;
  }
  return `<${tag}>\n${content}\n</${tag}>`;
}

/** One change's brief: metadata, description, files, the start of the diff. */
function brief(change: AgentChange, index: number): string {
  const files = change.files.slice(0, BRIEF_LIMITS.files).map(fileLine);
  const totalFiles = change.totalFiles ?? change.files.length;
  if (totalFiles > files.length)
    files.push(`… ${totalFiles - files.length} more files: read_change lists them`);
  let diff = '';
  for (const file of change.files) {
    if (!file.diff || diff.length >= BRIEF_LIMITS.diff) continue;
    diff += `--- ${file.path}\n${file.diff}\n`;
  }
  return [
    ...changeHeader(change, index),
    '',
    'Description:',
    cut(change.description.trim() || '(none)', BRIEF_LIMITS.description),
    '',
    `Files (${totalFiles}):`,
    ...files,
    ...(diff ? ['', 'Diff (start):', cut(diff, BRIEF_LIMITS.diff)] : []),
    ...(change.notes.length > 0 ? ['', ...change.notes.slice(0, 10).map((n) => `Note: ${cut(n, 300)}`)] : []),
  ].join('\n');
}

/** The briefs of all changes for the system prompt, bounded; '' when there are none. */
export function changesBrief(changes: readonly AgentChange[]): string {
  if (changes.length === 0) return '';
  const parts: string[] = [];
  let used = 0;
  for (const [index, change] of changes.entries()) {
    const text = brief(change, index);
    if (used + text.length > BRIEF_LIMITS.total) {
      parts.push(
        `(${changes.length - index} more changes, from change ${index} on: read_change shows them.)`,
      );
      break;
    }
    parts.push(fenced('change_data', text));
    used += text.length;
  }
  return parts.join('\n\n');
}
