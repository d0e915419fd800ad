/** MkDocs sites: the `nav` of mkdocs.yml, resolved to page files under `docs_dir`. */
import path from 'node:path';
import { type MkdocsNavItem, readMkdocsConfig } from './mkdocs-config.ts';
import { collectPages, listFiles, withPages } from './pages.ts';
import { joinRel, readRepoFile } from './repo-files.ts';
import type { NavNode, SiteInfo } from './types.ts';

const MAX_CONFIG_BYTES = 5 * 1024 * 1024;

export async function mkdocs(site: SiteInfo): Promise<SiteInfo> {
  const configDir = site.contentDir;
  const configName = path.posix.basename(site.configFile!);
  const read = await readRepoFile(site.root, site.configFile!, MAX_CONFIG_BYTES);
  const config = read && !read.truncated ? readMkdocsConfig(read.text, configName) : null;
  if (!config) site.configError = `${configName} is larger than ${MAX_CONFIG_BYTES} bytes`;
  else site.configError = config.error;
  site.contentDir = joinRel(configDir, config?.docsDir ?? 'docs');
  const listing = await listFiles(site, site.contentDir);
  await withPages(site, listing);
  if (!config || config.error) return site;
  if (!config.nav) {
    site.notes.push(
      `${configName} has no nav: MkDocs puts every page under ${site.contentDir}/ in the navigation by itself (folders as sections, index.md first, then by file name), so a new page needs no nav entry.`,
    );
    return site;
  }
  const files = new Set(listing.files);
  const includes: string[] = [];
  const toNode = (item: MkdocsNavItem): NavNode[] => {
    switch (item.type) {
      case 'page': {
        const file = joinRel(site.contentDir, item.target);
        return [{ type: 'page', ref: item.target, file: files.has(file) ? file : null }];
      }
      case 'section':
        return [{ type: 'section', label: item.title, children: item.children.flatMap(toNode) }];
      case 'include':
        includes.push(item.target);
        return [];
      case 'external':
        return [];
    }
  };
  site.navigation = config.nav.flatMap(toNode);
  collectPages(site, site.navigation);
  if (includes.length > 0) {
    site.notes.push(
      `The nav includes other MkDocs configs with !include (${includes.slice(0, 5).join(', ')}${includes.length > 5 ? ', …' : ''}); their pages are not listed here.`,
    );
  }
  return site;
}
