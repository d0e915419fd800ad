/** Mintlify sites: the navigation of docs.json (or mint.json), resolved to page files. */
import path from 'node:path';
import { resolveMintlifyConfig } from './mintlify-refs.ts';
import { collectPages, listFiles, PAGE_EXTENSION, withPages } from './pages.ts';
import { joinRel, normalizeRel, readRepoFile, relativeTo } from './repo-files.ts';
import { isObject, type NavNode, type SiteInfo } from './types.ts';

const MAX_CONFIG_BYTES = 5 * 1024 * 1024;
/** An OpenAPI/AsyncAPI operation in the navigation ("GET /users"): generated, not a file. */
export const HTTP_METHOD =
  /^(?:\S+\s+)?(?:get|post|put|patch|delete|head|options|trace|webhook|publish|subscribe|send|receive)\s+\S/i;

/** Keys of a Mintlify navigation object that hold more navigation. */
export const MINTLIFY_CONTAINERS = [
  'languages',
  'versions',
  'tabs',
  'anchors',
  'dropdowns',
  'products',
  'menu',
  'groups',
  'pages',
] as const;
const MINTLIFY_LABELS: [key: string, word: string | null][] = [
  ['group', null],
  ['tab', 'tab'],
  ['anchor', 'anchor'],
  ['dropdown', 'dropdown'],
  ['version', 'version'],
  ['language', 'language'],
  ['product', 'product'],
  ['item', 'menu'],
];

export async function mintlify(site: SiteInfo): Promise<SiteInfo> {
  const listing = await listFiles(site, site.contentDir);
  await withPages(site, listing);
  const configName = path.posix.basename(site.configFile!);
  const read = await readRepoFile(site.root, site.configFile!, MAX_CONFIG_BYTES);
  if (!read || read.truncated) {
    site.configError = `${configName} is larger than ${MAX_CONFIG_BYTES} bytes`;
    return site;
  }
  try {
    JSON.parse(read.text);
  } catch (error) {
    site.configError = `${configName} is not valid JSON: ${firstLine(error)}`;
    return site;
  }
  // Navigation files included with "$ref" are part of the navigation: follow them.
  const readText = async (file: string) => {
    const text = await readRepoFile(site.root, file, MAX_CONFIG_BYTES);
    return text && !text.truncated ? text.text : null;
  };
  const resolved = await resolveMintlifyConfig(readText, site.configFile!);
  for (const problem of resolved.problems) site.notes.push(`${problem.file}: ${problem.message}`);
  site.navigationFiles = resolved.files.filter((f) => f !== site.configFile);
  const config = resolved.value;
  if (!isObject(config) || !(isObject(config.navigation) || Array.isArray(config.navigation))) {
    site.configError = `${configName} has no "navigation"`;
    return site;
  }
  const files = new Set(
    listing.files.map((f) => relativeTo(site.contentDir, f)).filter((f): f is string => f !== null),
  );
  const resolve = (ref: string): string | null => {
    const r = normalizeRel(ref.replace(/^\/+/, ''));
    const candidates = PAGE_EXTENSION.test(r) ? [r] : [`${r}.mdx`, `${r}.md`];
    const hit = candidates.find((c) => files.has(c));
    return hit === undefined ? null : joinRel(site.contentDir, hit);
  };
  const pageNode = (ref: string): NavNode =>
    HTTP_METHOD.test(ref.trim()) ? { type: 'endpoint', ref } : { type: 'page', ref, file: resolve(ref) };
  const walk = (value: unknown): NavNode[] => {
    if (typeof value === 'string') return [pageNode(value)];
    if (Array.isArray(value)) return value.flatMap(walk);
    if (!isObject(value)) return [];
    const children: NavNode[] = [];
    if (typeof value.root === 'string') children.push(pageNode(value.root));
    for (const key of MINTLIFY_CONTAINERS) if (key in value) children.push(...walk(value[key]));
    const labelled = MINTLIFY_LABELS.find(([key]) => typeof value[key] === 'string');
    if (!labelled) return children;
    const [key, word] = labelled;
    let label = word ? `[${word}] ${value[key] as string}` : (value[key] as string);
    const spec = value.openapi ?? value.asyncapi;
    if (spec !== undefined) {
      const source = typeof spec === 'string' ? spec : Array.isArray(spec) ? spec.join(', ') : 'spec';
      label += ` (API pages generated from ${isObject(spec) && typeof spec.source === 'string' ? spec.source : source})`;
    }
    if (children.length === 0 && spec === undefined) return []; // external links
    return [{ type: 'section', label, children }];
  };
  const nav = config.navigation;
  site.navigation = walk(nav);
  collectPages(site, site.navigation);
  return site;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.slice(0, 200);
}
