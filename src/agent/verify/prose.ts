/**
 * The prose of a Markdown or MDX page, as style and spelling checks read it: the page's text with
 * everything that is not prose — front matter, code blocks and spans, HTML, JSX tags and
 * expressions, `import`/`export`, link and image targets — blanked out (spaces, newlines kept), so
 * that an offset in it is the same offset in the file. Vale and cspell skip the same parts.
 * Parsed once per text (shared by the checks of one tree through a small cache).
 */
import type { Nodes, Parents, Root } from 'mdast';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { gfmFromMarkdown } from 'mdast-util-gfm';
import { mdxFromMarkdown } from 'mdast-util-mdx';
import { gfm } from 'micromark-extension-gfm';
import { mdxjs } from 'micromark-extension-mdxjs';

/** Where a block of prose is, and what kind (Vale's scopes). */
export interface ProseBlock {
  scope: 'heading' | 'paragraph' | 'list' | 'table' | 'blockquote';
  /** 1–6 for a heading. */
  depth?: number;
  /** Offsets of the block's first and past-last characters in the page. */
  start: number;
  end: number;
}

export interface Prose {
  /** The page's text with what is not prose blanked: the same length, the same lines. */
  masked: string;
  /** Headings and paragraphs (list items' and table cells' too), in the page's order. */
  blocks: ProseBlock[];
  /** Ranges of front matter values that are words (not URLs or paths), for the spell checker. */
  frontmatterValues: [number, number][];
}

/** Pages whose prose the checks read. */
export function isProsePage(file: string): boolean {
  return /\.(md|mdx|markdown)$/i.test(file);
}

const FRONTMATTER = /^---[ \t]*\r?\n([\s\S]*?\r?\n)?---[ \t]*(?:\r?\n|$)/;

function parse(text: string, mdx: boolean): Root {
  if (mdx) {
    try {
      return fromMarkdown(text, {
        extensions: [mdxjs(), gfm()],
        mdastExtensions: [mdxFromMarkdown(), gfmFromMarkdown()],
      });
    } catch {
      // A page that does not compile as MDX is still read as Markdown: its prose is still prose.
    }
  }
  return fromMarkdown(text, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] });
}

/** The prose of `text`, a page at `file` (`.mdx` is parsed as MDX, the rest as Markdown). */
export function readProse(file: string, text: string): Prose {
  // Offsets are UTF-16 code units throughout, as the parser's and JavaScript's strings are.
  const source = text;
  const front = FRONTMATTER.exec(source);
  const frontEnd = front ? front[0].length : 0;
  // Front matter is blanked before parsing (the parser would read it as a heading or a rule).
  const body = front ? source.slice(0, frontEnd).replace(/[^\r\n]/g, ' ') + source.slice(frontEnd) : source;
  const tree = parse(body, /\.mdx$/i.test(file));
  const kept: [number, number][] = [];
  const blocks: ProseBlock[] = [];
  collect(tree, kept, blocks, undefined);
  const chars = Array.from({ length: source.length }, (_, i) =>
    source[i] === '\n' || source[i] === '\r' ? source[i]! : ' ',
  );
  for (const [start, end] of kept) copyText(source, chars, start, end);
  return {
    masked: chars.join(''),
    blocks,
    frontmatterValues: front ? frontmatterValues(source, frontEnd) : [],
  };
}

/**
 * Copies a text node's characters; on its lines after the first, the container's prefix
 * (indentation, `>` of a quote) is not text and stays blank.
 */
function copyText(source: string, chars: string[], start: number, end: number): void {
  let lineStart = true;
  let first = true;
  for (let i = start; i < end; i++) {
    const c = source[i]!;
    if (c === '\n') {
      lineStart = true;
      first = false;
      continue;
    }
    if (!first && lineStart && (c === ' ' || c === '\t' || c === '>')) continue;
    lineStart = false;
    chars[i] = c;
  }
}

const BLOCK_SCOPES: Partial<Record<Nodes['type'], ProseBlock['scope']>> = {
  heading: 'heading',
  paragraph: 'paragraph',
  tableCell: 'table',
};

/** Text nodes to keep, and the blocks they are in (a paragraph of a list item is the list's). */
function collect(
  node: Nodes,
  kept: [number, number][],
  blocks: ProseBlock[],
  inBlock: ProseBlock | undefined,
  container?: 'list' | 'blockquote',
): void {
  const start = node.position?.start.offset;
  const end = node.position?.end.offset;
  let block = inBlock;
  let scope = BLOCK_SCOPES[node.type];
  if (scope === 'paragraph' && container) scope = container;
  if (scope && !inBlock && start !== undefined && end !== undefined) {
    block = { scope, start, end, ...(node.type === 'heading' && { depth: node.depth }) };
    blocks.push(block);
  }
  if (node.type === 'text' && start !== undefined && end !== undefined) {
    kept.push([start, end]);
    return;
  }
  if (!('children' in node)) return;
  const inside = node.type === 'listItem' ? 'list' : node.type === 'blockquote' ? 'blockquote' : container;
  for (const child of (node as Parents).children) collect(child as Nodes, kept, blocks, block, inside);
}

/** Values of `key: value` lines that are words: not URLs, paths, or anything with a slash. */
function frontmatterValues(source: string, end: number): [number, number][] {
  const ranges: [number, number][] = [];
  // `(.*)` then trimEnd: a lazy match before trailing spaces would be quadratic on a long line.
  const line = /^([A-Za-z_][\w-]*)[ \t]*:[ \t]*(.*)$/gm;
  const region = source.slice(0, end);
  for (const match of region.matchAll(line)) {
    let value = match[2]!.trimEnd();
    if (value === '' || /[/\\]|^[a-z]+:|^[|>]/.test(value)) continue;
    let offset = match.index! + match[0].indexOf(value, match[1]!.length + 1);
    if (/^["'].*["']$/.test(value)) {
      value = value.slice(1, -1);
      offset += 1;
    }
    ranges.push([offset, offset + value.length]);
  }
  return ranges;
}

/** Prose read once per tree and page: the style and spelling checks of one tree share it. */
const cache = new WeakMap<object, Map<string, { text: string; prose: Prose }>>();

/** `readProse` for `file` of the state `tree`, remembered for that tree (while its text stays the same). */
export function proseOf(tree: object, file: string, text: string): Prose {
  let pages = cache.get(tree);
  if (!pages) {
    pages = new Map();
    cache.set(tree, pages);
  }
  const known = pages.get(file);
  if (known && known.text === text) return known.prose;
  const prose = readProse(file, text);
  pages.set(file, { text, prose });
  return prose;
}
