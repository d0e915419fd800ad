/**
 * What a Sphinx `conf.py` says about the site, read as text and never executed: the root
 * document, the source suffixes, the exclude patterns and the extensions, as far as simple
 * assignments (`x = …`, `x += …`, `x.append(…)`, `x.extend(…)`) of Python literals say them.
 */

/** The settings docwright reads from conf.py, with Sphinx's defaults where it says nothing. */
export interface SphinxConf {
  /** `root_doc` (or its older name `master_doc`); default `index`. */
  rootDoc: string;
  /** Suffixes of source files, `.rst` by default; `.md` when MyST is among the extensions. */
  sourceSuffixes: string[];
  /** `exclude_patterns` and `templates_path`, which Sphinx never reads as documents. */
  excludePatterns: string[];
  extensions: string[];
  /**
   * Whether conf.py assigns `extensions` plainly. When it does not (a helper function builds the
   * configuration), extensions that only make more targets valid are assumed to be on.
   */
  extensionsKnown: boolean;
  /** Whether MyST Markdown pages are read (`myst_parser` or `myst_nb`). */
  myst: boolean;
  /** `sphinx.ext.autosectionlabel`: every section title is a `:ref:` label. */
  autosectionlabel: boolean;
  /** `autosectionlabel_prefix_document`: those labels read `docname:Title`. */
  autosectionlabelPrefixDocument: boolean;
  /** Whether `:ref:` targets may live in other projects (`sphinx.ext.intersphinx`). */
  intersphinx: boolean;
}

/** Python string literals: optional prefix, single or double quotes, escapes; no triple quotes. */
const STRING = /(?:[rRuUbB]{0,2})(?:'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)")/g;

/** The settings of conf.py's text. */
export function readSphinxConf(text: string): SphinxConf {
  const code = stripComments(text);
  const rootDoc = lastString(code, 'root_doc') ?? lastString(code, 'master_doc') ?? 'index';
  const extensions = listValue(code, 'extensions');
  const extensionsKnown = /^extensions\s*=/m.test(code);
  const myst = extensions.some((e) => e === 'myst_parser' || e === 'myst_nb');
  const suffixes = suffixValue(code) ?? ['.rst'];
  if (myst && !suffixes.includes('.md')) suffixes.push('.md');
  return {
    rootDoc: rootDoc.replace(/^\/+/, ''),
    sourceSuffixes: suffixes,
    excludePatterns: [...listValue(code, 'exclude_patterns'), ...listValue(code, 'templates_path')],
    extensions,
    extensionsKnown,
    myst,
    autosectionlabel: !extensionsKnown || extensions.includes('sphinx.ext.autosectionlabel'),
    autosectionlabelPrefixDocument: /^autosectionlabel_prefix_document\s*=\s*True\b/m.test(code),
    intersphinx: !extensionsKnown || extensions.includes('sphinx.ext.intersphinx'),
  };
}

/** conf.py without `#` comments (outside strings), so a commented-out setting says nothing. */
function stripComments(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      let quote: string | null = null;
      for (let i = 0; i < line.length; i++) {
        const c = line[i]!;
        if (quote) {
          if (c === '\\') i++;
          else if (c === quote) quote = null;
        } else if (c === "'" || c === '"') quote = c;
        else if (c === '#') return line.slice(0, i);
      }
      return line;
    })
    .join('\n');
}

function unquote(match: RegExpExecArray): string {
  return (match[1] ?? match[2] ?? '').replace(/\\(.)/g, '$1');
}

/** The strings of a literal, with `keysOnly` those followed by `:` (a dict's keys). */
function stringsOf(literal: string, keysOnly = false): string[] {
  const found: string[] = [];
  for (const m of literal.matchAll(STRING)) {
    if (keysOnly && !/^\s*:/.test(literal.slice(m.index + m[0].length))) continue;
    found.push(unquote(m as RegExpExecArray));
  }
  return found;
}

/** The value of the last top-level `name = 'string'`. */
function lastString(code: string, name: string): string | null {
  const re = new RegExp(`^${name}\\s*=\\s*[rRuU]?(?:'([^'\\n]*)'|"([^"\\n]*)")\\s*$`, 'gm');
  let value: string | null = null;
  for (const m of code.matchAll(re)) value = m[1] ?? m[2] ?? '';
  return value;
}

/** The bracketed literal starting at `start` (`[…]`, `(…)`, `{…}`), strings respected. */
function bracketed(code: string, start: number): string | null {
  const open = code[start];
  if (open !== '[' && open !== '(' && open !== '{') return null;
  let depth = 0;
  let quote: string | null = null;
  for (let i = start; i < code.length; i++) {
    const c = code[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if ('[({'.includes(c)) depth++;
    else if (')]}'.includes(c) && --depth === 0) return code.slice(start, i + 1);
  }
  return null;
}

/** A list setting in order: assignments replace it, `+=`/`append`/`extend` add to it. */
function listValue(code: string, name: string): string[] {
  let values: string[] = [];
  const re = new RegExp(`^${name}\\s*(=|\\+=|\\.append\\(|\\.extend\\()\\s*`, 'gm');
  for (const m of code.matchAll(re)) {
    const at = m.index + m[0].length;
    const literal =
      m[1] === '.append('
        ? (/^[rRuU]?('[^'\n]*'|"[^"\n]*")/.exec(code.slice(at))?.[0] ?? null)
        : bracketed(code, at);
    if (literal === null) continue;
    const strings = stringsOf(literal);
    values = m[1] === '=' ? strings : [...values, ...strings];
  }
  return values;
}

/** `source_suffix` as a string, a list or a dict (its keys), or null when not set. */
function suffixValue(code: string): string[] | null {
  let value: string[] | null = null;
  for (const m of code.matchAll(/^source_suffix\s*=\s*/gm)) {
    const at = m.index + m[0].length;
    const literal = bracketed(code, at);
    if (literal) value = stringsOf(literal, literal.startsWith('{'));
    else {
      const single = /^[rRuU]?(?:'([^'\n]*)'|"([^"\n]*)")/.exec(code.slice(at));
      if (single) value = [single[1] ?? single[2] ?? ''];
    }
  }
  return value && value.length > 0 ? value : null;
}
