/**
 * The `pages` check on a Mintlify site: the changed pages parse as Mintlify parses them (`.md`
 * and `.mdx` alike as MDX, frontmatter as YAML), the changed JSON and YAML files parse, and
 * docs.json (or mint.json) and every file it includes with `$ref` parse and resolve.
 */
import { parseDocument } from 'yaml';
import { normalizeRel } from '../site/repo-files.ts';
import { isObject } from '../site/types.ts';
import { jsonErrorOffset } from '../validate.ts';
import { changedPages } from './mintlify-scope.ts';
import { mintlifySite } from './mintlify-site.ts';
import type { Check, CheckInput, CheckOutcome, Finding } from './types.ts';

export const mintlifyPagesCheck: Check = {
  name: 'pages',
  async run(input: CheckInput): Promise<CheckOutcome> {
    const site = await mintlifySite(input.tree, input.docsDir);
    if (!site) return { findings: [], skipped: 'not a Mintlify site (no docs.json or mint.json)' };
    const findings: Finding[] = [];
    const finding = (path: string, line: number | null, message: string): Finding => ({
      path,
      line,
      message,
      level: 'error',
      rule: 'pages',
    });
    for (const problem of site.config.problems) {
      const text = site.config.texts.get(problem.file);
      const json =
        problem.message.startsWith('invalid JSON') && text !== undefined ? jsonProblem(text) : null;
      findings.push(finding(problem.file, json?.line ?? problem.line, json?.message ?? problem.message));
    }
    const config = site.config.value;
    if (site.config.files.length > 0 && isObject(config) && !('navigation' in config)) {
      findings.push(finding(site.configFile, null, 'the configuration has no "navigation": add one'));
    }
    const pages = changedPages(site, input.changes);
    for (const file of pages) {
      const page = await site.page(file);
      for (const problem of page?.problems ?? []) findings.push(finding(file, problem.line, problem.message));
    }
    // Other data files the run changed (the configuration files are reported above).
    const configFiles = new Set(site.config.files);
    for (const file of new Set(input.changes.changed.map(normalizeRel))) {
      if (configFiles.has(file) || !/\.(json|ya?ml)$/i.test(file)) continue;
      const text = await input.tree.readText(file);
      if (text === null) continue;
      const problem = dataProblem(file, text);
      if (problem) findings.push(finding(file, problem.line, problem.message));
    }
    return { findings, counts: { pages: pages.length, configFiles: configFiles.size } };
  },
};

/** Where a JSON text first goes wrong, or null when it parses. */
function jsonProblem(text: string): { line: number | null; message: string } | null {
  try {
    JSON.parse(text);
    return null;
  } catch {
    const offset = jsonErrorOffset(text);
    if (offset < 0) return { line: null, message: 'invalid JSON: fix the syntax' };
    const at = offset >= text.length ? 'the end of the file' : JSON.stringify(text[offset]);
    const line = text.slice(0, offset).split('\n').length;
    return {
      line,
      message: `invalid JSON: unexpected ${at}: fix the syntax (a missing or extra comma, quote or bracket)`,
    };
  }
}

function dataProblem(file: string, text: string): { line: number | null; message: string } | null {
  if (/\.json$/i.test(file)) return jsonProblem(text);
  const error = parseDocument(text, { logLevel: 'silent' }).errors[0];
  if (!error) return null;
  const reason = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
  return { line: error.linePos?.[0]?.line ?? null, message: `invalid YAML: ${reason}: fix the syntax` };
}
