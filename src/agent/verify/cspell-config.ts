/**
 * The repository's cspell configuration, read as data (SPEC §19): the files cspell itself looks
 * for (JSON, JSONC, YAML, `cspell` in package.json, `cSpell` in .vscode/settings.json), from the
 * docs folder up to the root. Configuration that is code (`cspell.config.js`, `.mjs`, `.ts`…) is
 * never run: it is named in a note and spelling is skipped. Dictionaries the configuration defines
 * by a file of the repository are read from the tree being checked and given to cspell inline, so
 * the base and the head each use their own.
 */
import path from 'node:path';
import type { CSpellUserSettings } from 'cspell-lib';
import { RE2JS } from 're2js';
import { parse as parseYaml } from 'yaml';
import { compileGlob } from '../../glob.ts';
import type { DocsTree } from './types.ts';

/** cspell's own search order within one directory (cspell-lib's configLocations), data files only. */
const DATA_CONFIGS = [
  '.cspell.json',
  'cspell.json',
  '.cSpell.json',
  'cSpell.json',
  '.cspell.jsonc',
  'cspell.jsonc',
  '.vscode/cspell.json',
  '.vscode/cSpell.json',
  '.vscode/.cspell.json',
  '.cspell.config.json',
  '.cspell.config.jsonc',
  '.cspell.config.yaml',
  '.cspell.config.yml',
  'cspell.config.json',
  'cspell.config.jsonc',
  'cspell.config.yaml',
  'cspell.config.yml',
  '.cspell.yaml',
  '.cspell.yml',
  'cspell.yaml',
  'cspell.yml',
  '.config/.cspell.json',
  '.config/cspell.json',
  '.config/cspell.yaml',
  '.config/cspell.yml',
];

/** Configuration files that are programs: found, never executed. */
const CODE_CONFIGS = [
  'cspell.config',
  '.cspell.config',
  '.config/cspell.config',
  '.config/.cspell.config',
].flatMap((name) => ['mjs', 'cjs', 'js', 'mts', 'cts', 'ts', 'toml'].map((ext) => `${name}.${ext}`));

export interface CspellConfig {
  /** Repository-relative path of the file it came from (`package.json`, `.vscode/settings.json`…). */
  file: string;
  settings: CSpellUserSettings;
  /** Parts of the configuration not applied, with why. */
  notes: string[];
  /** Whether a page is excluded by `ignorePaths`. */
  ignored(file: string): boolean;
}

/** JSON with comments and trailing commas, as cspell and VS Code accept it. */
export function parseJsonc(text: string): unknown {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end - 1;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 1;
    } else out += c;
  }
  return JSON.parse(out.replace(/,(\s*[}\]])/g, '$1'));
}

function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i + 1;
  }
  return text.length;
}

/** Directories from `docsDir` up to the root, nearest first. */
function searchDirs(docsDir: string): string[] {
  const dirs: string[] = [];
  let dir = path.posix.normalize(docsDir);
  while (dir !== '.' && dir !== '/' && dir !== '') {
    dirs.push(dir);
    dir = path.posix.dirname(dir);
  }
  return [...dirs, '.'];
}

const inDir = (dir: string, file: string) => (dir === '.' ? file : `${dir}/${file}`);

/** The nearest configuration, or a reason there is none to apply (`skipped`). */
export async function findCspellConfig(
  tree: DocsTree,
  docsDir: string,
): Promise<{ config: CspellConfig } | { skipped: string }> {
  for (const dir of searchDirs(docsDir)) {
    for (const name of DATA_CONFIGS) {
      const file = inDir(dir, name);
      const text = await tree.readText(file);
      if (text !== null) return parsed(tree, file, text, (data) => data);
    }
    const packageJson = await tree.readText(inDir(dir, 'package.json'));
    if (packageJson !== null && /"cspell"\s*:/.test(packageJson)) {
      return parsed(
        tree,
        inDir(dir, 'package.json'),
        packageJson,
        (data) => (data as { cspell?: unknown }).cspell,
      );
    }
    for (const name of CODE_CONFIGS) {
      const code = inDir(dir, name);
      if ((await tree.exists(code)) === 'file') {
        return { skipped: `the cspell configuration ${code} is a program, which docwright does not run` };
      }
    }
  }
  const vscode = await tree.readText('.vscode/settings.json');
  if (vscode !== null && /"cSpell\./.test(vscode)) {
    return parsed(tree, '.vscode/settings.json', vscode, vscodeSection);
  }
  return { skipped: 'no cspell configuration in the repository' };
}

/** VS Code's settings name each key `cSpell.words`, `cSpell.ignoreWords`…; as one object. */
function vscodeSection(data: unknown): unknown {
  const section: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    if (key.startsWith('cSpell.')) section[key.slice('cSpell.'.length)] = value;
  }
  return section;
}

async function parsed(
  tree: DocsTree,
  file: string,
  text: string,
  pick: (data: unknown) => unknown,
): Promise<{ config: CspellConfig } | { skipped: string }> {
  let data: unknown;
  try {
    data = pick(/\.ya?ml$/.test(file) ? parseYaml(text) : parseJsonc(text));
  } catch (error) {
    return { skipped: `${file} does not parse: ${(error as Error).message.split('\n')[0]}` };
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    return { skipped: `${file} holds no cspell settings object` };
  }
  return { config: await toSettings(tree, file, data as Record<string, unknown>) };
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

/** The settings cspell is given: the data keys that need no file system and run no code. */
async function toSettings(tree: DocsTree, file: string, raw: Record<string, unknown>): Promise<CspellConfig> {
  const notes: string[] = [];
  const settings: CSpellUserSettings = {};
  for (const key of ['words', 'ignoreWords', 'flagWords', 'dictionaries', 'userWords'] as const) {
    if (raw[key] !== undefined) settings[key] = strings(raw[key]);
  }
  if (typeof raw.language === 'string') settings.language = raw.language;
  if (typeof raw.enabled === 'boolean') settings.enabled = raw.enabled;
  if (typeof raw.caseSensitive === 'boolean') settings.caseSensitive = raw.caseSensitive;
  if (typeof raw.allowCompoundWords === 'boolean') settings.allowCompoundWords = raw.allowCompoundWords;
  if (typeof raw.minWordLength === 'number') settings.minWordLength = raw.minWordLength;
  const patterns = safePatterns(strings(raw.ignoreRegExpList), notes);
  if (patterns.length > 0) settings.ignoreRegExpList = patterns;
  const definitions = Array.isArray(raw.dictionaryDefinitions) ? raw.dictionaryDefinitions : [];
  const defined = await Promise.all(
    definitions.map((definition) => inlineDictionary(tree, path.posix.dirname(file), definition, notes)),
  );
  const inline = defined.filter((d) => d !== null);
  if (inline.length > 0)
    settings.dictionaryDefinitions = inline as CSpellUserSettings['dictionaryDefinitions'];
  for (const key of ['import', 'overrides', 'languageSettings', 'patterns', 'includeRegExpList']) {
    if (raw[key] !== undefined) notes.push(`cspell's \`${key}\` in ${file} is not applied`);
  }
  const ignorePaths = strings(raw.ignorePaths).flatMap((glob) => {
    try {
      const base = glob.replace(/^\.?\//, '');
      return [compileGlob(base, { dot: true }), compileGlob(`**/${base}`, { dot: true })];
    } catch {
      return [];
    }
  });
  const configDir = path.posix.dirname(file);
  const ignored = (page: string) => {
    const relative =
      configDir === '.' ? page : page.startsWith(`${configDir}/`) ? page.slice(configDir.length + 1) : page;
    return ignorePaths.some((matches) => matches(relative) || matches(`${relative}/`));
  };
  return { file, settings, notes, ignored };
}

/**
 * The repository's regular expressions are run by cspell with JavaScript's backtracking engine:
 * only those RE2 accepts and without nested repetition (the shapes that backtrack for ever) are kept.
 */
function safePatterns(patterns: string[], notes: string[]): string[] {
  return patterns.filter((pattern) => {
    const body = /^\/(.*)\/[a-z]*$/s.exec(pattern)?.[1] ?? pattern;
    let valid = !/\([^()]*[+*][^()]*\)[+*{]/.test(body);
    try {
      RE2JS.compile(body);
    } catch {
      valid = false;
    }
    if (!valid)
      notes.push(
        `cspell ignoreRegExpList pattern ${JSON.stringify(pattern)} is not applied (it could run for ever)`,
      );
    return valid;
  });
}

/** A dictionary defined by a word-list file of the repository, as an inline word list. */
async function inlineDictionary(
  tree: DocsTree,
  configDir: string,
  definition: unknown,
  notes: string[],
): Promise<{ name: string; words: string[] } | null> {
  const {
    name,
    path: file,
    words,
  } = (definition ?? {}) as { name?: unknown; path?: unknown; words?: unknown };
  if (typeof name !== 'string') return null;
  if (Array.isArray(words)) return { name, words: strings(words) };
  if (typeof file !== 'string') return null;
  const relative = path.posix.normalize(path.posix.join(configDir, file.replace(/^\.\//, '')));
  if (
    relative.startsWith('../') ||
    path.posix.isAbsolute(relative) ||
    !/\.(txt|dic|words)$|^[^.]*$/.test(relative)
  ) {
    notes.push(`cspell dictionary ${name} (${file}) is not a word list of the repository: not applied`);
    return null;
  }
  const text = await tree.readText(relative);
  if (text === null) {
    notes.push(`cspell dictionary ${name}: ${relative} does not exist`);
    return null;
  }
  const list = text
    .split(/\r?\n/)
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter(Boolean);
  return { name, words: list };
}
