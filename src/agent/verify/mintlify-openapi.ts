/**
 * The `openapi` check on a Mintlify site: a changed page's `openapi:` frontmatter (`METHOD /path`,
 * `spec-file METHOD /path`, or `webhook name`) names an operation of the site's OpenAPI specs —
 * those named by `openapi` fields anywhere in docs.json (after `$ref`), or the spec file named.
 */
import { parse as parseYaml } from 'yaml';
import { joinRel, normalizeRel } from '../site/repo-files.ts';
import { isObject } from '../site/types.ts';
import { similarFiles } from '../suggestions.ts';
import { changedPages } from './mintlify-scope.ts';
import { type MintlifySite, mintlifySite } from './mintlify-site.ts';
import type { Check, CheckInput, CheckOutcome, Finding } from './types.ts';

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'trace', 'webhook']);
/** Spec files looked for when docs.json names none: at most this many data files are opened. */
const MAX_GUESSED_SPECS = 50;

type Spec = { file: string; doc: Record<string, unknown> | null };
const specCache = new WeakMap<MintlifySite, Promise<Spec[]>>();

export const mintlifyOpenapiCheck: Check = {
  name: 'openapi',
  async run(input: CheckInput): Promise<CheckOutcome> {
    const site = await mintlifySite(input.tree, input.docsDir);
    if (!site) return { findings: [], skipped: 'not a Mintlify site (no docs.json or mint.json)' };
    const findings: Finding[] = [];
    let operations = 0;
    for (const file of changedPages(site, input.changes)) {
      const value = (await site.page(file))?.frontmatter.openapi;
      if (typeof value !== 'string' || value.trim() === '') continue;
      operations++;
      const problem = await checkOperation(site, value.trim());
      if (!problem) continue;
      const lines = ((await site.text(file)) ?? '').split('\n');
      const at = lines.findIndex((line) => /^openapi\s*:/.test(line));
      findings.push({
        path: file,
        line: at < 0 ? null : at + 1,
        message: problem,
        level: 'error',
        rule: 'openapi',
      });
    }
    return { findings, counts: { operations } };
  },
};

async function checkOperation(site: MintlifySite, value: string): Promise<string | null> {
  const words = value.split(/\s+/);
  const at = words.findIndex((w) => METHODS.has(w.toLowerCase()));
  if (at < 0 || at + 1 >= words.length) {
    return `openapi: "${value}" names no operation: write "METHOD /path" (for example "GET /users"), optionally after the spec file`;
  }
  const specName = at > 0 ? words.slice(0, at).join(' ') : null;
  const method = words[at]!.toLowerCase();
  const route = words.slice(at + 1).join(' ');
  if (specName && URL.canParse(specName)) return null; // a remote spec is not fetched
  let specs = await specsOf(site);
  if (specName) {
    const wanted = joinRel(site.contentDir, specName.replace(/^\/+/, ''));
    specs = specs.filter((s) => s.file === wanted);
    if (specs.length === 0) specs = [await readSpec(site, wanted)];
    if (!specs[0]!.doc)
      return `openapi: "${value}" names the spec ${wanted}, which is not a readable OpenAPI file: fix the file name`;
  }
  const readable = specs.filter((s) => s.doc);
  if (readable.length === 0) return null; // nothing to check against (remote specs only)
  const known: string[] = [];
  for (const { doc } of readable) {
    const table = method === 'webhook' ? doc!.webhooks : doc!.paths;
    if (!isObject(table)) continue;
    const entry = table[route];
    if (method === 'webhook' ? entry !== undefined : isObject(entry) && isObject(entry[method])) return null;
    for (const [p, ops] of Object.entries(table))
      if (method === 'webhook' || (isObject(ops) && method in ops)) known.push(p);
  }
  const near = similarFiles(route, known, 1, Date.now() + 50)[0];
  const files = readable.map((s) => s.file).join(', ');
  return `openapi: "${value}" names no operation of ${files}: ${near ? `did you mean "${method.toUpperCase()} ${near}"?` : 'use an operation the spec defines'}`;
}

/** The specs docs.json names (local files only), or, when it names none, the spec files of the site. */
function specsOf(site: MintlifySite): Promise<Spec[]> {
  let specs = specCache.get(site);
  if (!specs) {
    specs = loadSpecs(site);
    specCache.set(site, specs);
  }
  return specs;
}

async function loadSpecs(site: MintlifySite): Promise<Spec[]> {
  const named = new Set<string>();
  const collect = (value: unknown): void => {
    if (typeof value === 'string') {
      if (!URL.canParse(value)) named.add(joinRel(site.contentDir, value.replace(/^\/+/, '')));
    } else if (Array.isArray(value)) value.forEach(collect);
    else if (isObject(value) && typeof value.source === 'string') collect(value.source);
  };
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (isObject(value))
      for (const [key, child] of Object.entries(value)) key === 'openapi' ? collect(child) : walk(child);
  };
  walk(site.config.value);
  let files = [...named];
  if (files.length === 0) {
    files = [...site.files]
      .filter((f) => /\.(json|ya?ml)$/i.test(f) && !site.config.files.includes(f))
      .slice(0, MAX_GUESSED_SPECS);
  }
  const specs = await Promise.all(files.map((f) => readSpec(site, f)));
  return named.size > 0 ? specs : specs.filter((s) => s.doc);
}

async function readSpec(site: MintlifySite, file: string): Promise<Spec> {
  const text = await site.tree.readText(normalizeRel(file));
  if (text === null) return { file, doc: null };
  try {
    const doc: unknown = /\.json$/i.test(file) ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 100 });
    return { file, doc: isObject(doc) && ('openapi' in doc || 'swagger' in doc) ? doc : null };
  } catch {
    return { file, doc: null };
  }
}
