/** Sphinx sites: conf.py found in the usual places, documents, and the toctree navigation. */
import path from 'node:path';
import { collectPages, listFiles } from './pages.ts';
import { joinRel, readRepoFile } from './repo-files.ts';
import type { SphinxDocument } from './sphinx-markup.ts';
import { loadSphinxProject, readDocument, type SphinxFiles, sphinxNavigation } from './sphinx-project.ts';
import type { SiteInfo } from './types.ts';

const MAX_PAGE_BYTES = 5 * 1024 * 1024;
/** Documents read to draw the navigation, so that a huge site cannot stall detection. */
const MAX_NAVIGATION_DOCUMENTS = 5_000;
/** Where conf.py usually lives, relative to a candidate folder (celery: docs/, BentoML: docs/source/). */
const CONF_PLACES = [
  'conf.py',
  'source/conf.py',
  'docs/conf.py',
  'docs/source/conf.py',
  'doc/conf.py',
  'doc/source/conf.py',
];
/** A conf.py that sets none of these is some other program's configuration. */
const SPHINX_SETTING =
  /^(?:extensions|html_theme|master_doc|root_doc|source_suffix|exclude_patterns|project)\s*=/m;

/**
 * The conf.py of the Sphinx site for `docsDir`: in it or its usual subfolders, then in its
 * ancestors (repository-relative), or null. `readText` reads a file of the repository (null when
 * there is none), from a checkout or from one state of a run.
 */
export async function findSphinxConf(
  readText: (file: string) => Promise<string | null>,
  docsDir: string,
): Promise<string | null> {
  const dirs: string[] = [];
  for (let d = docsDir; ; d = path.posix.dirname(d)) {
    dirs.push(d);
    if (d === '.' || d === '/') break;
  }
  for (const [i, dir] of dirs.entries()) {
    for (const place of i === 0 ? CONF_PLACES : ['conf.py']) {
      const file = joinRel(dir, place);
      const text = await readText(file);
      if (text !== null && (SPHINX_SETTING.test(text) || /\bsphinx\b/.test(text))) return file;
    }
  }
  return null;
}

/** A checkout read for a Sphinx project; `truncated` says when a walk stopped at its bound. */
function checkoutFiles(site: SiteInfo): SphinxFiles & { truncated: boolean } {
  const files = {
    truncated: false,
    readText: async (file: string) => (await readRepoFile(site.root, file, MAX_PAGE_BYTES))?.text ?? null,
    listFiles: async (dir = '.') => {
      const listing = await listFiles(site, dir);
      files.truncated ||= listing.truncated;
      return listing.files;
    },
  };
  return files;
}

/** The site of `site.configFile` (conf.py): its documents and the toctree navigation. */
export async function sphinx(site: SiteInfo): Promise<SiteInfo> {
  const files = checkoutFiles(site);
  const project = await loadSphinxProject(files, site.configFile!);
  site.contentDir = path.posix.dirname(site.configFile!);
  if (!project) {
    site.configError = `${site.configFile} could not be read`;
    return site;
  }
  site.pages = [...project.docs.values()].sort();
  site.pagesTruncated = files.truncated;
  let read = 0;
  const documents = new Map<string, SphinxDocument | null>();
  const documentOf = async (docname: string) => {
    if (documents.has(docname)) return documents.get(docname)!;
    const file = project.docs.get(docname);
    const text = file && read++ < MAX_NAVIGATION_DOCUMENTS ? await files.readText(file) : null;
    const doc = file && text !== null ? readDocument(file, text) : null;
    documents.set(docname, doc);
    return doc;
  };
  site.navigation = await sphinxNavigation(project, documentOf);
  collectPages(site, site.navigation);
  const { conf } = project;
  site.notes.push(
    `Sphinx reads ${conf.sourceSuffixes.join(', ')} files under ${site.contentDir === '.' ? 'the repository root' : `${site.contentDir}/`}${conf.myst ? ' (.md as MyST Markdown)' : ''}; the navigation is the toctree tree from the root document "${conf.rootDoc}".`,
  );
  if (read > MAX_NAVIGATION_DOCUMENTS) {
    site.notes.push(
      `Only the first ${MAX_NAVIGATION_DOCUMENTS} documents' toctrees were read for the navigation.`,
    );
  }
  return site;
}
