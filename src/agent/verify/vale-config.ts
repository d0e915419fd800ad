/**
 * The repository's `.vale.ini`, read as Vale reads it (vale.sh/docs/vale-ini): found in the docs
 * folder or a folder above it up to the root (`.vale.ini`, `_vale.ini`, `vale.ini`, `.vale`,
 * `_vale`); `StylesPath` relative to the file; `MinAlertLevel`; `Vocab`; and its sections — each a
 * glob over file paths, whose `BasedOnStyles` (the last matching section's wins) and per-rule
 * settings (`Style.Rule = NO|YES|suggestion|warning|error`, later sections over earlier) apply
 * to the files it matches. Nothing is downloaded: `Packages` must already be in `StylesPath`.
 */
import path from 'node:path';
import { RE2JS } from 're2js';
import type { DocsTree } from './types.ts';

export type ValeLevel = 'suggestion' | 'warning' | 'error';
export const VALE_LEVELS: ValeLevel[] = ['suggestion', 'warning', 'error'];

export interface ValeSection {
  /** The section's glob, as written (`*.md`, `*.{md,mdx}`, `docs/**`). */
  glob: string;
  matches(file: string): boolean;
  basedOnStyles?: string[];
  /** `Style.Rule` → false (NO), true (YES), or a level (which also turns it on). */
  rules: Map<string, boolean | ValeLevel>;
  /** `TokenIgnores` and `BlockIgnores`: text these patterns match is not prose. */
  ignores: RE2JS[];
}

export interface ValeConfig {
  /** Repository-relative path of the .vale.ini. */
  file: string;
  /** Repository-relative StylesPath, or null when the file sets none. */
  stylesPath: string | null;
  minAlertLevel: ValeLevel;
  vocab: string[];
  /** Global `Style.Rule = …` settings (before any section). */
  globalRules: Map<string, boolean | ValeLevel>;
  sections: ValeSection[];
  notes: string[];
}

const CONFIG_NAMES = ['.vale.ini', '_vale.ini', 'vale.ini', '.vale', '_vale'];

/** One INI file: the global keys, then each section's, repeated keys kept in order. */
export function parseIni(text: string): {
  global: [string, string][];
  sections: [string, [string, string][]][];
} {
  const global: [string, string][] = [];
  const sections: [string, [string, string][]][] = [];
  let current = global;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const section = /^\[(.+)\]$/.exec(line);
    if (section) {
      current = [];
      sections.push([section[1]!.trim(), current]);
      continue;
    }
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    // As go-ini reads Vale's file: `#` or `;` after a space starts a comment.
    const value = line.slice(eq + 1).replace(/\s[#;].*$/, '');
    current.push([line.slice(0, eq).trim(), value.trim()]);
  }
  return { global, sections };
}

/**
 * A Vale section glob (gobwas/glob without separators, as Vale compiles it: `*` crosses `/`) as
 * an RE2 expression: linear time whatever the repository wrote.
 */
export function valeGlob(glob: string): (file: string) => boolean {
  let re = '';
  let depth = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      while (glob[i + 1] === '*') i++;
      re += '.*';
    } else if (c === '?') re += '.';
    else if (c === '{') {
      depth++;
      re += '(?:';
    } else if (c === '}' && depth > 0) {
      depth--;
      re += ')';
    } else if (c === ',' && depth > 0) re += '|';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end === -1) re += '\\[';
      else {
        const body = glob
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\');
        re += `[${body}]`;
        i = end;
      }
    } else if (c === '\\' && i + 1 < glob.length) re += `\\${glob[++i]}`;
    else re += /[\\.+*?()|[\]{}^$]/.test(c) ? `\\${c}` : c;
  }
  const pattern = RE2JS.compile(`^(?:${re})$`);
  return (file) => pattern.matches(file);
}

const commaList = (value: string) =>
  value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);

function ruleSetting(value: string): boolean | ValeLevel | null {
  if (value === 'NO') return false;
  if (value === 'YES') return true;
  return (VALE_LEVELS as string[]).includes(value) ? (value as ValeLevel) : null;
}

/** The nearest .vale.ini from the docs folder up, or null when there is none. */
export async function findValeConfig(tree: DocsTree, docsDir: string): Promise<ValeConfig | null> {
  let dir = path.posix.normalize(docsDir);
  for (;;) {
    for (const name of CONFIG_NAMES) {
      const file = dir === '.' ? name : `${dir}/${name}`;
      const text = await tree.readText(file);
      if (text !== null) return readValeConfig(file, text);
    }
    if (dir === '.' || dir === '/' || dir === '') return null;
    dir = path.posix.dirname(dir);
  }
}

/** The settings of the .vale.ini at `file` with the text `text`. */
export function readValeConfig(file: string, text: string): ValeConfig {
  const ini = parseIni(text);
  const notes: string[] = [];
  const base = path.posix.dirname(file);
  const config: ValeConfig = {
    file,
    stylesPath: null,
    minAlertLevel: 'suggestion',
    vocab: [],
    globalRules: new Map(),
    sections: [],
    notes,
  };
  for (const [key, value] of ini.global) {
    if (key === 'StylesPath') config.stylesPath = path.posix.normalize(path.posix.join(base, value));
    else if (key === 'MinAlertLevel' && (VALE_LEVELS as string[]).includes(value)) {
      config.minAlertLevel = value as ValeLevel;
    } else if (key === 'Vocab') config.vocab.push(...commaList(value));
    else if (key === 'Packages')
      notes.push(`Vale Packages are not downloaded: only the styles in StylesPath apply`);
    else if (key.includes('.')) {
      const setting = ruleSetting(value);
      if (setting !== null) config.globalRules.set(key, setting);
    }
  }
  for (const [glob, keys] of ini.sections) {
    let matches: (file: string) => boolean;
    try {
      matches = valeGlob(glob);
    } catch {
      notes.push(`Vale section [${glob}] is not a glob docwright can read: not applied`);
      continue;
    }
    const section: ValeSection = { glob, matches, rules: new Map(), ignores: [] };
    for (const [key, value] of keys) readSectionKey(section, key, value, notes);
    config.sections.push(section);
  }
  return config;
}

function readSectionKey(section: ValeSection, key: string, value: string, notes: string[]): void {
  if (key === 'BasedOnStyles') {
    section.basedOnStyles = [...(section.basedOnStyles ?? []), ...commaList(value)];
  } else if (key === 'TokenIgnores' || key === 'BlockIgnores') {
    for (const pattern of commaList(value)) {
      try {
        section.ignores.push(RE2JS.compile(pattern));
      } catch {
        notes.push(`Vale ${key} pattern ${JSON.stringify(pattern)} is not RE2: not applied`);
      }
    }
  } else if (key === 'Transform') {
    notes.push(`Vale Transform (XSLT) in [${section.glob}] is not applied`);
  } else if (key.includes('.')) {
    const setting = ruleSetting(value);
    if (setting !== null) section.rules.set(key, setting);
  }
}

/** What applies to one file: its styles, rule settings and ignored patterns (Vale's core/file.go). */
export function settingsFor(
  config: ValeConfig,
  file: string,
): { styles: string[]; rules: Map<string, boolean | ValeLevel>; ignores: RE2JS[] } {
  const base = path.posix.dirname(config.file);
  const candidates = [
    file,
    ...(base !== '.' && file.startsWith(`${base}/`) ? [file.slice(base.length + 1)] : []),
  ];
  let styles: string[] = [];
  const rules = new Map(config.globalRules);
  const ignores: RE2JS[] = [];
  for (const section of config.sections) {
    if (!candidates.some((c) => section.matches(c))) continue;
    if (section.basedOnStyles) styles = section.basedOnStyles;
    for (const [rule, setting] of section.rules) rules.set(rule, setting);
    ignores.push(...section.ignores);
  }
  return { styles, rules, ignores };
}
