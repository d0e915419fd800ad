/**
 * A line scanner for what link checks need of a Markdown page — links, images, reference
 * definitions, headings (ATX and setext) and HTML ids — in time linear in the page. A full
 * CommonMark parser (micromark) reads about 0.1 MB a second, so a 700 KB release-notes page took
 * seven seconds; this reads it in milliseconds. Fenced code, indented code (outside lists) and
 * code spans are skipped as CommonMark skips them. No pattern here backtracks on long lines.
 */
import { findInlineLinks, lineIndex } from '../site/markdown-links.ts';

export interface ScannedLink {
  url: string;
  line: number;
}

export interface ScannedMarkdown {
  links: ScannedLink[];
  /** Heading text as written (inline markup kept), in order. */
  headings: { text: string; line: number }[];
  /** Text blocks outside code (paragraphs, list items…), for attribute ids. */
  blocks: string[];
  /** HTML `id`/`name` attribute values. */
  htmlIds: string[];
}

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*))?$/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;
const LIST_ITEM = /^ {0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)/;
const NOT_PARAGRAPH = /^ {0,3}(?:[-*+>#|<]|\d{1,9}[.)]|`{3}|~{3})/;
const DEFINITION = /^ {0,3}\[([^\]\n]{1,999})\]:[ \t]*(<[^>\n]*>|\S+)/gm;
const HTML_TAG = /<[a-z][^<>]*>/gi;
const HTML_ID = /\s(?:id|name)\s*=\s*["']([^"']+)["']/gi;

const indentOf = (line: string) => line.length - line.trimStart().length;

/** Code spans replaced by spaces of the same length, so that nothing in them is markup. */
export function blankCodeSpans(text: string): string {
  return text.replace(/(`+)(?!`)[\s\S]*?[^`]\1(?!`)|(`+)(?!`)\2/g, (code) => code.replace(/[^\n]/g, ' '));
}

/** Scans a Markdown page. */
export function scanMarkdown(text: string): ScannedMarkdown {
  const out: ScannedMarkdown = { links: [], headings: [], blocks: [], htmlIds: [] };
  const lines = text.split('\n');
  let fence: { char: string; length: number } | null = null;
  let block: { start: number; lines: string[] } | null = null;
  let inList = false;
  const flush = () => {
    if (block) scanBlock(block.lines.join('\n'), block.start, out);
    block = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (fence) {
      const close = FENCE.exec(line);
      if (close && close[1]![0] === fence.char && close[1]!.length >= fence.length && close[2]!.trim() === '')
        fence = null;
      continue;
    }
    const open = FENCE.exec(line);
    if (open && !(open[1]![0] === '`' && open[2]!.includes('`'))) {
      flush();
      fence = { char: open[1]![0]!, length: open[1]!.length };
      continue;
    }
    if (line.trim() === '') {
      flush();
      continue;
    }
    // An indented block after a blank line is code, unless it continues a list item.
    if (!block && indentOf(line) >= 4 && !inList) continue;
    if (indentOf(line) < 4 && !block) inList = LIST_ITEM.test(line);
    const atx = ATX.exec(line);
    if (atx) {
      flush();
      out.headings.push({ text: withoutClosingHashes(atx[2] ?? ''), line: i + 1 });
      scanBlock(line, i + 1, out);
      continue;
    }
    const next = lines[i + 1];
    if (
      !block &&
      next !== undefined &&
      SETEXT.test(next) &&
      !NOT_PARAGRAPH.test(line) &&
      indentOf(line) < 4
    ) {
      out.headings.push({ text: line.trim(), line: i + 1 });
      scanBlock(line, i + 1, out);
      i++;
      continue;
    }
    if (block) block.lines.push(line);
    else block = { start: i + 1, lines: [line] };
  }
  flush();
  return out;
}

/** An ATX heading's text without its optional closing `#`s (a loop: a pattern here backtracks). */
function withoutClosingHashes(text: string): string {
  const trimmed = text.trimEnd();
  let i = trimmed.length;
  while (i > 0 && trimmed[i - 1] === '#') i--;
  if (i === trimmed.length) return trimmed;
  if (i === 0) return '';
  return trimmed[i - 1] === ' ' || trimmed[i - 1] === '\t' ? trimmed.slice(0, i).trimEnd() : trimmed;
}

function scanBlock(text: string, start: number, out: ScannedMarkdown): void {
  const prose = blankCodeSpans(text);
  out.blocks.push(prose);
  const lineOf = lineIndex(prose);
  const lineAt = (index: number) => start + lineOf(index) - 1;
  for (const link of findInlineLinks(prose)) out.links.push({ url: link.url, line: lineAt(link.index) });
  for (const m of prose.matchAll(DEFINITION)) out.links.push({ url: unwrap(m[2]!), line: lineAt(m.index) });
  if (!prose.includes('<')) return;
  for (const tag of prose.matchAll(HTML_TAG))
    for (const m of tag[0].matchAll(HTML_ID)) out.htmlIds.push(m[1]!);
}

const unwrap = (url: string) => (url.startsWith('<') && url.endsWith('>') ? url.slice(1, -1) : url);
