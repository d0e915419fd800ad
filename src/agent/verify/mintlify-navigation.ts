/**
 * The `navigation` check on a Mintlify site, through `$ref` files: every page the navigation names
 * exists, every page the run changed is named (in docs.json or the `$ref` file that holds its
 * section), and a page the run moved or deleted is no longer named.
 */
import path from 'node:path';
import { locateLine } from '../site/mintlify-refs.ts';
import { isPage } from '../site/pages.ts';
import { normalizeRel } from '../site/repo-files.ts';
import { changedPages } from './mintlify-scope.ts';
import { type MintlifySite, mintlifySite, type NavEntry, pageFileOf, refOfPage } from './mintlify-site.ts';
import type { Check, CheckInput, CheckOutcome, Finding, RunChanges } from './types.ts';

export const mintlifyNavigationCheck: Check = {
  name: 'navigation',
  async run(input: CheckInput): Promise<CheckOutcome> {
    const site = await mintlifySite(input.tree, input.docsDir);
    if (!site) return { findings: [], skipped: 'not a Mintlify site (no docs.json or mint.json)' };
    // A configuration that does not parse is the pages check's finding; its navigation is unknown.
    if (site.config.value === null) return { findings: [], notes: [`${site.configFile} does not parse`] };
    const findings: Finding[] = [];
    const named = new Set<string>();
    for (const entry of site.nav) {
      const file = pageFileOf(site, entry.ref);
      if (file) named.add(file);
      else findings.push(missingEntry(site, entry, input.changes));
    }
    for (const file of changedPages(site, input.changes)) {
      const ref = refOfPage(site, file);
      // Snippets and repository files (README.md, CONTRIBUTING.md…) are no pages of the navigation.
      if (named.has(file) || !isPage({ kind: 'mintlify', contentDir: site.contentDir }, file)) continue;
      findings.push({
        path: file,
        line: null,
        message: `this page is in no navigation: add "${ref}" to the "pages" of the right group in ${whereToAdd(site, ref)}`,
        level: 'error',
        rule: 'navigation',
      });
    }
    return { findings, counts: { entries: site.nav.length, files: site.config.files.length } };
  },
};

function missingEntry(site: MintlifySite, entry: NavEntry, changes: RunChanges): Finding {
  const named = (file: string) => refOfPage(site, normalizeRel(file)) === entry.ref.replace(/^\/+/, '');
  const moved = changes.moved.find((m) => named(m.from));
  const why = moved
    ? `this run moved that page to ${normalizeRel(moved.to)}: replace the entry with "${refOfPage(site, normalizeRel(moved.to))}"`
    : changes.deleted.some(named)
      ? 'this run deleted that page: remove the entry'
      : `no page ${entry.ref}.mdx or ${entry.ref}.md exists: create the page or fix the entry`;
  return {
    path: entry.holder,
    line: locateLine(site.config.texts.get(entry.holder) ?? '', JSON.stringify(entry.ref)),
    message: `the navigation names "${entry.ref}" but ${why}`,
    level: 'error',
    rule: 'navigation',
  };
}

/**
 * The navigation file whose entries share the longest folder with `ref`: where its section most
 * likely is. Only the file is named, not a neighbouring entry, so that the message of a page that
 * was already outside the navigation stays the same when the run edits the navigation elsewhere.
 */
function whereToAdd(site: MintlifySite, ref: string): string {
  let best: NavEntry | null = null;
  let bestShared = -1;
  const dir = path.posix.dirname(ref).split('/');
  for (const entry of site.nav) {
    const other = path.posix.dirname(entry.ref.replace(/^\/+/, '')).split('/');
    let shared = 0;
    while (shared < dir.length && dir[shared] === other[shared] && dir[shared] !== '.') shared++;
    if (shared > bestShared) {
      best = entry;
      bestShared = shared;
    }
  }
  if (!best || bestShared === 0) return site.configFile;
  return best.holder;
}
