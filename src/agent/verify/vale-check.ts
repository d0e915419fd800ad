/**
 * Style (SPEC §19, docs/verification.mdx): the repository's Vale configuration applied to the
 * lines the run changed of its Markdown and MDX pages, with Vale's semantics for the rule types
 * existence, substitution, occurrence, repetition, capitalization and conditional (vale-rules.ts).
 * Prose only, as Vale reads it: front matter, code, HTML and JSX are skipped (prose.ts). Each page
 * is cut into Vale's blocks — headings (`heading.h1`…), paragraphs, list items, table cells and
 * quotes, sentences, and the raw file — and a rule runs on the blocks its `scope` names.
 * Alerts at level `error` block the run; `warning` and `suggestion` are reported.
 */

import type { RE2JS } from 're2js';
import { changedLines, lineOf, lineStarts, MAX_FINDINGS_PER_PAGE, pagesToCheck } from './changed-lines.ts';
import { isProsePage, type Prose, proseOf } from './prose.ts';
import type { Check, Finding } from './types.ts';
import { valeSwitches } from './vale-comments.ts';
import { findValeConfig, settingsFor, VALE_LEVELS, type ValeConfig, type ValeLevel } from './vale-config.ts';
import { compileRule, matches, type RuleContext, type RuleDefinition, type ValeRule } from './vale-rules.ts';
import { loadStyles, type ValeStyles } from './vale-styles.ts';

/** One block of a page: where it is, and the scope names it answers to. */
interface Block {
  start: number;
  end: number;
  sections: Set<string>;
}

/** Sentence ends: `.`, `!` or `?` (and closing quotes or brackets) before a space. */
const SENTENCE_END = /[.!?]+["')\]]*\s+/g;

function sentences(masked: string, start: number, end: number): Block[] {
  const blocks: Block[] = [];
  const text = masked.slice(start, end);
  let from = 0;
  const push = (to: number) => {
    const piece = text.slice(from, to);
    const lead = piece.length - piece.trimStart().length;
    if (piece.trim() !== '') {
      blocks.push({
        start: start + from + lead,
        end: start + from + piece.trimEnd().length,
        sections: new Set(['sentence']),
      });
    }
  };
  for (const match of text.matchAll(SENTENCE_END)) {
    push(match.index + match[0].trimEnd().length);
    from = match.index + match[0].length;
  }
  push(text.length);
  return blocks;
}

/** Vale's blocks of a page, in the page's order. */
function blocksOf(prose: Prose, source: string): Block[] {
  const blocks: Block[] = [
    { start: 0, end: source.length, sections: new Set(['raw']) },
    { start: 0, end: prose.masked.length, sections: new Set(['summary']) },
  ];
  for (const block of prose.blocks) {
    const sections = new Set(['text']);
    if (block.scope === 'heading') for (const s of ['heading', `h${block.depth ?? 1}`]) sections.add(s);
    else if (block.scope === 'table') for (const s of ['table', 'cell']) sections.add(s);
    else sections.add(block.scope === 'paragraph' ? 'paragraph' : block.scope).add('paragraph');
    blocks.push({ start: block.start, end: block.end, sections });
    if (block.scope !== 'heading' && block.scope !== 'table')
      blocks.push(...sentences(prose.masked, block.start, block.end));
  }
  return blocks;
}

/** Vale's scope selectors: `heading.h2`, `~heading`, `paragraph&~list`… against a block's names. */
export function scopeMatches(scopes: string[], sections: Set<string>): boolean {
  return scopes.some((scope) =>
    scope.split('&').every((part) => {
      const negated = part.trim().startsWith('~');
      const names = part.trim().replace(/^~/, '').split('.');
      const contained = names.every((name) => sections.has(name));
      return negated ? !contained : contained;
    }),
  );
}

/**
 * Compiled rules by everything they are made of, across runs and trees: compiling a style's
 * patterns costs more than running them on a page. Bounded; the oldest entry goes first.
 */
const compiledRules = new Map<string, ValeRule | string>();
const MAX_COMPILED_RULES = 5_000;

function compileCached(
  name: string,
  definition: RuleDefinition,
  accepted: string[],
  level: ValeLevel | undefined,
): ValeRule | string {
  const key = JSON.stringify([name, definition, accepted, level ?? null]);
  let rule = compiledRules.get(key);
  if (rule === undefined) {
    const made = compileRule(name, definition, accepted, level);
    rule = 'problem' in made ? (made.unsupportedType ?? `!${made.problem}`) : made;
    if (compiledRules.size >= MAX_COMPILED_RULES) compiledRules.delete(compiledRules.keys().next().value!);
    compiledRules.set(key, rule);
  }
  return rule;
}

/** The rules that apply to `file`, each at its level, and what could not be applied. */
function rulesFor(
  config: ValeConfig,
  styles: ValeStyles,
  file: string,
  compiled: Map<string, ValeRule | string>,
) {
  const { styles: based, rules: settings } = settingsFor(config, file);
  const minimum = VALE_LEVELS.indexOf(config.minAlertLevel);
  const rules: ValeRule[] = [];
  for (const name of styles.definitions.keys()) {
    const setting = settings.get(name);
    if (setting === false) continue;
    if (setting === undefined && !based.includes(name.split('.')[0]!)) continue;
    const level = typeof setting === 'string' ? setting : undefined;
    const key = `${name}\0${level ?? ''}`;
    if (!compiled.has(key)) {
      compiled.set(key, compileCached(name, styles.definitions.get(name)!, styles.accepted, level));
    }
    const rule = compiled.get(key)!;
    if (typeof rule !== 'string' && VALE_LEVELS.indexOf(rule.level) >= minimum) rules.push(rule);
  }
  return rules;
}

/** The prose with what the section's `TokenIgnores`/`BlockIgnores` match (in the file) blanked. */
function withoutIgnored(prose: Prose, text: string, ignores: RE2JS[]): Prose {
  if (ignores.length === 0) return prose;
  const chars = [...prose.masked];
  if (chars.length !== text.length) return prose;
  for (const pattern of ignores) {
    for (const m of matches(pattern, text)) {
      for (let i = m.start; i < m.end; i++) if (chars[i] !== '\n') chars[i] = ' ';
    }
  }
  return { ...prose, masked: chars.join('') };
}

/** The finding's message: Vale's, with the text it is about when the message does not quote it. */
function messageOf(rule: ValeRule, message: string, match: string): string {
  const quote = rule.quotesMatch && match.trim() !== '' && !message.includes(match.trim());
  const quoted = quote ? `"${match.trim()}": ${message}` : message;
  return `${quoted} (Vale ${rule.name}${rule.link ? `, ${rule.link}` : ''})`;
}

/** The Vale check. */
export function valeCheck(): Check {
  return {
    name: 'style',
    async run(input) {
      const config = await findValeConfig(input.tree, input.docsDir);
      if (config === null) return { findings: [], skipped: 'no .vale.ini in the repository' };
      const styles = await loadStyles(input.tree, config);
      const compiled = new Map<string, ValeRule | string>();
      const findings: Finding[] = [];
      let pages = 0;
      const applied = new Set<string>();
      for (const file of pagesToCheck(input, isProsePage)) {
        input.signal.throwIfAborted();
        const text = await input.tree.readText(file);
        if (text === null) continue;
        const lines = await changedLines(input, file, text);
        if (lines !== null && lines.size === 0) continue;
        const rules = rulesFor(config, styles, file, compiled);
        if (rules.length === 0) continue;
        pages++;
        for (const rule of rules) applied.add(rule.name);
        const prose = withoutIgnored(
          proseOf(input.tree, file, text),
          text,
          settingsFor(config, file).ignores,
        );
        findings.push(...checkPage(file, text, prose, rules, lines));
      }
      return {
        findings,
        counts: { pages, rules: applied.size },
        ...notesOf(config, styles, compiled),
      };
    },
  };
}

function checkPage(
  file: string,
  text: string,
  prose: Prose,
  rules: ValeRule[],
  lines: Set<number> | null,
): Finding[] {
  const findings: Finding[] = [];
  const seen = new Set<string>();
  const blocks = blocksOf(prose, text);
  const switchedOff = valeSwitches(text);
  const starts = lineStarts(text);
  for (const rule of rules) {
    const context: RuleContext = { sequences: new Set() };
    for (const block of blocks) {
      if (!scopeMatches(rule.scopes, block.sections)) continue;
      const source = block.sections.has('raw') ? text : prose.masked;
      for (const alert of rule.run(source.slice(block.start, block.end), context)) {
        const start = block.start + alert.start;
        const key = `${rule.name}\0${start}\0${block.start + alert.end}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const line = lineOf(starts, start);
        if ((lines !== null && !lines.has(line)) || switchedOff(rule.name, start)) continue;
        findings.push({
          path: file,
          line,
          message: messageOf(rule, alert.message, alert.match),
          level: rule.level as ValeLevel,
          rule: rule.name,
        });
      }
    }
  }
  // Past the cap, the errors are the ones kept: they are what blocks.
  const rank = (f: Finding) => (f.level === 'error' ? 0 : 1);
  const kept =
    findings.length > MAX_FINDINGS_PER_PAGE
      ? findings.sort((a, b) => rank(a) - rank(b)).slice(0, MAX_FINDINGS_PER_PAGE)
      : findings;
  return kept.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || a.rule.localeCompare(b.rule));
}

/** Rule types not applied, and rules that could not be compiled, listed once. */
function notesOf(config: ValeConfig, styles: ValeStyles, compiled: Map<string, ValeRule | string>) {
  const notes = [...config.notes, ...styles.notes];
  const unsupported = new Map<string, Set<string>>();
  for (const [key, rule] of compiled) {
    if (typeof rule !== 'string') continue;
    const name = key.split('\0')[0]!;
    if (rule.startsWith('!')) notes.push(`Vale rule ${name} is not applied: ${rule.slice(1)}`);
    else unsupported.set(rule, (unsupported.get(rule) ?? new Set()).add(name));
  }
  if (unsupported.size > 0) {
    const list = [...unsupported].map(([type, names]) => `${type} (${[...names].sort().join(', ')})`);
    notes.push(`Vale rule types docwright does not apply: ${list.sort().join('; ')}`);
  }
  return notes.length > 0 ? { notes: [...new Set(notes)] } : {};
}
