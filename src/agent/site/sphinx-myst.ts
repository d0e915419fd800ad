/**
 * What one MyST Markdown page says about a Sphinx site, in the shape sphinx-markup.ts gives
 * reStructuredText: directive fences (```` ```{toctree} ```` and `:::{toctree}`), `(label)=`
 * targets, headings, `{doc}`/`{ref}` roles, and `{eval-rst}` blocks read as reStructuredText.
 */
import { findInlineLinks, lineIndex } from './markdown-links.ts';
import {
  emptyDocument,
  type MarkupReference,
  normalizeLabel,
  readRst,
  type SphinxDocument,
  splitOptions,
  splitTitle,
  toctreeOf,
} from './sphinx-markup.ts';

const FENCE = /^(\s{0,3})(`{3,}|~{3,}|:{3,})\s*(.*)$/;
const DIRECTIVE_INFO = /^\{([\w:.+-]+)\}\s*(.*)$/;
const MYST_LABEL = /^\s{0,3}\(([^()\s][^()]*)\)=\s*$/;
const HEADING = /^\s{0,3}#{1,6}\s+(.*)$/;
const ROLE = /\{(doc|ref)\}`([^`]+)`/g;
const PATH_DIRECTIVES = new Set(['include', 'literalinclude', 'image', 'figure']);

interface OpenFence {
  char: string;
  length: number;
  /** The directive's name, or null for a code block. */
  name: string | null;
  argument: string;
  line: number;
  body: { text: string; line: number }[];
}

/** Reads a MyST Markdown page. */
export function readMyst(text: string): SphinxDocument {
  const into = emptyDocument();
  const lines = text.split(/\r?\n/);
  let start = 0;
  if (lines[0]?.trim() === '---') {
    const close = lines.findIndex((l, i) => i > 0 && l.trim() === '---');
    if (close > 0) {
      into.orphan = lines.slice(1, close).some((l) => /^orphan:\s*(true|yes)?\s*$/i.test(l.trim()));
      start = close + 1;
    }
  }
  const masked = lines.map((l, i) => (i < start ? '' : l));
  const stack: OpenFence[] = [];
  for (let i = start; i < lines.length; i++) {
    const line = lines[i]!;
    const top = stack.at(-1);
    const fence = FENCE.exec(line);
    if (
      top &&
      fence &&
      fence[2]![0] === top.char &&
      fence[2]!.length >= top.length &&
      fence[3]!.trim() === ''
    ) {
      stack.pop();
      closeFence(top, into);
      if (top.name === null || top.name === 'code-block' || top.name === 'code') {
        for (let j = top.line; j < i + 1; j++) masked[j] = '';
      }
      continue;
    }
    if (top) top.body.push({ text: line, line: i + 1 });
    if (top && (top.name === null || top.name === 'eval-rst' || top.name === 'code-block')) continue;
    if (fence) {
      const info = DIRECTIVE_INFO.exec(fence[3]!.trim());
      const name = info ? info[1]!.toLowerCase() : null;
      if (name === null && fence[2]![0] === ':') continue; // a colon line that opens no directive
      stack.push({
        char: fence[2]![0]!,
        length: fence[2]!.length,
        name,
        argument: info?.[2] ?? '',
        line: i + 1,
        body: [],
      });
      continue;
    }
    readLine(line, into);
  }
  for (const open of stack) {
    if (open.name === null) continue; // an unclosed code block runs to the end, as CommonMark says
    into.problems.push({
      line: open.line,
      message: `the {${open.name}} directive's fence is never closed, so the rest of the page becomes its content: close it with a line of ${open.char.repeat(open.length)}`,
    });
  }
  readRoles(masked.join('\n'), into);
  readLinks(masked.join('\n'), into);
  return into;
}

function readLine(line: string, into: SphinxDocument): void {
  const label = MYST_LABEL.exec(line);
  if (label) into.labels.push(normalizeLabel(label[1]!));
  const heading = HEADING.exec(line);
  if (heading && heading[1]!.trim() !== '') {
    // Closing #s go by trimming, not by a pattern that would backtrack on a long line.
    const title = heading[1]!.replace(/[`*_]/g, '').trimEnd().replace(/\s#+$/, '').trim();
    into.sections.push(title);
    into.title ??= title;
  }
}

/** Options of a directive fence: a `---` YAML block or `:key: value` lines, then the content. */
function fenceOptions(body: { text: string; line: number }[]) {
  if (body[0]?.text.trim() === '---') {
    const close = body.findIndex((l, i) => i > 0 && l.text.trim() === '---');
    if (close > 0) {
      const options = new Map<string, string>();
      for (const l of body.slice(1, close)) {
        const m = /^\s*([\w-]+)\s*:\s*(.*)$/.exec(l.text);
        if (m) options.set(m[1]!.toLowerCase(), m[2]!.replace(/^["']|["']$/g, '').trim());
      }
      return { options, content: body.slice(close + 1), invalid: null };
    }
  }
  return splitOptions(body);
}

function closeFence(fence: OpenFence, into: SphinxDocument): void {
  if (fence.name === null) return;
  if (fence.name === 'eval-rst') {
    const offset = fence.line;
    readRst(fence.body.map((l) => l.text).join('\n'), offset, into);
    return;
  }
  const { options, content, invalid } = fenceOptions(fence.body);
  if (invalid !== null) {
    into.problems.push({
      line: invalid,
      message: `the options of the {${fence.name}} directive are followed by a line that is not an option: leave a blank line between the options and the content`,
    });
  }
  const label = options.get('name');
  if (label) into.labels.push(normalizeLabel(label));
  const argument = fence.argument.trim();
  if (PATH_DIRECTIVES.has(fence.name) && argument !== '') {
    into.references.push({ kind: fence.name as MarkupReference['kind'], target: argument, line: fence.line });
  }
  if (fence.name === 'toctree') into.toctrees.push(toctreeOf(fence.line, options, content));
}

/** Markdown links (not images) outside code spans: MyST turns those to source files into doc links. */
function readLinks(text: string, into: SphinxDocument): void {
  const prose = text.replace(/`+[^`\n]*`+/g, (code) => ' '.repeat(code.length));
  const lineOf = lineIndex(prose);
  for (const link of findInlineLinks(prose)) {
    if (!link.image) into.references.push({ kind: 'link', target: link.url, line: lineOf(link.index) });
  }
}

function readRoles(text: string, into: SphinxDocument): void {
  const lineOf = lineIndex(text);
  for (const m of text.matchAll(ROLE)) {
    const raw = m[2]!.replace(/\s+/g, ' ');
    if (raw.startsWith('!')) continue;
    const line = lineOf(m.index);
    into.references.push({ kind: m[1] as 'doc' | 'ref', target: splitTitle(raw).target, line });
  }
}
