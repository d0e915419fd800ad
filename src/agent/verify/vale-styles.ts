/**
 * The styles and vocabularies under a repository's Vale `StylesPath`: each style a folder of rule
 * files (`<Style>/<Rule>.yml`, the rule `Style.Rule`), each vocabulary `config/vocabularies/<Name>/`
 * (or the older `Vocab/<Name>/`) with `accept.txt` and `reject.txt`. Vale's own style `Vale` is
 * built in: `Vale.Terms` (accepted terms written as accepted), `Vale.Avoid` (rejected terms) and
 * `Vale.Repetition`. Read from the tree being checked, once per tree.
 */
import { parse as parseYaml } from 'yaml';
import type { DocsTree } from './types.ts';
import type { ValeConfig } from './vale-config.ts';
import type { RuleDefinition } from './vale-rules.ts';

export interface ValeStyles {
  /** `Style.Rule` → its definition. */
  definitions: Map<string, RuleDefinition>;
  accepted: string[];
  rejected: string[];
  notes: string[];
}

function wordList(text: string | null): string[] {
  if (text === null) return [];
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('# '));
}

async function loadVocab(
  tree: DocsTree,
  stylesPath: string,
  name: string,
  styles: ValeStyles,
): Promise<void> {
  for (const dir of [`${stylesPath}/config/vocabularies/${name}`, `${stylesPath}/Vocab/${name}`]) {
    if ((await tree.exists(dir)) !== 'dir') continue;
    styles.accepted.push(...wordList(await tree.readText(`${dir}/accept.txt`)));
    styles.rejected.push(...wordList(await tree.readText(`${dir}/reject.txt`)));
    return;
  }
  styles.notes.push(`Vale vocabulary ${name} is not in ${stylesPath}/config/vocabularies`);
}

/**
 * Parsed rule files by their text: a style's files are the same in the base and the head, and
 * from one run to the next, and parsing them is most of a style's cost. Bounded (a run reads
 * a few hundred rules at most); the oldest entry goes first.
 */
const parsedRules = new Map<string, unknown>();
const MAX_PARSED_RULES = 5_000;

function parseRule(text: string): unknown {
  if (parsedRules.has(text)) return parsedRules.get(text);
  const parsed = parseYaml(text);
  if (parsedRules.size >= MAX_PARSED_RULES) parsedRules.delete(parsedRules.keys().next().value!);
  parsedRules.set(text, parsed);
  return parsed;
}

async function loadStyle(
  tree: DocsTree,
  stylesPath: string,
  style: string,
  styles: ValeStyles,
): Promise<void> {
  const dir = `${stylesPath}/${style}`;
  const files = (await tree.listFiles(dir)).filter((f) => /^[^/]+\.ya?ml$/.test(f.slice(dir.length + 1)));
  if (files.length === 0) {
    styles.notes.push(`Vale style ${style} is not in ${stylesPath} (docwright does not run vale sync)`);
    return;
  }
  for (const file of files) {
    const rule = file.slice(dir.length + 1).replace(/\.ya?ml$/, '');
    try {
      // A copy: the cached object is shared, and rules are built from it.
      const definition = structuredClone(parseRule((await tree.readText(file)) ?? ''));
      if (definition && typeof definition === 'object' && !Array.isArray(definition)) {
        styles.definitions.set(`${style}.${rule}`, definition as RuleDefinition);
      }
    } catch (error) {
      styles.notes.push(
        `Vale rule ${style}.${rule} does not parse: ${(error as Error).message.split('\n')[0]}`,
      );
    }
  }
}

/** The rules Vale keeps built in (internal/check/definition.go's defaultRules). */
function builtIn(styles: ValeStyles): void {
  const swap: Record<string, string> = {};
  for (const term of styles.accepted) if (/^[\p{L}\p{N} -]+$/u.test(term)) swap[term.toLowerCase()] = term;
  if (Object.keys(swap).length > 0) {
    styles.definitions.set('Vale.Terms', {
      extends: 'substitution',
      level: 'error',
      message: "Use '%s' instead of '%s'.",
      ignorecase: true,
      swap,
      vocab: false,
    });
  }
  if (styles.rejected.length > 0) {
    styles.definitions.set('Vale.Avoid', {
      extends: 'existence',
      level: 'error',
      message: "Avoid using '%s'.",
      tokens: styles.rejected,
    });
  }
  styles.definitions.set('Vale.Repetition', {
    extends: 'repetition',
    level: 'error',
    message: "'%s' is repeated!",
    alpha: true,
    tokens: ['[^\\s]+'],
  });
  styles.definitions.set('Vale.Spelling', { extends: 'spelling', message: "Did you really mean '%s'?" });
}

const loaded = new WeakMap<DocsTree, Map<string, Promise<ValeStyles>>>();

/** Every style the configuration names anywhere, and its vocabularies, read once per tree. */
export function loadStyles(tree: DocsTree, config: ValeConfig): Promise<ValeStyles> {
  let byConfig = loaded.get(tree);
  if (!byConfig) {
    byConfig = new Map();
    loaded.set(tree, byConfig);
  }
  const key = `${config.file}\0${config.stylesPath}`;
  let styles = byConfig.get(key);
  if (!styles) {
    styles = readStyles(tree, config);
    byConfig.set(key, styles);
  }
  return styles;
}

async function readStyles(tree: DocsTree, config: ValeConfig): Promise<ValeStyles> {
  const styles: ValeStyles = { definitions: new Map(), accepted: [], rejected: [], notes: [] };
  const named = new Set<string>();
  for (const section of config.sections) for (const style of section.basedOnStyles ?? []) named.add(style);
  for (const rules of [config.globalRules, ...config.sections.map((s) => s.rules)]) {
    for (const rule of rules.keys()) named.add(rule.split('.')[0]!);
  }
  if (config.stylesPath !== null) {
    for (const name of config.vocab) await loadVocab(tree, config.stylesPath, name, styles);
    for (const style of [...named].sort()) {
      if (style !== 'Vale') await loadStyle(tree, config.stylesPath, style, styles);
    }
  } else if ([...named].some((s) => s !== 'Vale')) {
    styles.notes.push(`${config.file} sets no StylesPath: only Vale's built-in rules apply`);
  }
  builtIn(styles);
  return styles;
}
