/**
 * Spelling (SPEC §19, docs/verification.mdx): the repository's cspell configuration applied with
 * the cspell library itself to the lines the run changed of its Markdown and MDX pages — prose
 * only: code spans and blocks, HTML and JSX, link targets and front matter keys and URLs are not
 * words (prose.ts). No configuration, no check: a team that does not spell-check its docs is not
 * held to a dictionary it never chose.
 */
import { pathToFileURL } from 'node:url';
import type { ValidationIssue } from 'cspell-lib';
import { changedLines, lineOf, lineStarts, MAX_FINDINGS_PER_PAGE, pagesToCheck } from './changed-lines.ts';
import { type CspellConfig, findCspellConfig } from './cspell-config.ts';
import { isProsePage, proseOf } from './prose.ts';
import type { Check, CheckInput, Finding } from './types.ts';

/** In-document directives (`cspell:ignore …`, `spell-checker: disable`) stay: they live in comments. */
const DIRECTIVE = /\b(?:cspell|spell-?checker)\s*:[^\n]{0,500}?(?=-->|\*\/|\}|$)/gim;

/** The page as cspell reads it: its prose, front matter values, and cspell's own directives. */
function spellingText(tree: object, file: string, text: string): string {
  const prose = proseOf(tree, file, text);
  const chars = [...prose.masked];
  if (chars.length !== text.length) return prose.masked;
  const keep = (start: number, end: number) => {
    for (let i = start; i < end; i++) chars[i] = text[i]!;
  };
  for (const [start, end] of prose.frontmatterValues) keep(start, end);
  for (const match of text.matchAll(DIRECTIVE)) keep(match.index, match.index + match[0].length);
  return chars.join('');
}

/** What is wrong and what to do; the same wherever the word is (no line or column). */
function message(issue: ValidationIssue, config: CspellConfig): string {
  const suggestions = (issue.suggestions ?? []).slice(0, 3);
  const hint =
    suggestions.length > 0
      ? `did you mean ${suggestions.map((s) => `"${s}"`).join(' or ')}?`
      : 'check its spelling';
  if (issue.isFlagged) {
    return `"${issue.text}" is a forbidden word (flagWords of ${config.file}): replace it${suggestions.length > 0 ? `, e.g. with "${suggestions[0]}"` : ''}`;
  }
  return `unknown word "${issue.text}" (cspell, configured in ${config.file}): ${hint} Correct the spelling, or rephrase`;
}

/**
 * Unknown words are errors: `cspell` exits non-zero on any of them, so the repository's own spell
 * check would fail the pull request.
 */
export function spellingCheck(): Check {
  return {
    name: 'spelling',
    async run(input) {
      const found = await findCspellConfig(input.tree, input.docsDir);
      if ('skipped' in found) return { findings: [], skipped: found.skipped };
      const { config } = found;
      if (config.settings.enabled === false)
        return { findings: [], skipped: `${config.file} turns cspell off` };
      const findings: Finding[] = [];
      let pages = 0;
      for (const file of pagesToCheck(input, isProsePage)) {
        if (config.ignored(file)) continue;
        input.signal.throwIfAborted();
        const text = await input.tree.readText(file);
        if (text === null) continue;
        const lines = await changedLines(input, file, text);
        if (lines !== null && lines.size === 0) continue;
        pages++;
        findings.push(...(await checkPage(input, config, file, text, lines)));
      }
      return { findings, counts: { pages }, ...(config.notes.length > 0 && { notes: config.notes }) };
    },
  };
}

async function checkPage(
  input: CheckInput,
  config: CspellConfig,
  file: string,
  text: string,
  lines: Set<number> | null,
): Promise<Finding[]> {
  // Loaded on the first page to spell-check: 40 MB every agent process would carry otherwise.
  const { spellCheckDocument } = await import('cspell-lib');
  const result = await spellCheckDocument(
    // A path under a root of its own: cspell finds no configuration file beside it.
    {
      uri: pathToFileURL(`/docwright-page/${file}`).href,
      text: spellingText(input.tree, file, text),
      languageId: 'markdown',
    },
    { noConfigSearch: true, generateSuggestions: true, numSuggestions: 3 },
    { version: '0.2', ...config.settings },
  );
  const starts = lineStarts(text);
  const findings: Finding[] = [];
  for (const issue of result.issues) {
    const line = lineOf(starts, issue.offset);
    if (lines !== null && !lines.has(line)) continue;
    findings.push({ path: file, line, message: message(issue, config), level: 'error', rule: 'cspell' });
    if (findings.length >= MAX_FINDINGS_PER_PAGE) break;
  }
  return findings;
}
