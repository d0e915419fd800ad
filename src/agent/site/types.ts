/** What docs-site detection finds: the generator, its navigation, the pages. */

export type SiteKind =
  | 'mintlify'
  | 'docusaurus'
  | 'mkdocs'
  | 'sphinx'
  | 'vitepress'
  | 'starlight'
  | 'markdown';

/** One page reference of the navigation. */
export interface NavPage {
  /** As written in the navigation (Mintlify: without extension; MkDocs: with it; Sphinx: the docname). */
  ref: string;
  /** Repository-relative POSIX path of the file it resolves to, or null when none exists. */
  file: string | null;
}

export type NavNode =
  | ({ type: 'page' } & NavPage)
  /** An OpenAPI/AsyncAPI operation ("GET /users"): generated, not a file. */
  | { type: 'endpoint'; ref: string }
  | { type: 'section'; label: string; children: NavNode[] };

export interface SiteInfo {
  kind: SiteKind;
  /** Absolute repository root. */
  root: string;
  /** The project's documentation directory, repository-relative ('.' = root). */
  docsDir: string;
  /** Repository-relative path of the site config (docs.json, mkdocs.yml, …), or null. */
  configFile: string | null;
  /** Files that hold navigation besides the config: Mintlify's `$ref` files, repository-relative. */
  navigationFiles?: string[];
  /** Directory the pages (and Mintlify/MkDocs page references) are relative to, repository-relative. */
  contentDir: string;
  /** Navigation tree, or null when it is not read (JavaScript configs, or MkDocs without `nav`). */
  navigation: NavNode[] | null;
  /** Every page the navigation names, once each, in navigation order. */
  navPages: NavPage[];
  /** The navigation pages that resolve to no file. */
  missing: NavPage[];
  /** Markdown/MDX pages under contentDir (repository-relative, sorted), without snippets and repository files like README.md. */
  pages: string[];
  /** True when the file walk stopped at its bound, so `pages` is incomplete. */
  pagesTruncated: boolean;
  /** Why the config could not be read (unparsable JSON/YAML, no navigation), or null. */
  configError: string | null;
  /** Remarks for the model (for example: navigation lives in JavaScript and was not evaluated). */
  notes: string[];
}

/** A JSON or YAML object (not an array, not null). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
