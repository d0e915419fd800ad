/**
 * What an `mkdocs.yml` says, read as YAML without its Python tags: `docs_dir`, the `nav` with
 * the line of every entry, the Markdown extensions that change anchors (`attr_list`, a custom
 * toc `slugify`) and `not_in_nav`. The site map and verification both read MkDocs through it.
 */
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import { isObject } from './types.ts';

export type MkdocsNavItem =
  | { type: 'page'; title: string | null; target: string; line: number }
  /** A link out of the site (a URL or an absolute path): not a page. */
  | { type: 'external'; title: string | null; target: string; line: number }
  /** `!include` of another mkdocs.yml (the monorepo plugin): not read. */
  | { type: 'include'; title: string | null; target: string; line: number }
  | { type: 'section'; title: string; line: number; children: MkdocsNavItem[] };

export interface MkdocsConfig {
  /** Why the file could not be read, or null. */
  error: string | null;
  /** `docs_dir` as written, relative to the config's folder (default `docs`). */
  docsDir: string;
  /** The nav, or null when there is none (MkDocs then lists every page). */
  nav: MkdocsNavItem[] | null;
  /** `attr_list` is on: `{#id}` sets heading and element ids. */
  attrList: boolean;
  /** The toc extension has its own `slugify`: heading ids cannot be computed here. */
  customSlugify: boolean;
  /** `not_in_nav` patterns (gitignore style): pages deliberately left out of the nav. */
  notInNav: string[];
}

const EXTERNAL = /^(?:[a-z][a-z0-9+.-]*:|\/)/i;

/** Reads mkdocs.yml's text; `name` is used in messages. */
export function readMkdocsConfig(text: string, name: string): MkdocsConfig {
  const config: MkdocsConfig = {
    error: null,
    docsDir: 'docs',
    nav: null,
    attrList: false,
    customSlugify: false,
    notInNav: [],
  };
  const lines = new LineCounter();
  const doc = parseDocument(text, { logLevel: 'silent', lineCounter: lines });
  if (doc.errors.length > 0) {
    config.error = `${name} is not valid YAML: ${doc.errors[0]!.message.split('\n')[0]}`;
    return config;
  }
  const js: unknown = doc.toJS({ maxAliasCount: 1000 });
  if (!isObject(js)) return config;
  if (typeof js.docs_dir === 'string') config.docsDir = js.docs_dir;
  if (typeof js.not_in_nav === 'string')
    config.notInNav = js.not_in_nav.split('\n').filter((l) => l.trim() !== '');
  // A list of names and one-key maps, or (as MkDocs also accepts) one map of names to options.
  const declared = js.markdown_extensions;
  const extensions = Array.isArray(declared)
    ? declared
    : isObject(declared)
      ? Object.entries(declared).map(([name, options]) => ({ [name]: options }))
      : [];
  for (const ext of extensions) {
    if (ext === 'attr_list' || (isObject(ext) && 'attr_list' in ext)) config.attrList = true;
    if (isObject(ext) && isObject(ext.toc) && ext.toc.slugify !== undefined) config.customSlugify = true;
  }
  const navNode = isMap(doc.contents) ? doc.contents.get('nav', true) : undefined;
  if (isSeq(navNode)) {
    const lineOf = (node: Node | null | undefined) => (node?.range ? lines.linePos(node.range[0]).line : 1);
    const item = (title: string | null, node: unknown, at: number): MkdocsNavItem[] => {
      if (isScalar(node) && typeof node.value === 'string') {
        const target = node.value.trim();
        const line = lineOf(node);
        if (node.tag === '!include' || target.startsWith('!include ')) {
          return [{ type: 'include', title, target: target.replace(/^!include\s+/, ''), line }];
        }
        return [{ type: EXTERNAL.test(target) ? 'external' : 'page', title, target, line }];
      }
      if (isSeq(node)) {
        const children = node.items.flatMap((child) => item(null, child, lineOf(child as Node)));
        return title === null ? children : [{ type: 'section', title, line: at, children }];
      }
      if (isMap(node)) {
        return node.items.flatMap((pair) => {
          const key = isScalar(pair.key) ? String(pair.key.value) : null;
          return key === null ? [] : item(key, pair.value, lineOf(pair.key as Node));
        });
      }
      return [];
    };
    config.nav = item(null, navNode, lineOf(navNode));
  }
  return config;
}
