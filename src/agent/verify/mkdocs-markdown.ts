/**
 * What verification needs of an MkDocs page: its links (Markdown links, images, reference
 * definitions) and its anchors as Python-Markdown makes them — heading ids by the toc
 * extension's default slugify (made unique with `_1`, `_2`…), `{#id}` with attr_list, and the
 * `id`/`name` of HTML elements.
 */
import { scanMarkdown } from './markdown-scan.ts';

export interface PageLink {
  url: string;
  line: number;
}

export interface MkdocsPage {
  links: PageLink[];
  anchors: Set<string>;
}

/** An attr_list block at the end of a heading: `{#id}`, `{: #id .class }`. */
const ATTR_LIST = /\s*\{:?\s*([^}]*)\}\s*$/;

/** Python-Markdown's toc.slugify (the default, ASCII): what MkDocs gives a heading as its id. */
export function pythonMarkdownSlug(text: string): string {
  // encode('ascii', 'ignore'): what is left after NFKD that is not ASCII goes.
  const ascii = text.normalize('NFKD').replace(/[^ -~\t\n\r\f\v]/g, '');
  const kept = ascii
    .replace(/[^\w\s-]/g, '')
    .trim()
    .toLowerCase();
  return kept.replace(/[-\s]+/g, '-');
}

/** toc's unique(): a taken or empty id gets `_1`, `_2`… */
function unique(id: string, taken: Set<string>): string {
  let result = id;
  while (taken.has(result) || result === '') {
    const m = /^(.*)_([0-9]+)$/.exec(result);
    result = m ? `${m[1]}_${Number(m[2]) + 1}` : `${result}_1`;
  }
  taken.add(result);
  return result;
}

/** Blanks a leading YAML front matter (MkDocs' meta), keeping the lines. */
function withoutFrontMatter(text: string): string {
  const lines = text.split('\n');
  if (lines[0]?.trim() !== '---') return text;
  const close = lines.findIndex((l, i) => i > 0 && /^(---|\.\.\.)\s*$/.test(l));
  if (close < 0) return text;
  return lines.map((l, i) => (i <= close ? '' : l)).join('\n');
}

/** The text Python-Markdown's toc slugifies: the heading rendered, markup and tags gone. */
export function headingText(raw: string): string {
  const codes: string[] = [];
  let text = raw.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (_, _ticks, code: string) => {
    codes.push(code.trim());
    return `\uE000${codes.length - 1}\uE000`;
  });
  text = text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/!?\[([^\]]*)\]\[[^\]]*\]/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/(\*{1,3})(?=\S)(.*?\S)\1/g, '$2')
    .replace(/(^|\W)(_{1,3})(?=\S)(.*?\S)\2(?!\w)/g, '$1$3')
    .replace(/\\([!-/:-@[-`{-~])/g, '$1')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
  return text.replace(/\uE000(\d+)\uE000/g, (_, i: string) => codes[Number(i)]!);
}

function headingId(raw: string, attrList: boolean, taken: Set<string>): string {
  let text = raw;
  if (attrList) {
    const attrs = ATTR_LIST.exec(text);
    if (attrs) {
      const id = /(?:^|\s)#([^\s#.}]+)/.exec(attrs[1]!)?.[1];
      text = text.slice(0, attrs.index);
      if (id) {
        taken.add(id);
        return id;
      }
    }
  }
  return unique(pythonMarkdownSlug(headingText(text)), taken);
}

/** An admonition (`!!! note`, `??? tip`) or a content tab (`=== "Tab"`): its body is indented by four. */
const BLOCK_MARKER = /^(\s*)(?:!!!|\?\?\?\+?|===)\s/;

/**
 * The bodies of admonitions and content tabs moved out by one level, so that CommonMark reads them
 * as Markdown (as those extensions do) rather than as indented code; nested ones one by one.
 */
function withoutBlockMarkers(text: string): string {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const marker = BLOCK_MARKER.exec(lines[i]!);
    if (!marker) continue;
    const body = ' '.repeat(marker[1]!.length + 4);
    lines[i] = '';
    for (let j = i + 1; j < lines.length; j++) {
      const line = lines[j]!;
      if (line.trim() === '') continue;
      if (!line.startsWith(body)) break;
      lines[j] = line.slice(4);
    }
  }
  return lines.join('\n');
}

/** Reads a page's links and anchors. */
export function readMkdocsPage(text: string, options: { attrList: boolean }): MkdocsPage {
  const scanned = scanMarkdown(withoutBlockMarkers(withoutFrontMatter(text)));
  const anchors = new Set<string>();
  for (const heading of scanned.headings) anchors.add(headingId(heading.text, options.attrList, anchors));
  for (const id of scanned.htmlIds) anchors.add(id);
  // attr_list on a paragraph or list item: `{: #id }`.
  if (options.attrList) {
    for (const block of scanned.blocks)
      for (const m of block.matchAll(/\{:?[^}]*#([\w-]+)[^}]*\}/g)) anchors.add(m[1]!);
  }
  return { links: scanned.links, anchors };
}
