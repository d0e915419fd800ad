/**
 * The `links` check on a Mintlify site: every internal link of the pages in scope — Markdown
 * links, images and link definitions, and the `href`/`src` of components and HTML elements —
 * reaches a page, a file or a redirect, and its anchor (when it has one) is an anchor of the
 * page it reaches. Links in code are not links: the syntax tree leaves them out.
 */
import type { Root } from 'mdast';
import type { MdxJsxAttribute } from 'mdast-util-mdx-jsx';
import { visit } from 'unist-util-visit';
import { normalizeRel, relativeTo } from '../site/repo-files.ts';
import { similarFiles } from '../suggestions.ts';
import { cleanAnchor, plainHeadingsHave } from './mintlify-anchors.ts';
import { pagesInScope } from './mintlify-scope.ts';
import { isMintlifyPage, type MintlifySite, mintlifySite, refOfPage } from './mintlify-site.ts';
import { resolveLink } from './mintlify-targets.ts';
import type { Check, CheckInput, CheckOutcome, Finding, RunChanges } from './types.ts';

/** How long a "did you mean" may search, per broken link. */
const SUGGEST_MS = 50;

interface Link {
  url: string;
  line: number | null;
  /**
   * Whether `mint broken-links` checks it too (Markdown links and images, `<a>`/`<Card>` href,
   * `<img>`/`<source>` src): a broken one is an error. Other components' href/src and link
   * definitions are broken links all the same, but Mintlify's own check lets them pass, so they
   * are warnings: shown and listed, never blocking.
   */
  strict: boolean;
}

/** Elements whose href or src `mint broken-links` checks. */
const MINT_CHECKED: Record<string, string> = { a: 'href', Card: 'href', img: 'src', source: 'src' };

/** The links of a parsed page, in document order. */
export function linksOf(tree: Root): Link[] {
  const links: Link[] = [];
  visit(tree, (node) => {
    const line = node.position?.start.line ?? null;
    if (node.type === 'link' || node.type === 'image' || node.type === 'definition') {
      links.push({ url: node.url, line, strict: node.type !== 'definition' });
    } else if (node.type === 'mdxJsxFlowElement' || node.type === 'mdxJsxTextElement') {
      for (const a of node.attributes) {
        const attr = a as MdxJsxAttribute;
        if (attr.type !== 'mdxJsxAttribute' || typeof attr.value !== 'string') continue;
        if (attr.name !== 'href' && attr.name !== 'src') continue;
        const strict = MINT_CHECKED[node.name ?? ''] === attr.name;
        links.push({ url: attr.value, line: attr.position?.start.line ?? line, strict });
      }
    }
  });
  return links;
}

export const mintlifyLinksCheck: Check = {
  name: 'links',
  async run(input: CheckInput): Promise<CheckOutcome> {
    const site = await mintlifySite(input.tree, input.docsDir);
    if (!site) return { findings: [], skipped: 'not a Mintlify site (no docs.json or mint.json)' };
    const findings: Finding[] = [];
    const counts = { pages: 0, links: 0, anchors: 0 };
    for (const file of await pagesInScope(site, input.changes, input.signal)) {
      if (input.signal.aborted) break;
      const page = await site.page(file);
      if (!page?.tree) continue; // the pages check reports it
      counts.pages++;
      for (const link of linksOf(page.tree)) {
        const finding = await checkLink(site, file, link, input.changes, counts);
        if (finding) findings.push(finding);
      }
    }
    return { findings, counts };
  },
};

async function checkLink(
  site: MintlifySite,
  file: string,
  link: Link,
  changes: RunChanges,
  counts: { links: number; anchors: number },
): Promise<Finding | null> {
  const target = resolveLink(site, file, link.url);
  if (target.kind === 'external') return null;
  counts.links++;
  const finding = (message: string): Finding => ({
    path: file,
    line: link.line,
    message,
    level: link.strict ? 'error' : 'warning',
    rule: 'links',
  });
  if (target.kind === 'missing') {
    return finding(
      `link to "${link.url}" reaches no page or file: ${missingHint(site, target.path, link.url, changes)}`,
    );
  }
  if (target.anchor === null || target.anchor === '' || target.page === null) return null;
  counts.anchors++;
  const wanted = cleanAnchor(target.anchor);
  // Most anchors name a plain heading: found on its line, the page need not be parsed.
  const text = await site.text(target.page);
  if (text !== null && plainHeadingsHave(text, wanted)) return null;
  const anchors = await site.anchors(target.page);
  if (!anchors || anchors.has(wanted)) return null;
  const where = target.page === file ? 'this page' : `"/${refOfPage(site, target.page)}"`;
  const near = similarFiles(wanted, [...anchors], 1, Date.now() + SUGGEST_MS)[0];
  const fix = near
    ? `did you mean "#${near}"?`
    : 'link to one of its headings or element ids, or drop the anchor';
  return finding(`link to "${link.url}" names the anchor "#${wanted}", which ${where} does not have: ${fix}`);
}

/** How to mend a link to a path that names nothing: the page's new place, or a page of a similar name. */
function missingHint(site: MintlifySite, target: string, url: string, changes: RunChanges): string {
  const named = (file: string) => {
    const ref = refOfPage(site, normalizeRel(file));
    return ref === target || ref === `${target}/index`;
  };
  const moved = changes.moved.find((m) => named(m.from));
  const anchor = url.includes('#') ? url.slice(url.indexOf('#')) : '';
  if (moved)
    return `this run moved that page; link to "/${refOfPage(site, normalizeRel(moved.to))}${anchor}" instead`;
  if (changes.deleted.some(named))
    return 'this run deleted that page; link to another page or remove the link';
  // A file (an image, a download) is mended with a file of its kind, a page with a page.
  const extension = /\.[A-Za-z0-9]+$/.exec(target)?.[0].toLowerCase();
  const candidates =
    extension && !/^\.mdx?$/.test(extension)
      ? [...site.files]
          .filter((f) => f.toLowerCase().endsWith(extension))
          .map((f) => relativeTo(site.contentDir, f) ?? f)
      : [...site.files].filter((f) => isMintlifyPage(site, f)).map((f) => refOfPage(site, f));
  const near = similarFiles(target, candidates, 1, Date.now() + SUGGEST_MS)[0];
  return near ? `did you mean "/${near}"?` : 'fix the path or remove the link';
}
