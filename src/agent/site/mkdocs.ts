/** MkDocs sites: the `nav` of mkdocs.yml, resolved to page files under `docs_dir`. */
import path from 'node:path';
import { parseDocument } from 'yaml';
import { collectPages, listFiles, withPages } from './pages.ts';
import { joinRel, readRepoFile } from './repo-files.ts';
import { isObject, type NavNode, type SiteInfo } from './types.ts';

const MAX_CONFIG_BYTES = 5 * 1024 * 1024;

export async function mkdocs(site: SiteInfo): Promise<SiteInfo> {
  const configDir = site.contentDir;
  const configName = path.posix.basename(site.configFile!);
  const read = await readRepoFile(site.root, site.configFile!, MAX_CONFIG_BYTES);
  let config: unknown = null;
  if (!read || read.truncated) site.configError = `${configName} is larger than ${MAX_CONFIG_BYTES} bytes`;
  else {
    const doc = parseDocument(read.text, { logLevel: 'silent' });
    if (doc.errors.length > 0)
      site.configError = `${configName} is not valid YAML: ${doc.errors[0]!.message}`;
    else config = doc.toJS({ maxAliasCount: 1000 });
  }
  const docsDirSetting = isObject(config) && typeof config.docs_dir === 'string' ? config.docs_dir : 'docs';
  site.contentDir = joinRel(configDir, docsDirSetting);
  const listing = await listFiles(site, site.contentDir);
  await withPages(site, listing);
  if (!isObject(config)) return site;
  if (!Array.isArray(config.nav)) {
    site.notes.push(`${configName} has no nav: MkDocs lists every page automatically.`);
    return site;
  }
  const files = new Set(listing.files);
  // Entries are "page.md", { Title: "page.md" }, { Title: [ …entries ] } or external links.
  const entry = (title: string | null, value: unknown): NavNode[] => {
    if (typeof value === 'string') {
      if (/^[a-z][a-z0-9+.-]*:/i.test(value) || value.startsWith('/')) return []; // external link
      const file = joinRel(site.contentDir, value);
      return [{ type: 'page', ref: value, file: files.has(file) ? file : null }];
    }
    if (Array.isArray(value)) {
      const children = value.flatMap((v) => entry(null, v));
      return title === null ? children : [{ type: 'section', label: title, children }];
    }
    if (isObject(value)) return Object.entries(value).flatMap(([k, v]) => entry(k, v));
    return [];
  };
  site.navigation = config.nav.flatMap((v) => entry(null, v));
  collectPages(site, site.navigation);
  return site;
}
