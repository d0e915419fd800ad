/**
 * The anchors a Mintlify page has, as Mintlify renders them (and `mint broken-links
 * --check-anchors` accepts them): the slugs of headings of levels 1–4 outside accordions,
 * expandables, updates and prompts (`{#id}` custom ids and `<h2 id>` win), `<Update label>`,
 * `<Step>` titles shown as h2/h3, and the `id` of components that pass it to the page.
 */
import type { Root } from 'mdast';
import type { MdxJsxAttribute, MdxJsxFlowElement } from 'mdast-util-mdx-jsx';
import { toString as textOf } from 'mdast-util-to-string';
import { visit } from 'unist-util-visit';
import { fenceAfter } from './mintlify-mdx.ts';

/** Components that do not pass `id` on to an element of the page. */
const WITHOUT_ID = new Set(
  'Info Warning Note Tip Check Danger Callout AccordionGroup Card CardGroup Tabs CodeGroup Column Columns CustomCode CustomComponent DynamicCustomComponent Expandable Frame GitHub Github Icon Latex Mermaid Panel Popup Prompt RequestExample ResponseExample SnippetGroup Steps Tile Tooltip Tree FileTree Variation Visibility MDX Badge Color ZoomImage'.split(
    ' ',
  ),
);
const PARAM_FIELDS = new Set(['ParamField', 'Param', 'ResponseField']);
const PARAM_NAME_ATTRIBUTES = new Set(['query', 'path', 'body', 'header', 'name']);
const JSX_HEADINGS = new Set(['h1', 'h2', 'h3', 'h4']);

/** Mintlify's slug of a heading's text, before de-duplication. */
export function mintlifySlug(title: string): string {
  const dashed = encodeURIComponent(title.toLowerCase().trim().replace(/\s+/g, '-'));
  // Text with characters outside URL-safe ASCII keeps its percent escapes (they decode later).
  return slugWords(dashed, /%[0-9A-F]{2}/.test(dashed) ? /[^a-zA-Z0-9%_]+/g : /[^a-z0-9_]+/g);
}

/** Runs of characters not kept become one dash; a lone "s" or "t" after a dash joins its word ("what's" → "whats"). */
function slugWords(text: string, notKept: RegExp): string {
  return text
    .replace(notKept, '-')
    .replace(/([a-zA-Z\d]+)-([ts])(-|$)/g, '$1$2$3')
    .replace(/-{2,}/g, '-')
    .replace(/^-|-$/g, '');
}

/** What Mintlify does to an anchor before it compares: decodes it, drops punctuation and emoji. */
export function cleanAnchor(id: string): string {
  let decoded = id;
  try {
    decoded = decodeURIComponent(id.replace(/%(?![0-9A-Fa-f]{2})/g, '%25'));
  } catch {
    // A malformed escape is compared as written.
  }
  return decoded
    .replace(/[?,;:!'"()[\]{}]/g, '')
    .replace(
      /\p{Emoji_Modifier}|\p{Emoji_Modifier_Base}|\p{Emoji_Presentation}|\p{Extended_Pictographic}|[\u200D\uFE0E\uFE0F]/gu,
      '',
    );
}

function attribute(node: MdxJsxFlowElement, name: string): string | undefined {
  const found = node.attributes.find(
    (a): a is MdxJsxAttribute => a.type === 'mdxJsxAttribute' && a.name === name,
  );
  return typeof found?.value === 'string' ? found.value : undefined;
}

/** Every anchor of a parsed page, cleaned as Mintlify compares them. */
export function pageAnchors(tree: Root, customIds: ReadonlyMap<number, string>): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const unique = (slug: string) => {
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    if (count === 0) return slug;
    let suffix = count + 1;
    while (seen.has(`${slug}-${suffix}`)) suffix++;
    seen.set(`${slug}-${suffix}`, 1);
    return `${slug}-${suffix}`;
  };
  const paramCounts = new Map<string, number>();
  const inheritedSize = new Map<unknown, string>();
  visit(tree, (node) => {
    if (node.type === 'heading') {
      if (node.depth > 4) return;
      const custom = node.position ? customIds.get(node.position.start.line) : undefined;
      const id = custom
        ? custom
            .trim()
            .replace(/[<>"&?,;:!'()[\]{}]/g, '')
            .replace(/\s+/g, '-')
        : undefined;
      anchors.add(cleanAnchor(unique(id || mintlifySlug(textOf(node)))));
      return;
    }
    if (node.type !== 'mdxJsxFlowElement') return;
    const name = node.name ?? '';
    const explicit = attribute(node, 'id');
    if (name === 'Steps') inheritTitleSize(node.children, attribute(node, 'titleSize'), inheritedSize);
    if (JSX_HEADINGS.has(name) || name === 'Heading') {
      anchors.add(cleanAnchor(unique(explicit ? cleanAnchor(explicit) : mintlifySlug(textOf(node)))));
    } else if (name === 'Update' && attribute(node, 'label') !== undefined) {
      anchors.add(
        cleanAnchor(unique(explicit ? cleanAnchor(explicit) : mintlifySlug(attribute(node, 'label')!))),
      );
    } else if (
      name === 'Step' &&
      ['h2', 'h3'].includes(attribute(node, 'titleSize') ?? inheritedSize.get(node) ?? '') &&
      attribute(node, 'title')
    ) {
      anchors.add(
        cleanAnchor(unique(explicit ? cleanAnchor(explicit) : mintlifySlug(attribute(node, 'title')!))),
      );
    }
    if (PARAM_FIELDS.has(name)) {
      const param = node.attributes.find(
        (a): a is MdxJsxAttribute => a.type === 'mdxJsxAttribute' && PARAM_NAME_ATTRIBUTES.has(a.name),
      );
      if (typeof param?.value === 'string' && param.value) {
        const count = paramCounts.get(param.value) ?? 0;
        paramCounts.set(param.value, count + 1);
        anchors.add(paramSlug(`param-${param.value}${count > 0 ? `_${count}` : ''}`));
      }
      return;
    }
    if (explicit && !WITHOUT_ID.has(name)) anchors.add(explicit);
    // Accordions and tabs without an id are reached by the slug of their title.
    if (!explicit && (name === 'Accordion' || name === 'Tab') && attribute(node, 'title')) {
      anchors.add(mintlifySlug(attribute(node, 'title')!));
    }
  });
  return anchors;
}

/** `<Steps titleSize>` passes its size to its own steps (through fragments), not to nested ones. */
function inheritTitleSize(
  children: readonly unknown[],
  size: string | undefined,
  into: Map<unknown, string>,
): void {
  if (!size) return;
  for (const child of children as MdxJsxFlowElement[]) {
    if (child.type !== 'mdxJsxFlowElement') continue;
    if (child.name === 'Step') into.set(child, size);
    else if (!child.name) inheritTitleSize(child.children, size, into);
  }
}

/** The id of a parameter field: its name decamelized into a slug (`userId` → `param-user-id`). */
function paramSlug(text: string): string {
  return slugWords(text.replace(/([a-z\d])([A-Z])/g, '$1 $2').toLowerCase(), /[^a-z0-9]+/g);
}

/** An ATX heading of levels 1–4 whose text has no markup, entity or escape: its slug can be read off the line. */
const PLAIN_HEADING = /^[ \t]*#{1,4}[ \t]+([A-Za-z0-9 ,.:?!'"()/-]+?)(?:[ \t]+#+)?[ \t]*$/;
/** Where a line that looks like a heading may be none: inside an MDX comment (opened by `{/*`) or an `export` block. */
const NOT_PLAIN = /\{\/\*|^export\s/m;

/**
 * Whether a page surely has `wanted` (cleaned), read off its plain headings without parsing it.
 * A plain heading whose slug is `wanted` gives the page that anchor whatever else the page holds:
 * other headings only add anchors, and when an earlier one took the slug, the page has it. So
 * only lines that look like headings and are none (frontmatter, fences, comments) must be
 * skipped. False means "parse the page to know", never "missing".
 */
export function plainHeadingsHave(text: string, wanted: string): boolean {
  const lines = text.split('\n');
  let start = 0;
  if (/^---[ \t\r]*$/.test(lines[0] ?? '')) {
    start = lines.findIndex((line, i) => i > 0 && /^---[ \t\r]*$/.test(line)) + 1;
    if (start === 0) return false;
  }
  if (NOT_PLAIN.test(lines.slice(start).join('\n'))) return false;
  let fence: string | null = null;
  for (let i = start; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    const before = fence;
    fence = fenceAfter(line, fence);
    if (before !== null || fence !== null) continue;
    const plain = PLAIN_HEADING.exec(line);
    if (plain && cleanAnchor(mintlifySlug(plain[1]!)) === wanted) return true;
  }
  return false;
}
