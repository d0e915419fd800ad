/**
 * Validation of a run's changes before they are committed (docs/agent.mdx): changed
 * MDX compiles, JSON and YAML parse, frontmatter parses, the navigation names
 * only pages that exist, and pages created in the run are reachable from it.
 * Problems come back as text for the model's repair round.
 */
import { parseDocument } from 'yaml';
import { detectSite } from './site/detect.ts';
import { isPage } from './site/pages.ts';
import { normalizeRel, readRepoFile } from './site/repo-files.ts';
import type { SiteInfo } from './site/types.ts';

export interface ValidateOptions {
  /**
   * Repository-relative paths created in this run (including move targets).
   * Default: changed files that exist now and were not among `site.pages`.
   */
  created?: string[];
}

const MAX_VALIDATE_BYTES = 5 * 1024 * 1024;
/** Problems reported at most, so a repair prompt stays small. */
const MAX_PROBLEMS = 50;

/**
 * Validates the changed files of a run. `site` is the site as detected before
 * the run (it tells which pages are new and which navigation entries were
 * already missing, which are not blamed on the run). Returns human-readable
 * problems, each starting with `file:line:column:` where known; empty = valid.
 */
export async function validateChanges(
  root: string,
  changedFiles: string[],
  site: SiteInfo,
  options: ValidateOptions = {},
): Promise<string[]> {
  const problems = await findProblems(root, changedFiles, site, options);
  if (problems.length <= MAX_PROBLEMS) return problems;
  return [...problems.slice(0, MAX_PROBLEMS), `… and ${problems.length - MAX_PROBLEMS} more problems`];
}

async function findProblems(
  root: string,
  changedFiles: string[],
  site: SiteInfo,
  options: ValidateOptions,
): Promise<string[]> {
  const problems: string[] = [];
  const changed = [...new Set(changedFiles.map(normalizeRel))].sort();
  const existing: string[] = [];
  const deleted: string[] = [];
  const unreadable = new Set<string>();
  for (const file of changed) {
    const read = await readRepoFile(root, file, MAX_VALIDATE_BYTES);
    if (!read) {
      deleted.push(file);
      continue;
    }
    existing.push(file);
    if (read.truncated) continue;
    const found = await validateFile(file, read.text);
    if (found.length > 0 && /(^|\/)(docs|mint)\.json$|(^|\/)mkdocs\.ya?ml$/.test(file)) unreadable.add(file);
    problems.push(...found);
  }

  const configChanged = changed.some((f) => /(^|\/)(docs|mint)\.json$|(^|\/)mkdocs\.ya?ml$/.test(f));
  if (site.kind !== 'mintlify' && site.kind !== 'mkdocs' && !configChanged) return problems;
  if (!changed.some((f) => /\.mdx?$/.test(f)) && !configChanged) return problems;
  // Only pages that existed before the run were changed, and all of them still exist: the file
  // set and the config are as before, so the navigation cannot have changed and no page is new.
  // Detecting the site again (a walk of the whole tree) would find nothing; skip it.
  const beforePages = new Set(site.pages);
  const declaredCreated = new Set((options.created ?? []).map(normalizeRel));
  if (
    deleted.length === 0 &&
    !site.pagesTruncated &&
    existing.every((f) => beforePages.has(f) && !declaredCreated.has(f))
  ) {
    return problems;
  }

  const after = await detectSite(root, site.docsDir);
  if (site.configFile && deleted.includes(site.configFile) && after.configFile !== site.configFile) {
    problems.push(`${site.configFile}: the site config was deleted`);
    return problems;
  }
  if (after.configError) {
    if (!(after.configFile && unreadable.has(after.configFile)) && after.configError !== site.configError) {
      problems.push(`${after.configFile}: ${after.configError}`);
    }
    return problems;
  }
  if (!after.navigation || !after.configFile) return problems;

  // Navigation entries that name no file (entries already broken before the run are not the run's fault).
  const missingBefore = new Set(site.configFile === after.configFile ? site.missing.map((p) => p.ref) : []);
  const newlyMissing = after.missing.filter((p) => !missingBefore.has(p.ref));
  if (newlyMissing.length > 0) {
    const config = (await readRepoFile(root, after.configFile, MAX_VALIDATE_BYTES))?.text ?? '';
    for (const page of newlyMissing) {
      const where = locate(config, page.ref, after.kind === 'mintlify');
      const expected =
        after.kind === 'mintlify' && !/\.mdx?$/.test(page.ref)
          ? `${page.ref}.mdx or ${page.ref}.md`
          : page.ref;
      const gone = deleted.find((f) => isPage(site, f) && refMatches(site, f, page.ref));
      problems.push(
        `${after.configFile}${where}: the navigation names "${page.ref}" but no page ${expected} exists under ${after.contentDir === '.' ? 'the repository root' : `${after.contentDir}/`}` +
          (gone ? ` (${gone} was deleted or moved in this run: update or remove the entry)` : ''),
      );
    }
  }

  // Pages created in this run must be reachable from the navigation.
  const created = options.created ? declaredCreated : new Set(existing.filter((f) => !beforePages.has(f)));
  const navigated = new Set(after.navPages.map((p) => p.file).filter((f) => f !== null));
  for (const file of existing) {
    if (!created.has(file) || !isPage(after, file) || navigated.has(file)) continue;
    const rel = after.contentDir === '.' ? file : file.slice(after.contentDir.length + 1);
    const entry = after.kind === 'mintlify' ? rel.replace(/\.mdx?$/, '') : rel;
    problems.push(
      `${file}: this new page is not in the navigation; add "${entry}" to the right place in ${after.configFile}`,
    );
  }
  return problems;
}

function refMatches(site: Pick<SiteInfo, 'contentDir' | 'kind'>, file: string, ref: string): boolean {
  const rel = site.contentDir === '.' ? file : file.slice(site.contentDir.length + 1);
  const r = normalizeRel(ref.replace(/^\/+/, ''));
  return rel === r || (site.kind === 'mintlify' && rel.replace(/\.mdx?$/, '') === r);
}

/** ":line:column" of the first occurrence of a navigation entry in the config text, or "". */
function locate(text: string, ref: string, json: boolean): string {
  const needle = json ? JSON.stringify(ref) : ref;
  const index = text.indexOf(needle);
  if (index < 0) return '';
  const { line, column } = lineColumn(text, index);
  return `:${line}:${column}`;
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** Problems of one existing changed file, by its extension. */
export async function validateFile(file: string, text: string): Promise<string[]> {
  if (/\.json$/i.test(file)) return validateJson(file, text);
  if (/\.ya?ml$/i.test(file)) return yamlProblems(file, text, 0, 'invalid YAML');
  if (/\.mdx?$/i.test(file)) {
    const { problems, body } = checkFrontmatter(file, text);
    if (problems.length > 0 || !/\.mdx$/i.test(file)) return problems;
    return compileMdx(file, body);
  }
  return [];
}

function validateJson(file: string, text: string): string[] {
  try {
    JSON.parse(text);
    return [];
  } catch (error) {
    const offset = jsonErrorOffset(text);
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
    if (offset < 0) return [`${file}: invalid JSON: ${reason.slice(0, 200)}`];
    const { line, column } = lineColumn(text, offset);
    const at = offset >= text.length ? 'end of file' : `\`${text[offset]}\``;
    return [`${file}:${line}:${column}: invalid JSON: unexpected ${at}`];
  }
}

/** Offset of the first syntax error of a JSON text, or -1 (valid, or too deeply nested to tell). */
export function jsonErrorOffset(text: string): number {
  let i = 0;
  const ws = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r'))
      i++;
  };
  const fail = (): never => {
    throw i;
  };
  const literal = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;
  const string = () => {
    i++;
    for (;;) {
      if (i >= text.length) fail();
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return;
      }
      if (c < 0x20) fail();
      if (c === 92) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail();
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else {
          i++;
          fail();
        }
      } else i++;
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      ws();
      if (text[i] === close) {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (c === '{') {
          if (text[i] !== '"') fail();
          string();
          ws();
          if (text[i] !== ':') fail();
          i++;
        }
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === close) {
          i++;
          return;
        } else fail();
      }
    }
    if (c === '"') {
      string();
      return;
    }
    literal.lastIndex = i;
    const m = literal.exec(text);
    if (!m) fail();
    i += m![0].length;
  };
  try {
    value();
    ws();
    return i < text.length ? i : -1;
  } catch (position) {
    if (typeof position === 'number') return position;
    return -1;
  }
}

/** Parses the YAML frontmatter; `body` is the text with it blanked out, so line numbers stay right. */
function checkFrontmatter(file: string, text: string): { problems: string[]; body: string } {
  const lines = text.split('\n');
  if (!/^---[ \t\r]*$/.test(lines[0] ?? '')) return { problems: [], body: text };
  const close = lines.findIndex((line, i) => i > 0 && /^---[ \t\r]*$/.test(line));
  if (close < 0) {
    return {
      problems: [
        `${file}:1:1: the frontmatter block opened by "---" on line 1 is never closed by a "---" line`,
      ],
      body: text,
    };
  }
  // The CR of a CRLF line stays on each line split at LF; on the last line of the block it would
  // end a quoted scalar with a stray character ("Unexpected scalar at node end").
  const yaml = lines
    .slice(1, close)
    .map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line))
    .join('\n');
  const problems = yamlProblems(file, yaml, 1, 'invalid YAML frontmatter');
  if (problems.length === 0 && yaml.trim() !== '') {
    const value = parseDocument(yaml, { logLevel: 'silent' }).toJS({ maxAliasCount: 100 });
    if (value !== null && (typeof value !== 'object' || Array.isArray(value))) {
      problems.push(`${file}:2:1: the frontmatter must be a YAML mapping (key: value lines)`);
    }
  }
  const body = '\n'.repeat(close + 1) + lines.slice(close + 1).join('\n');
  return { problems, body };
}

function yamlProblems(file: string, text: string, lineOffset: number, what: string): string[] {
  const doc = parseDocument(text, { logLevel: 'silent' });
  return doc.errors.slice(0, 5).map((error) => {
    const pos = error.linePos?.[0];
    const where = pos ? `:${pos.line + lineOffset}:${pos.col}` : '';
    const message = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    return `${file}${where}: ${what}: ${message}`;
  });
}

let compiler: Promise<typeof import('@mdx-js/mdx')> | undefined;

/**
 * Loads (and warms) the MDX compiler ahead of its first use: an agent's process is new for each
 * run, and loading it takes longer than the validation itself (≈ 150–200 ms here).
 */
export async function preloadMdxCompiler(): Promise<void> {
  compiler ??= import('@mdx-js/mdx');
  const { compile } = await compiler;
  await compile('# Ready\n', { format: 'mdx' });
}

async function compileMdx(file: string, body: string): Promise<string[]> {
  compiler ??= import('@mdx-js/mdx');
  const { compile } = await compiler;
  try {
    await compile(body, { format: 'mdx' });
    return [];
  } catch (error) {
    const e = error as { reason?: string; message?: string; line?: number; column?: number };
    const reason = (e.reason ?? e.message ?? String(error)).split('\n')[0]!;
    let line = e.line;
    let column = e.column;
    if (line === undefined) {
      const m = /\((\d+):(\d+)(?:-\d+:\d+)?\)/.exec(reason);
      if (m) {
        line = Number(m[1]);
        column = Number(m[2]);
      }
    }
    const where = line === undefined ? '' : `:${line}:${column ?? 1}`;
    return [`${file}${where}: MDX does not compile: ${reason}`];
  }
}
