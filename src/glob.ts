/**
 * Glob patterns matched in linear time.
 *
 * Globs come from models (list_files, search) and from project settings (writable), and are
 * matched against paths a model chose. Backtracking matchers (picomatch, minimatch) can take
 * exponential time on patterns such as `**\/*(a*)*(a*)*(a*)c`, so a glob is translated into an
 * RE2 expression and matched by re2js, whose automaton runs in time linear in the path.
 *
 * Syntax: `*` (within a path segment), `**` (a whole segment: any number of directories), `?`,
 * `[abc]` / `[!abc]` / `[a-z]` / `[[:alpha:]]`, `{a,b}` (nested), the extglobs `@(a|b)`,
 * `?(…)`, `*(…)`, `+(…)`, and `\` to escape. `!(…)` (negation) has no linear-time form and is
 * refused.
 */
import { RE2JS } from 're2js';

/** Longest glob accepted. */
export const MAX_GLOB_LENGTH = 1_000;

export class GlobSyntaxError extends Error {
  constructor(glob: string, reason: string) {
    super(`invalid glob ${JSON.stringify(glob.length > 200 ? `${glob.slice(0, 200)}…` : glob)}: ${reason}`);
    this.name = 'GlobSyntaxError';
  }
}

export interface GlobOptions {
  /**
   * Whether wildcards match names that start with a dot (default false: `*` and `**` skip
   * `.hidden` files and directories, which only a pattern naming the dot reaches).
   */
  dot?: boolean;
}

/** A predicate over POSIX paths (no leading `./`), or a GlobSyntaxError. */
export function compileGlob(glob: string, options: GlobOptions = {}): (path: string) => boolean {
  const pattern = RE2JS.compile(globToRe2(glob, options));
  return (path) => pattern.testExact(path);
}

const RE2_SPECIAL = /[\\.+*?()|[\]{}^$]/g;
const escapeRe2 = (text: string) => text.replace(RE2_SPECIAL, '\\$&');

/** The RE2 expression (to be matched against the whole path) for a glob. */
export function globToRe2(glob: string, options: GlobOptions = {}): string {
  if (glob.length > MAX_GLOB_LENGTH)
    throw new GlobSyntaxError(glob, `longer than ${MAX_GLOB_LENGTH} characters`);
  if (glob.includes('\0')) throw new GlobSyntaxError(glob, 'contains a NUL character');
  const parser = new Parser(glob, options.dot ?? false);
  const source = parser.parse('');
  if (parser.pos < glob.length) throw new GlobSyntaxError(glob, `unexpected "${glob[parser.pos]}"`);
  return source;
}

/** A recursive-descent translator; `until` lists the characters that end the current group. */
class Parser {
  pos = 0;
  readonly glob: string;
  readonly dot: boolean;
  /** Nesting depth of braces and extglobs, bounded so that recursion cannot overflow. */
  depth = 0;

  constructor(glob: string, dot: boolean) {
    this.glob = glob;
    this.dot = dot;
  }

  #fail(reason: string): never {
    throw new GlobSyntaxError(this.glob, reason);
  }

  /** Translates until one of `until` (not consumed) or the end. */
  parse(until: string, groupStartsSegment = true): string {
    const g = this.glob;
    let out = '';
    /** Whether the next character of a path would start a segment. */
    let segmentStart = groupStartsSegment;
    while (this.pos < g.length) {
      const c = g[this.pos]!;
      if (until.includes(c)) break;
      const before = out;
      if (c === '\\') {
        if (this.pos + 1 >= g.length) this.#fail('ends with a lone "\\"');
        out += escapeRe2(g[this.pos + 1]!);
        this.pos += 2;
      } else if (c === '*' && g[this.pos + 1] === '*' && segmentStart && this.#endsSegment(this.pos + 2)) {
        this.pos += 2;
        const any = this.dot ? '[^/]*' : '(?:[^/.][^/]*)?';
        if (g[this.pos] === '/') {
          // `**/`: zero or more whole directories.
          this.pos++;
          out += `(?:${any}/)*`;
        } else if (out === '') {
          // `**` alone: anything.
          out += this.dot ? '.*' : `(?:${any}(?:/${any})*)?`;
        } else {
          // `dir/**`: the directory itself and everything below it.
          out = `${out.slice(0, -1)}(?:/${any}(?:/${any})*)?`;
        }
      } else if (this.#extglobAt(this.pos)) {
        out += this.#extglob(segmentStart);
      } else if (c === '*') {
        while (g[this.pos] === '*') this.pos++;
        out += segmentStart && !this.dot ? '(?:[^/.][^/]*)?' : '[^/]*';
      } else if (c === '?') {
        this.pos++;
        out += segmentStart && !this.dot ? '[^/.]' : '[^/]';
      } else if (c === '[') {
        out += this.#bracket(segmentStart && !this.dot);
      } else if (c === '{') {
        out += this.#braces(segmentStart);
      } else {
        out += escapeRe2(c);
        this.pos++;
      }
      segmentStart = out.endsWith('/') || out.endsWith('/)*') || (out === before && segmentStart);
    }
    return out;
  }

  #endsSegment(at: number): boolean {
    return at >= this.glob.length || this.glob[at] === '/';
  }

  #extglobAt(at: number): boolean {
    return '@?*+!'.includes(this.glob[at]!) && this.glob[at + 1] === '(';
  }

  #enter(): void {
    if (++this.depth > 20) this.#fail('nested more than 20 levels deep');
  }

  /** `@(a|b)`, `?(…)`, `*(…)`, `+(…)`. */
  #extglob(segmentStart: boolean): string {
    const kind = this.glob[this.pos]!;
    if (kind === '!') this.#fail('negated patterns "!(…)" are not supported');
    this.pos += 2;
    this.#enter();
    const alternatives: string[] = [];
    for (;;) {
      alternatives.push(this.parse('|)', segmentStart));
      const next = this.glob[this.pos];
      if (next === undefined) this.#fail(`"${kind}(" is never closed`);
      this.pos++;
      if (next === ')') break;
    }
    this.depth--;
    const group = `(?:${alternatives.join('|')})`;
    return kind === '@' ? group : `${group}${kind}`;
  }

  /** `{a,b,c}`; a group without a comma is literal text, as in the shell. */
  #braces(segmentStart: boolean): string {
    const start = this.pos;
    this.pos++;
    this.#enter();
    const alternatives: string[] = [];
    for (;;) {
      alternatives.push(this.parse(',}', segmentStart));
      const next = this.glob[this.pos];
      if (next === undefined) {
        // Never closed: the brace was a literal character.
        this.depth--;
        this.pos = start + 1;
        return '\\{';
      }
      this.pos++;
      if (next === '}') break;
    }
    this.depth--;
    if (alternatives.length === 1) {
      this.pos = start + 1;
      return '\\{';
    }
    return `(?:${alternatives.join('|')})`;
  }

  /** `[abc]`, `[!abc]`, `[^abc]`, ranges and POSIX classes; never matches '/'. */
  #bracket(noLeadingDot: boolean): string {
    const g = this.glob;
    let i = this.pos + 1;
    let negated = false;
    if (g[i] === '!' || g[i] === '^') {
      negated = true;
      i++;
    }
    let body = '';
    let first = true;
    for (; i < g.length; i++) {
      const c = g[i]!;
      if (c === ']' && !first) break;
      first = false;
      if (c === '[' && g[i + 1] === ':') {
        const close = g.indexOf(':]', i + 2);
        const name = close === -1 ? '' : g.slice(i + 2, close);
        if (
          !/^(alnum|alpha|ascii|blank|cntrl|digit|graph|lower|print|punct|space|upper|word|xdigit)$/.test(
            name,
          )
        ) {
          this.#fail(`unknown character class "[:${name}:]"`);
        }
        body += `[:${name}:]`;
        i = close + 1;
      } else if (c === '\\') {
        if (i + 1 >= g.length) break;
        body += escapeRe2(g[++i]!);
      } else if (c === '-' && body !== '' && g[i + 1] !== ']') {
        body += '-';
      } else {
        body += escapeRe2(c);
      }
    }
    if (i >= g.length) {
      // No closing bracket: a literal '['.
      this.pos++;
      return '\\[';
    }
    this.pos = i + 1;
    // A negated class never matches the separator. Ranges must ascend: RE2 says so otherwise.
    const klass = negated ? `[^/${noLeadingDot ? '.' : ''}${body}]` : `[${body}]`;
    try {
      RE2JS.compile(klass);
    } catch (error) {
      this.#fail(`bad character class: ${(error as Error).message}`);
    }
    return klass;
  }
}
