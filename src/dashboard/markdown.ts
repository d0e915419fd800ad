/**
 * A small, safe subset of Markdown as HTML, for text a model wrote (an ask job's answer):
 * paragraphs, bullet and numbered lists, fenced code, headings (as bold paragraphs, so that the
 * page's outline stays its own), and inline `code`, **bold** and [links](https://…).
 *
 * Deliberately not a full Markdown parser: CommonMark parsers take seconds on some inputs of a
 * few kilobytes (nested emphasis, brackets, quotes), and the page renders on the server's event
 * loop. This one makes one pass over the lines, and its inline patterns run on lines of bounded
 * length; everything is escaped by the `html` template, raw HTML stays text, and only web links
 * become links.
 */
import { isWebLink } from '../web-link.ts';
import { type Html, html, type Renderable } from './html.ts';

/** Longer lines are shown as they are, without inline formatting (which would scan them again and again). */
const MAX_INLINE_LINE = 2_000;
const INLINE = /`([^`\n]{1,500})`|\*\*([^*\n]{1,500})\*\*|\[([^\]\n]{1,500})\]\(([^()\s]{1,2000})\)/g;
const BULLET = /^\s{0,3}[-*+]\s+(.*)$/;
const NUMBERED = /^\s{0,3}(\d{1,9})[.)]\s+(.*)$/;
const FENCE = /^\s{0,3}(```|~~~)/;
const HEADING = /^\s{0,3}#{1,6}\s+(.*)$/;

export function markdownHtml(text: string): Html {
  const lines = text.split('\n');
  const blocks: Renderable[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === '') {
      i++;
      continue;
    }
    const fence = FENCE.exec(line)?.[1];
    if (fence) {
      let stop = i + 1;
      while (stop < lines.length && !lines[stop]!.trimStart().startsWith(fence)) stop++;
      blocks.push(html`<pre><code>${lines.slice(i + 1, stop).join('\n')}</code></pre>`);
      i = stop + 1;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      blocks.push(html`<p><strong>${inline(heading[1]!)}</strong></p>`);
      i++;
      continue;
    }
    const list = BULLET.test(line) ? BULLET : NUMBERED.test(line) ? NUMBERED : null;
    const start = i;
    // A block runs to a blank line, a fence, a heading, or the start of another kind of block.
    while (
      i < lines.length &&
      lines[i]!.trim() !== '' &&
      !FENCE.test(lines[i]!) &&
      !HEADING.test(lines[i]!) &&
      (i === start || (list ? list.test(lines[i]!) || /^\s{2,}\S/.test(lines[i]!) : !BULLET.test(lines[i]!)))
    )
      i++;
    blocks.push(
      list ? listBlock(lines.slice(start, i), list) : html`<p>${lineBreaks(lines.slice(start, i))}</p>`,
    );
  }
  return html`${blocks}`;
}

/** A list's items: each marker line starts one, and indented lines continue it. */
function listBlock(lines: string[], marker: RegExp): Html {
  const items: string[][] = [];
  for (const line of lines) {
    const match = marker.exec(line);
    if (match) items.push([match.at(-1)!]);
    else items.at(-1)!.push(line.trim());
  }
  const body = items.map((item) => html`<li>${lineBreaks(item)}</li>`);
  if (marker === BULLET) return html`<ul>${body}</ul>`;
  const first = Number(NUMBERED.exec(lines[0]!)![1]);
  return html`<ol ${first !== 1 && html`start="${first}"`}>${body}</ol>`;
}

/** Lines of one paragraph or item, as written: a line break where the model put one. */
const lineBreaks = (lines: string[]): Renderable[] =>
  lines.flatMap((line, index) => [index > 0 && html`<br>`, inline(line)]);

function inline(line: string): Renderable[] {
  if (line.length > MAX_INLINE_LINE) return [line];
  const out: Renderable[] = [];
  let last = 0;
  for (const match of line.matchAll(INLINE)) {
    out.push(line.slice(last, match.index));
    const [whole, code, bold, label, url] = match;
    if (code !== undefined) out.push(html`<code>${code}</code>`);
    else if (bold !== undefined) out.push(html`<strong>${bold}</strong>`);
    else if (isWebLink(url)) out.push(html`<a href="${url}" rel="noreferrer">${label}</a>`);
    else out.push(whole);
    last = match.index + whole.length;
  }
  out.push(line.slice(last));
  return out;
}
