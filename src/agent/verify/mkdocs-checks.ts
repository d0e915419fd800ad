/**
 * Verification of MkDocs sites (SPEC §19): `navigation` — every `nav` entry names a page under
 * docs_dir and, when there is a nav, every page the run touched is in it (or in `not_in_nav`);
 * `links` — relative links of the pages in scope reach a file under docs_dir, and their anchors
 * an id of the target (heading slugs as Python-Markdown makes them, attr_list ids, HTML ids).
 */
import path from 'node:path';
import { relativeTo } from '../site/repo-files.ts';
import { similarFiles } from '../suggestions.ts';
import { type MkdocsIndex, mkdocsIndex, navPageFiles, resolveLink } from './mkdocs-index.ts';
import type { Check, CheckInput, CheckOutcome, Finding } from './types.ts';

const NOT_MKDOCS = 'not an MkDocs site (no mkdocs.yml found)';

/** The MkDocs checks: `navigation` and `links`; both skip other sites. */
export function mkdocsChecks(): Check[] {
  return [
    { name: 'navigation', run: navigation },
    { name: 'links', run: links },
  ];
}

const error = (file: string, line: number | null, rule: string, message: string): Finding => ({
  path: file,
  line,
  message,
  level: 'error',
  rule,
});

const isMarkdown = (file: string) => /\.md$/i.test(file);

/** A page under docs_dir whose name resembles `wanted`, relative to docs_dir. */
async function suggest(index: MkdocsIndex, wanted: string): Promise<string | null> {
  const files = [...(await index.files())];
  const best = similarFiles(wanted, files, 1, Date.now() + 200)[0];
  return best === undefined ? null : (relativeTo(index.contentDir, best) ?? best);
}

async function navigation(input: CheckInput): Promise<CheckOutcome> {
  const index = await mkdocsIndex(input.tree, input.docsDir);
  if (!index) return { findings: [], skipped: NOT_MKDOCS };
  const { config, configFile, contentDir } = index;
  if (config.error)
    return { findings: [error(configFile, null, 'navigation', `${config.error}: fix the YAML`)] };
  if (!config.nav)
    return {
      findings: [],
      counts: { entries: 0 },
      notes: ['mkdocs.yml has no nav: every page is in the navigation.'],
    };
  const findings: Finding[] = [];
  const files = await index.files();
  const entries = navPageFiles(index);
  for (const { item, file } of entries) {
    if (files.has(file)) continue;
    const guess = await suggest(index, file);
    findings.push(
      error(
        configFile,
        item.line,
        'navigation',
        `nav entry "${item.target}" names no page under ${contentDir}/: ${guess ? `did you mean "${guess}"? ` : ''}entries are paths relative to docs_dir, with extension; correct or remove the entry`,
      ),
    );
  }
  const named = new Set(entries.map((e) => e.file));
  for (const file of input.changes.changed) {
    if (!isMarkdown(file) || named.has(file) || !files.has(file) || index.notInNav(file)) continue;
    findings.push(
      error(
        file,
        null,
        'navigation',
        `this page is not in the nav of ${configFile}: add "${relativeTo(contentDir, file)}" under the right section, or list it in not_in_nav if it is meant to be reached only by links`,
      ),
    );
  }
  return { findings, counts: { entries: entries.length } };
}

/** The pages to check: changed Markdown pages, and pages linking to what the run moved or deleted. */
async function scope(index: MkdocsIndex, input: CheckInput): Promise<string[]> {
  const files = await index.files();
  const pages = new Set(input.changes.changed.filter((f) => isMarkdown(f) && files.has(f)));
  const gone = [...input.changes.deleted, ...input.changes.moved.map((m) => m.from)];
  if (gone.length > 0) {
    const referrers = await index.referrers();
    for (const file of gone) for (const from of referrers.get(file) ?? []) pages.add(from);
  }
  return [...pages].sort();
}

async function links(input: CheckInput): Promise<CheckOutcome> {
  const index = await mkdocsIndex(input.tree, input.docsDir);
  if (!index) return { findings: [], skipped: NOT_MKDOCS };
  const findings: Finding[] = [];
  const pages = await scope(index, input);
  let checked = 0;
  let anchors = 0;
  for (const file of pages) {
    input.signal.throwIfAborted();
    for (const link of (await index.page(file))?.links ?? []) {
      const problem = await linkProblem(index, input, file, link.url);
      checked++;
      if (problem === 'anchor') anchors++;
      else if (problem) findings.push(error(file, link.line, 'links', problem));
    }
  }
  return { findings, counts: { pages: pages.length, links: checked, anchors } };
}

/** What is wrong with a link, 'anchor' for a good link with an anchor, or null. */
async function linkProblem(
  index: MkdocsIndex,
  input: CheckInput,
  page: string,
  url: string,
): Promise<string | null> {
  const target = resolveLink(index, page, url);
  if (target.skip) return null;
  if (target.outside) {
    return `link "${url}" leaves ${index.contentDir}/, so MkDocs cannot build it: link to a page inside docs_dir or use a full URL`;
  }
  const kind = await input.tree.exists(target.file);
  if (kind === null) {
    const guess = await suggest(index, target.file);
    const rel = guess
      ? path.posix.relative(path.posix.dirname(relativeTo(index.contentDir, page)!), guess)
      : null;
    return `link "${url}" reaches no file: ${rel ? `did you mean "${rel}"? ` : ''}links are relative to this page's file`;
  }
  if (target.fragment === null || target.fragment === '' || kind !== 'file' || !isMarkdown(target.file))
    return null;
  if (index.config.customSlugify) return null; // heading ids by a slugify of the site's own
  const fragment = safeDecode(target.fragment);
  const anchors = (await index.page(target.file))?.anchors ?? new Set<string>();
  if (anchors.has(fragment)) return 'anchor';
  const near = similarFiles(fragment, [...anchors], 1, Date.now() + 100)[0];
  return `anchor "#${fragment}" is no heading or id of ${target.file === page ? 'this page' : target.file}: ${near ? `did you mean "#${near}"? ` : ''}heading ids are the heading's text in lower case, punctuation dropped, spaces as "-"`;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
