/**
 * What one Sphinx document says about the site, read line by line from its reStructuredText:
 * its toctrees, labels, section titles, `:doc:`/`:ref:` targets, the files its directives name,
 * and the markup Sphinx would certainly reject. MyST Markdown pages are read by sphinx-myst.ts
 * into the same shape.
 */

import { lineIndex } from './markdown-links.ts';

/** One entry of a toctree: `intro`, `Title <intro>`, `self`, a URL, or a glob. */
export interface ToctreeEntry {
  line: number;
  /** The explicit title (`Title <target>`), or null. */
  title: string | null;
  /** The target as written (a docname relative to the document, `/absolute`, `self`, a URL or a glob). */
  target: string;
  glob: boolean;
  url: boolean;
}

export interface Toctree {
  line: number;
  caption: string | null;
  hidden: boolean;
  entries: ToctreeEntry[];
}

/** A reference to check: a `:doc:` or `:ref:` target, or a file a directive names. */
export interface MarkupReference {
  /** `link`: a MyST Markdown link to another source file (`[text](other.md)`). */
  kind: 'doc' | 'ref' | 'link' | 'include' | 'literalinclude' | 'image' | 'figure';
  target: string;
  line: number;
}

export interface SphinxDocument {
  /** `:orphan:` metadata: the page is meant to be in no toctree. */
  orphan: boolean;
  /** The first section title, or null. */
  title: string | null;
  toctrees: Toctree[];
  /** Explicit labels (`.. _label:`, MyST `(label)=`, `:name:` options), normalised as Sphinx does. */
  labels: string[];
  /** Section titles, as written. */
  sections: string[];
  references: MarkupReference[];
  /** Markup Sphinx rejects: the line and a message that says the fix. */
  problems: { line: number; message: string }[];
}

export const emptyDocument = (): SphinxDocument => ({
  orphan: false,
  title: null,
  toctrees: [],
  labels: [],
  sections: [],
  references: [],
  problems: [],
});

/** Sphinx's label normalisation: whitespace collapsed, lower case. */
export const normalizeLabel = (label: string) => label.trim().replace(/\s+/g, ' ').toLowerCase();

const DIRECTIVE = /^(\s*)\.\.[ \t]+([A-Za-z0-9][\w.+:-]*?)[ \t]?::(?:[ \t]+(.*))?$/;
const LABEL = /^\s*\.\.[ \t]+_(`[^`]+`|[^:`_][^:]*):\s*$/;
/** Explicit markup that is no directive, target, footnote, citation or substitution: a comment. */
const COMMENT = /^\s*\.\.(?:[ \t]+(?![_[|])|[ \t]*$)/;
const SUBSTITUTION_IMAGE = /^\s*\.\.[ \t]+\|[^|]+\|[ \t]+(?:image|figure)::[ \t]+(\S.*)$/;
/** Directives whose name written with one colon (`.. toctree:`) silently becomes a comment. */
const KNOWN_DIRECTIVES =
  /^\s*\.\.[ \t]+(toctree|include|literalinclude|image|figure|code-block|code|note|warning|tip|important|seealso|admonition|automodule|autoclass|autofunction|versionadded|versionchanged|deprecated)[ \t]*:(?!:)/;
const ADORNMENT = /^([=\-`:'"~^_*+#<>.])\1+\s*$/;
const FIELD = /^\s*:([^:\s][^:]*):(?:\s|$)/;
/** Directives whose content is code: roles and labels in it are not markup. */
const LITERAL_DIRECTIVES = new Set([
  'code-block',
  'code',
  'sourcecode',
  'highlight',
  'math',
  'raw',
  'parsed-literal',
]);
const PATH_DIRECTIVES = new Set(['include', 'literalinclude', 'image', 'figure']);
const ROLE = /:(?:std:)?(doc|ref):`([^`]+)`/g;
const EXPLICIT_TITLE = /^(.+?)\s*<([^<]*?)>$/s;
const URL = /^[a-z][a-z0-9+.-]*:\/\//i;

const indentOf = (line: string) => line.length - line.trimStart().length;
const blank = (line: string | undefined) => line === undefined || line.trim() === '';

/** Splits a role or toctree target into its explicit title and target. */
export function splitTitle(text: string): { title: string | null; target: string } {
  if (text.length > 2_000) return { title: null, target: text.trim() };
  const m = EXPLICIT_TITLE.exec(text.trim());
  return m ? { title: m[1]!.trim(), target: m[2]!.trim() } : { title: null, target: text.trim() };
}

/** The end (exclusive, trailing blank lines left out) of the indented block after line `i`. */
export function blockEnd(lines: string[], i: number, indent: number): number {
  let end = i + 1;
  for (let j = i + 1; j < lines.length; j++) {
    const line = lines[j]!;
    if (blank(line)) continue;
    if (indentOf(line) <= indent) break;
    end = j + 1;
  }
  return end;
}

/** Reads a reStructuredText document; `lineOffset` places text embedded in another file. */
export function readRst(text: string, lineOffset = 0, into = emptyDocument()): SphinxDocument {
  const lines = text.split(/\r?\n/);
  const masked = [...lines];
  into.orphan ||= leadingFields(lines).includes('orphan');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const at = i + 1 + lineOffset;
    const label = LABEL.exec(line);
    if (label) into.labels.push(normalizeLabel(label[1]!.replace(/^`|`$/g, '')));
    if (KNOWN_DIRECTIVES.test(line)) {
      const name = KNOWN_DIRECTIVES.exec(line)![1]!;
      into.problems.push({
        line: at,
        message: `".. ${name}:" has one colon, so Sphinx reads it as a comment: write ".. ${name}::"`,
      });
    }
    const substitution = SUBSTITUTION_IMAGE.exec(line);
    if (substitution) into.references.push({ kind: 'image', target: substitution[1]!.trim(), line: at });
    if (COMMENT.test(line) && !label && !DIRECTIVE.test(line) && !substitution) {
      // A comment, with the indented block under it: nothing in it is markup.
      const end = blockEnd(lines, i, indentOf(line));
      for (let j = i; j < end; j++) masked[j] = '';
      i = end - 1;
      continue;
    }
    const directive = DIRECTIVE.exec(line);
    if (directive) {
      const end = readDirective(lines, i, directive, lineOffset, into);
      if (LITERAL_DIRECTIVES.has(directive[2]!.toLowerCase()))
        for (let j = i + 1; j < end; j++) masked[j] = '';
      continue;
    }
    if (!blank(lines[i + 1]) && ADORNMENT.test(lines[i + 1]!) && isTitle(line, lines[i + 1]!, lines[i - 1])) {
      const title = line.trim();
      into.sections.push(title);
      into.title ??= title;
    }
    // A paragraph ending in "::" introduces a literal block: its lines are not markup.
    if (/::\s*$/.test(line) && !line.trimStart().startsWith('..')) {
      const end = blockEnd(lines, i, indentOf(line));
      for (let j = i + 1; j < end; j++) masked[j] = '';
      i = end - 1;
    }
  }
  readRoles(masked.join('\n'), lineOffset, into);
  return into;
}

/** A section title: underlined at least as long, and flush left unless an overline insets it. */
function isTitle(line: string, underline: string, overline: string | undefined): boolean {
  const title = line.trim();
  const inset = overline !== undefined && overline.trim() === underline.trim();
  return (
    (indentOf(line) === 0 || inset) &&
    title !== '' &&
    !ADORNMENT.test(line) &&
    underline.trim().length >= title.length
  );
}

/** The field names of the field list a document starts with (`:orphan:`, `:tocdepth: 2`). */
function leadingFields(lines: string[]): string[] {
  const names: string[] = [];
  for (const line of lines) {
    if (blank(line) && names.length === 0) continue;
    const m = /^:([\w-]+):/.exec(line);
    if (!m) break;
    names.push(m[1]!.toLowerCase());
  }
  return names;
}

function readRoles(text: string, lineOffset: number, into: SphinxDocument): void {
  const lineOf = lineIndex(text);
  for (const m of text.matchAll(ROLE)) {
    const raw = m[2]!.replace(/\s+/g, ' ');
    if (raw.startsWith('!')) continue; // `!target` asks for no link
    const line = lineOffset + lineOf(m.index);
    into.references.push({ kind: m[1] as 'doc' | 'ref', target: splitTitle(raw).target, line });
  }
}

/** Reads the directive at line `i`; returns the end of its block. */
function readDirective(
  lines: string[],
  i: number,
  match: RegExpExecArray,
  lineOffset: number,
  into: SphinxDocument,
): number {
  const indent = match[1]!.length;
  const name = match[2]!.toLowerCase();
  const argument = (match[3] ?? '').trim();
  const end = blockEnd(lines, i, indent);
  const after = lines[end];
  // Only text at the directive's own level continues its block; a shallower line ends the block
  // around it (the next list item), which needs no blank line.
  if (
    !blank(after) &&
    indentOf(after!) === indent &&
    !blank(lines[end - 1]) &&
    !after!.trimStart().startsWith('..')
  ) {
    into.problems.push({
      line: end + 1 + lineOffset,
      message: `the ".. ${name}::" directive ends without a blank line before the text that follows it: add a blank line after the directive`,
    });
  }
  const body = lines.slice(i + 1, end).map((text, k) => ({ text, line: i + 2 + k + lineOffset }));
  const { options, content, invalid } = splitOptions(body);
  if (invalid !== null) {
    into.problems.push({
      line: invalid,
      message: `the options of ".. ${name}::" are followed by a line that is not an option: leave a blank line between the options and the content`,
    });
  }
  const label = options.get('name');
  if (label) into.labels.push(normalizeLabel(label));
  if (PATH_DIRECTIVES.has(name) && argument !== '') {
    into.references.push({
      kind: name as MarkupReference['kind'],
      target: argument,
      line: i + 1 + lineOffset,
    });
  }
  if (name === 'toctree') into.toctrees.push(toctreeOf(i + 1 + lineOffset, options, content));
  return end;
}

/**
 * docutils' option block: the first block of the directive's body from its first `:field:` line
 * on must be fields (or their indented continuations); lines before it are content.
 */
export function splitOptions(body: { text: string; line: number }[]): {
  options: Map<string, string>;
  content: { text: string; line: number }[];
  invalid: number | null;
} {
  const options = new Map<string, string>();
  const firstBlank = body.findIndex((l) => blank(l.text));
  const block = firstBlank < 0 ? body : body.slice(0, firstBlank);
  const start = block.findIndex((l) => FIELD.test(l.text));
  if (start < 0) return { options, content: body, invalid: null };
  let invalid: number | null = null;
  let fieldIndent = indentOf(block[start]!.text);
  for (const l of block.slice(start)) {
    const field = FIELD.exec(l.text);
    if (field) {
      fieldIndent = indentOf(l.text);
      options.set(field[1]!.trim().toLowerCase(), l.text.slice(field[0].length).trim());
    } else if (indentOf(l.text) <= fieldIndent && invalid === null) invalid = l.line;
  }
  const content = [...block.slice(0, start), ...(firstBlank < 0 ? [] : body.slice(firstBlank))];
  return { options, content: invalid === null ? content : [], invalid };
}

/** A toctree from its options and content lines (RST and MyST alike). */
export function toctreeOf(
  line: number,
  options: Map<string, string>,
  content: { text: string; line: number }[],
): Toctree {
  const glob = options.has('glob');
  const entries: ToctreeEntry[] = [];
  for (const l of content) {
    const text = l.text.trim();
    if (text === '' || text.startsWith('.. ')) continue;
    const { title, target } = splitTitle(text);
    const url = URL.test(target);
    entries.push({
      line: l.line,
      title,
      target,
      url,
      glob: glob && title === null && !url && /[*?[]/.test(target),
    });
  }
  return { line, caption: options.get('caption') || null, hidden: options.has('hidden'), entries };
}
