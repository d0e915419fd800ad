/** A bounded text map of a docs site for the model's system prompt. */
import path from 'node:path';
import { PAGE_EXTENSION } from './pages.ts';
import { relativeTo } from './repo-files.ts';
import type { NavNode, SiteInfo, SiteKind } from './types.ts';

const KIND_NAMES: Record<SiteKind, string> = {
  mintlify: 'Mintlify',
  docusaurus: 'Docusaurus',
  mkdocs: 'MkDocs',
  sphinx: 'Sphinx',
  vitepress: 'VitePress',
  starlight: 'Astro Starlight',
  markdown: 'plain Markdown',
};

const SYNC_HINTS: Record<SiteKind, string> = {
  mintlify:
    'Keep the navigation in sync: add every new page as "path/without-extension" to the right group\'s "pages", change the entries of moved or renamed pages, and remove the entries of deleted pages.',
  mkdocs:
    'Keep the nav in sync: add every new page (path relative to the docs directory, with extension), change the entries of moved or renamed pages, and remove the entries of deleted pages.',
  sphinx:
    'Keep the toctrees in sync: add every new page to the toctree of the page it belongs under (entries are document names without extension, relative to that page or "/"-absolute from the source folder), change the entries of moved or renamed pages, remove the entries of deleted pages, and fix :doc: and :ref: targets to them. A page meant to be in no toctree starts with ":orphan:".',
  docusaurus: 'Keep the sidebars in sync when you add, move or remove pages, and fix links to moved pages.',
  vitepress: 'Keep the sidebar in sync when you add, move or remove pages, and fix links to moved pages.',
  starlight: 'Keep the sidebar in sync when you add, move or remove pages, and fix links to moved pages.',
  markdown: 'Link new pages from an existing index or README where it fits, and fix links to moved pages.',
};

/** A line of the map: fixed text followed by a list that may be cut short. */
interface Entry {
  prefix: string;
  items: string[];
  depth: number;
  /** A section (or directory) line; other lines are runs of pages inside the section above them. */
  header: boolean;
  /** Pages on this line and, for a section, in everything below it. */
  total: number;
}

const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;

/** cap ≥ 1: up to `cap` items, then "… +N more"; cap 0: only how many pages. */
function renderEntry(entry: Entry, cap: number): string {
  if (cap === 0) {
    if (entry.header)
      return entry.total > 0 ? `${entry.prefix}${plural(entry.total, 'page')}` : entry.prefix.trimEnd();
    return `${'  '.repeat(entry.depth)}${plural(entry.items.length, 'page')}`;
  }
  if (entry.items.length === 0) return entry.prefix.trimEnd();
  const shown = entry.items.slice(0, cap).join(', ');
  const rest = entry.items.length - Math.min(cap, entry.items.length);
  return `${entry.prefix}${shown}${rest > 0 ? ` … +${rest} more` : ''}`;
}

const cost = (entries: Entry[], cap: number) =>
  entries.reduce((n, e) => n + renderEntry(e, cap).length + 1, 0);
const render = (entries: Entry[], cap: number) => entries.map((e) => renderEntry(e, cap)).join('\n');

/**
 * Renders entries within `budget` characters, degrading step by step: every
 * item; the same number of items a line; only section names with page counts,
 * down to ever shallower levels; finally the first lines and a count of the
 * pages left out.
 */
function fitEntries(entries: Entry[], budget: number): string {
  const maxItems = Math.max(1, ...entries.map((e) => e.items.length));
  if (cost(entries, maxItems) <= budget) return render(entries, maxItems);
  if (cost(entries, 1) <= budget) {
    let lo = 1;
    let hi = maxItems;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (cost(entries, mid) <= budget) lo = mid;
      else hi = mid - 1;
    }
    return render(entries, lo);
  }
  // Section names only: a section's count covers the runs below it.
  const outline = (depth: number) => entries.filter((e) => e.depth <= depth && (e.header || e.depth === 0));
  const maxDepth = Math.max(0, ...entries.map((e) => e.depth));
  for (let depth = maxDepth; depth >= 0; depth--) {
    const list = outline(depth);
    if (cost(list, 0) <= budget) return render(list, 0);
  }
  const list = outline(0);
  const allPages = list.reduce((n, e) => n + (e.header ? e.total : e.items.length), 0);
  const tail = (left: number) => `… and ${left} more pages (use list_files)`;
  const lines: string[] = [];
  let used = tail(allPages).length;
  let shownPages = 0;
  for (const entry of list) {
    const line = renderEntry(entry, 0);
    if (used + line.length + 1 > budget) break;
    lines.push(line);
    used += line.length + 1;
    shownPages += entry.header ? entry.total : entry.items.length;
  }
  lines.push(tail(allPages - shownPages));
  return lines.join('\n');
}

function pageLabel(node: { ref: string; file: string | null }, kind: SiteKind): string {
  if (node.file === null) return `${node.ref} (MISSING)`;
  if (kind === 'mintlify' && !PAGE_EXTENSION.test(node.ref) && node.file.endsWith('.md'))
    return `${node.ref}.md`;
  if (kind === 'sphinx' && node.file.endsWith('.md')) return `${node.ref}.md`;
  return node.ref;
}

function navEntries(nodes: NavNode[], kind: SiteKind): Entry[] {
  const entries: Entry[] = [];
  /** Adds the lines of `list`; returns how many pages it holds. */
  const visit = (list: NavNode[], depth: number, first: Entry | null): number => {
    let run: Entry | null = first;
    let pages = 0;
    for (const node of list) {
      if (node.type === 'section') {
        run = null;
        const header: Entry = {
          prefix: `${'  '.repeat(depth)}- ${node.label}: `,
          items: [],
          depth,
          header: true,
          total: 0,
        };
        entries.push(header);
        header.total = visit(node.children, depth + 1, header);
        pages += header.total;
        continue;
      }
      if (!run) {
        run = { prefix: '  '.repeat(depth), items: [], depth, header: false, total: 0 };
        entries.push(run);
      }
      run.items.push(node.type === 'page' ? pageLabel(node, kind) : node.ref);
      run.total++;
      pages++;
    }
    return pages;
  };
  visit(nodes, 0, null);
  return entries;
}

function directoryEntries(files: string[], contentDir: string): Entry[] {
  const byDir = new Map<string, string[]>();
  for (const file of files) {
    const rel = relativeTo(contentDir, file) ?? file;
    const dir = path.posix.dirname(rel);
    const list = byDir.get(dir) ?? [];
    list.push(path.posix.basename(rel));
    byDir.set(dir, list);
  }
  return [...byDir].map(([dir, names]) => ({
    prefix: dir === '.' ? './: ' : `${dir}/: `,
    items: names,
    depth: 0,
    header: true,
    total: names.length,
  }));
}

/**
 * A compact text map of the site for the system prompt, at most `maxChars`
 * long (default 12,000 ≈ 3k tokens) however large the site.
 */
export function siteMap(info: SiteInfo, options: { maxChars?: number } = {}): string {
  const maxChars = options.maxChars ?? 12_000;
  const where = info.contentDir === '.' ? 'the repository root' : `${info.contentDir}/`;
  const head: string[] = [
    `Documentation site: ${KIND_NAMES[info.kind]}${info.configFile ? ` (config: ${info.configFile})` : ''}; pages live under ${where}.`,
  ];
  if (info.configError) head.push(`The config could not be read: ${info.configError}.`);
  head.push(...info.notes);
  if (info.kind === 'mintlify' && info.navigation) {
    head.push(
      `Navigation entries name pages relative to ${where} without extension ("guides/intro" is guides/intro.mdx; ".md" is shown where the file is Markdown).`,
    );
  }
  if (info.kind === 'sphinx' && info.navigation) {
    head.push(
      `Navigation entries are Sphinx document names relative to ${where} without extension ("guides/intro" is guides/intro.rst; ".md" is shown where the file is MyST Markdown); a section named after a page holds that page and its toctree's entries.`,
    );
  }
  head.push(
    info.kind === 'mkdocs' && !info.navigation && !info.configError
      ? 'When you move or remove pages, fix the links to them.'
      : SYNC_HINTS[info.kind],
  );
  if (info.missing.length > 0) {
    const shown = info.missing.slice(0, 20).map((p) => p.ref);
    const more = info.missing.length - shown.length;
    head.push(
      `Already missing before this run (named by the navigation, no file): ${shown.join(', ')}${more > 0 ? ` … +${more} more` : ''}.`,
    );
  }
  let headText = head.join('\n');
  if (headText.length > maxChars / 3) headText = `${headText.slice(0, Math.floor(maxChars / 3) - 1)}…`;

  const sections: { title: string; entries: Entry[] }[] = [];
  const navFiles = new Set(info.navPages.map((p) => p.file).filter((f) => f !== null));
  if (info.navigation) {
    sections.push({
      title: `Navigation (${info.navPages.length} pages; "… +N more" marks a list cut short — read ${info.kind === 'sphinx' ? "the pages' toctrees" : info.configFile} for all of it):`,
      entries: navEntries(info.navigation, info.kind),
    });
    const outside = info.pages.filter((p) => !navFiles.has(p));
    if (outside.length > 0) {
      sections.push({
        title: `Pages not in the navigation (${outside.length}; hidden or orphaned):`,
        entries: directoryEntries(outside, info.contentDir),
      });
    }
  } else {
    sections.push({
      title: `Pages (${info.pages.length}${info.pagesTruncated ? '+' : ''} under ${where}, by directory):`,
      entries: directoryEntries(info.pages, info.contentDir),
    });
  }

  const parts = [headText];
  let remaining = maxChars - headText.length;
  for (const [i, section] of sections.entries()) {
    const titleCost = section.title.length + 2;
    // What follows keeps what it needs in full, up to a quarter of what is left.
    const next = sections[i + 1];
    const reserve = next
      ? Math.min(
          Math.floor(remaining / 4),
          next.title.length + 2 + cost(next.entries, Number.MAX_SAFE_INTEGER),
        )
      : 0;
    const share = remaining - reserve;
    const budget = share - titleCost;
    if (budget < 80) {
      parts.push(`(${section.title.replace(/:$/, '')} left out for size; use list_files)`);
      break;
    }
    const body = section.entries.length > 0 ? fitEntries(section.entries, budget) : '(none)';
    const text = `${section.title}\n${body}`;
    parts.push(text);
    remaining -= text.length + 1;
  }
  const result = parts.join('\n');
  return result.length <= maxChars ? result : `${result.slice(0, maxChars - 1)}…`;
}
