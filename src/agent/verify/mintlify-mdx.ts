/**
 * A Mintlify page read as Mintlify reads it: `.md` and `.mdx` alike as MDX (with GitHub tables),
 * YAML frontmatter, and `## Heading {#id}` custom heading ids taken out before parsing (MDX
 * would read `{#id}` as an expression). Line numbers stay those of the file.
 */
import type { Root } from 'mdast';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { gfmFromMarkdown } from 'mdast-util-gfm';
import { mdxFromMarkdown } from 'mdast-util-mdx';
import { gfm } from 'micromark-extension-gfm';
import { mdxjs } from 'micromark-extension-mdxjs';
import { parseDocument } from 'yaml';

/** A problem of one page, at a line (null: the whole file). */
export interface PageProblem {
  line: number | null;
  /** What is wrong and how to fix it; never a line or column. */
  message: string;
}

export interface ParsedPage {
  /** The MDX syntax tree, or null when the page does not parse. */
  tree: Root | null;
  /** The frontmatter as a mapping ({} when there is none or it does not parse). */
  frontmatter: Record<string, unknown>;
  problems: PageProblem[];
  /** Custom heading ids (`{#id}`) by the 1-based line of their heading. */
  customIds: Map<number, string>;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;

/**
 * The code fence open after `line`, given the one open before it (null: none). As CommonMark has
 * it: a fence closes with a run of the same character, at least as long, alone on its line.
 */
export function fenceAfter(line: string, open: string | null): string | null {
  const marker = FENCE.exec(line)?.[1];
  if (open === null) return marker ?? null;
  const closes =
    marker !== undefined && marker[0] === open[0] && marker.length >= open.length && line.trim() === marker;
  return closes ? null : open;
}
const CUSTOM_ID = /^( {0,3}#{1,6}\s+.+?)\s*\{\s*#([^}]+?)\s*\}\s*$/;

/** Parses kept for texts seen lately: the head and the base share every page the run did not touch. */
const MAX_CACHED_PARSES = 4_000;
const parses = new Map<string, ParsedPage>();

/** Parses a page, or returns the parse of the same text made lately (never to be modified); never throws. */
export function parsePageCached(text: string): ParsedPage {
  const cached = parses.get(text);
  if (cached) return cached;
  const page = parsePage(text);
  if (parses.size >= MAX_CACHED_PARSES) parses.delete(parses.keys().next().value!);
  parses.set(text, page);
  return page;
}

/** Parses a page; never throws. */
export function parsePage(text: string): ParsedPage {
  const page: ParsedPage = { tree: null, frontmatter: {}, problems: [], customIds: new Map() };
  const lines = text.split('\n');
  const bodyStart = readFrontmatter(lines, page);
  let fence: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    if (i < bodyStart) {
      lines[i] = '';
      continue;
    }
    const line = lines[i]!;
    const before = fence;
    fence = fenceAfter(line, fence);
    if (before !== null || fence !== null) continue;
    const heading = CUSTOM_ID.exec(line);
    if (heading) {
      page.customIds.set(i + 1, heading[2]!);
      lines[i] = heading[1]!;
    }
  }
  try {
    page.tree = fromMarkdown(lines.join('\n'), {
      extensions: [mdxjs(), gfm()],
      mdastExtensions: [mdxFromMarkdown(), gfmFromMarkdown()],
    });
  } catch (error) {
    page.problems.push(syntaxProblem(error));
  }
  return page;
}

/** Reads the frontmatter into `page`; returns the index of the first line after it. */
function readFrontmatter(lines: string[], page: ParsedPage): number {
  if (!/^---[ \t\r]*$/.test(lines[0] ?? '')) return 0;
  const close = lines.findIndex((line, i) => i > 0 && /^---[ \t\r]*$/.test(line));
  if (close < 0) {
    page.problems.push({
      line: 1,
      message: 'the frontmatter opened by "---" is never closed: add a "---" line after it',
    });
    return 0;
  }
  const yaml = lines
    .slice(1, close)
    .map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line))
    .join('\n');
  const doc = parseDocument(yaml, { logLevel: 'silent' });
  for (const error of doc.errors.slice(0, 3)) {
    const at = error.linePos?.[0];
    const reason = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    page.problems.push({
      line: at ? at.line + 1 : 2,
      message: `invalid YAML frontmatter: ${reason}: fix the syntax (quote values that hold ":" or "#")`,
    });
  }
  if (doc.errors.length > 0) return close + 1;
  const value = doc.toJS({ maxAliasCount: 100 }) as unknown;
  if (value !== null && value !== undefined && (typeof value !== 'object' || Array.isArray(value))) {
    page.problems.push({
      line: 2,
      message: 'the frontmatter must be a YAML mapping: write "key: value" lines',
    });
  } else if (value) page.frontmatter = value as Record<string, unknown>;
  return close + 1;
}

function syntaxProblem(error: unknown): PageProblem {
  const e = error as {
    reason?: string;
    message?: string;
    line?: number;
    place?: { line?: number; start?: { line?: number } };
  };
  const first = (e.reason ?? e.message ?? String(error)).split('\n')[0]!;
  const at = /\((\d+):\d+(?:-\d+:\d+)?\)/.exec(first);
  const line = e.line ?? e.place?.line ?? e.place?.start?.line ?? (at ? Number(at[1]) : null);
  const reason = first
    // Positions move when unrelated lines do; the line is reported apart.
    .replace(/\s*\(\d+:\d+(?:-\d+:\d+)?\)/g, '')
    .slice(0, 240);
  return {
    line,
    message: `does not parse as MDX (Mintlify parses .md pages as MDX too): ${reason}: close every component tag, and write "{", "}" and "<" in text as \`{'{'}\`, \`{'}'}\` and \`&lt;\``,
  };
}
