/**
 * Where an internal link of a Mintlify page leads, resolved the way Mintlify resolves it (and
 * `mint broken-links` checks it): a URL with a scheme is external; `./` and `../` are relative to
 * the page's folder; anything else is relative to the site folder; a path names a file, a
 * folder, any file of that name whatever its extension (`/guides/setup` → setup.mdx), or a
 * `redirects` source whose destination exists.
 */
import path from 'node:path';
import { HTTP_METHOD } from '../site/mintlify.ts';
import { joinRel, relativeTo } from '../site/repo-files.ts';
import { isObject } from '../site/types.ts';
import { isMintlifyPage, type MintlifySite, pageFileOf } from './mintlify-site.ts';

export type LinkTarget =
  | { kind: 'external' }
  /** `page`: the page whose anchors the link's anchor must be among, or null when there is none to check. */
  | { kind: 'found'; page: string | null; anchor: string | null }
  /** `path`: the path it names, relative to the site folder. */
  | { kind: 'missing'; path: string };

/** Resolves `url`, written in `fromFile` (repository-relative). */
export function resolveLink(site: MintlifySite, fromFile: string, url: string): LinkTarget {
  const raw = url.trim();
  if (raw === '' || URL.canParse(raw) || raw.startsWith('//') || raw.startsWith('data:'))
    return { kind: 'external' };
  const hashAt = raw.indexOf('#');
  const anchor = hashAt >= 0 ? decode(raw.slice(hashAt + 1)) : null;
  let target = (hashAt >= 0 ? raw.slice(0, hashAt) : raw).split('?')[0]!.replaceAll('\\', '/');
  if (target.startsWith('.')) {
    const fromDir = path.posix.dirname(relativeTo(site.contentDir, fromFile) ?? fromFile);
    target = path.posix.join(fromDir, target);
  }
  target = path.posix.normalize(decode(target.replace(/^\/+/, ''))).replace(/\/+$/, '');
  if (target === '' || target === '.') {
    if (raw.startsWith('#') || raw.startsWith('?') || raw === '')
      return { kind: 'found', page: fromFile, anchor };
    return { kind: 'found', page: pageFileOf(site, 'index'), anchor };
  }
  if (target.startsWith('../') || target === '..') return { kind: 'missing', path: target };
  const file = joinRel(site.contentDir, target);
  if (site.files.has(file)) return { kind: 'found', page: isMintlifyPage(site, file) ? file : null, anchor };
  // Any file of the same name, whatever its extension ("/images/logo.PNG" reaches logo.png), as mint matches.
  const sameName = site.stems.get(file) ?? site.stems.get(file.replace(/\.[^./]*$/, ''));
  if (sameName) {
    const page = sameName.find((f) => f.endsWith('.mdx')) ?? sameName.find((f) => isMintlifyPage(site, f));
    return { kind: 'found', page: page ?? null, anchor };
  }
  if (site.dirs.has(file)) return { kind: 'found', page: pageFileOf(site, `${target}/index`), anchor };
  if (redirectReaches(site, target)) return { kind: 'found', page: null, anchor: null };
  // Pages generated from OpenAPI specs are no files; their slugs are Mintlify's to make.
  if (generatedApiDirs(site).some((d) => target === d || target.startsWith(`${d}/`))) {
    return { kind: 'found', page: null, anchor: null };
  }
  return { kind: 'missing', path: target };
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The `redirects` entries of the resolved configuration. */
export function redirectsOf(site: MintlifySite): { source: string; destination: string }[] {
  const config = site.config.value;
  const list = isObject(config) && Array.isArray(config.redirects) ? config.redirects : [];
  return list.filter(
    (r): r is { source: string; destination: string } =>
      isObject(r) && typeof r.source === 'string' && typeof r.destination === 'string',
  );
}

/** Mintlify's redirect pattern (`:param` one segment, `*` anything) as a regular expression. */
export function redirectPattern(source: string): RegExp {
  const escaped = source
    .replace(/^\/+/, '')
    .replace(/\/+$/, '')
    .replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/:(\w+)/g, '[^/]+').replace(/\\\*/g, '.*')}$`);
}

/** Whether a redirect takes `target` (relative to the site folder) to a page or file that exists. */
function redirectReaches(site: MintlifySite, target: string): boolean {
  for (const { source, destination } of redirectsOf(site)) {
    if (!redirectPattern(source).test(target)) continue;
    if (URL.canParse(destination)) return true;
    const dest = destination.split(/[#?]/)[0]!.replace(/^\/+/, '').replace(/\/+$/, '');
    if (/[:*]/.test(dest) || pageFileOf(site, dest || 'index')) return true;
    if (site.files.has(joinRel(site.contentDir, dest))) return true;
  }
  return false;
}

const apiDirs = new WeakMap<MintlifySite, string[]>();

/**
 * Folders (relative to the site folder) that hold pages generated from OpenAPI specs: each
 * `directory` of an `openapi` setting, and `api-reference` (Mintlify's default) when the
 * configuration names a spec or the navigation names an operation.
 */
export function generatedApiDirs(site: MintlifySite): string[] {
  let dirs = apiDirs.get(site);
  if (dirs) return dirs;
  const found = new Set<string>();
  let usesApi = false;
  const walk = (value: unknown): void => {
    if (typeof value === 'string') usesApi ||= HTTP_METHOD.test(value.trim());
    else if (Array.isArray(value)) value.forEach(walk);
    else if (isObject(value)) {
      for (const [key, child] of Object.entries(value)) {
        if (key === 'openapi' || key === 'asyncapi') {
          usesApi = true;
          if (isObject(child) && typeof child.directory === 'string')
            found.add(child.directory.replace(/^\/+|\/+$/g, ''));
        } else walk(child);
      }
    }
  };
  walk(site.config.value);
  if (usesApi) found.add('api-reference');
  dirs = [...found].filter((d) => d !== '');
  apiDirs.set(site, dirs);
  return dirs;
}
