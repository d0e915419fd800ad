/**
 * The `redirects` check on a Mintlify site: a page the run moved or deleted keeps its old address
 * working through a `redirects` entry of docs.json (from the old path to the new one, or to the
 * page that replaces it), so links from outside the site and bookmarks still land.
 */
import { normalizeRel } from '../site/repo-files.ts';
import { removedPages } from './mintlify-scope.ts';
import { type MintlifySite, mintlifySite, pageFileOf, refOfPage } from './mintlify-site.ts';
import { redirectPattern, redirectsOf } from './mintlify-targets.ts';
import type { Check, CheckInput, CheckOutcome, Finding } from './types.ts';

export const mintlifyRedirectsCheck: Check = {
  name: 'redirects',
  async run(input: CheckInput): Promise<CheckOutcome> {
    const site = await mintlifySite(input.tree, input.docsDir);
    if (!site) return { findings: [], skipped: 'not a Mintlify site (no docs.json or mint.json)' };
    const findings: Finding[] = [];
    const redirects = redirectsOf(site);
    let checked = 0;
    for (const old of removedPages(site, input.changes)) {
      // In the base the page is still there: nothing to redirect.
      if ((await input.tree.exists(old)) !== null) continue;
      checked++;
      const from = address(site, old);
      const moved = input.changes.moved.find((m) => normalizeRel(m.from) === old);
      const to = moved ? address(site, normalizeRel(moved.to)) : null;
      const entry = redirects.find((r) => redirectPattern(r.source).test(from.slice(1)));
      const finding = (message: string): Finding => ({
        path: holderOf(site),
        line: null,
        message,
        level: 'error',
        rule: 'redirects',
      });
      if (!entry) {
        const add = `{"source": "${from}", "destination": "${to ?? '/<the page that replaces it>'}"}`;
        const what = to ? `was moved to ${normalizeRel(moved!.to)}` : 'was deleted';
        findings.push(
          finding(
            `${old} ${what} but no redirect keeps its old address "${from}" working: add ${add} to "redirects" in ${holderOf(site)}`,
          ),
        );
        continue;
      }
      const dest = entry.destination.split(/[#?]/)[0]!;
      if (
        URL.canParse(entry.destination) ||
        /[:*]/.test(dest) ||
        pageFileOf(site, dest.replace(/^\/+/, '') || 'index')
      )
        continue;
      findings.push(
        finding(
          `the redirect from "${entry.source}" goes to "${entry.destination}", which is no page: point it to ${to ? `"${to}"` : 'a page that exists'}`,
        ),
      );
    }
    return { findings, counts: { redirects: checked } };
  },
};

/** A page's address: "/" + its path without extension, a folder's index page by the folder's. */
function address(site: MintlifySite, file: string): string {
  const ref = refOfPage(site, file).replace(/(^|\/)index$/, '');
  return `/${ref}`;
}

/** The file that holds the redirects: docs.json, or the `$ref` file they are written in. */
function holderOf(site: MintlifySite): string {
  const config = site.config.value as { redirects?: unknown } | null;
  const list = config && typeof config === 'object' ? config.redirects : undefined;
  return (list && typeof list === 'object' ? site.config.origin.get(list) : undefined) ?? site.configFile;
}
