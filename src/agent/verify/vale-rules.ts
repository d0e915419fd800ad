/**
 * Vale's rule types, with Vale's semantics (internal/check/*.go): `existence`, `substitution`,
 * `occurrence`, `repetition`, `capitalization` and `conditional`. Each rule compiles once into a
 * function over one block of prose that answers alerts with offsets into that block. Patterns
 * come from the repository, so they are compiled with re2js (RE2, the syntax Vale documents, in
 * linear time): no pattern can hold the event loop. A pattern RE2 refuses (a lookaround, which
 * newer Vale accepts) makes the rule unusable, and it is named in a note.
 */
import { RE2JS } from 're2js';
import { type CaseOptions, sentenceMatches, titleMatches, toSentence, toTitle } from './vale-case.ts';
import type { ValeLevel } from './vale-config.ts';

export interface ValeAlert {
  /** Offsets in the block's text. */
  start: number;
  end: number;
  message: string;
  match: string;
}

/** What a rule sees besides the block: the page's `conditional` definitions so far. */
export interface RuleContext {
  sequences: Set<string>;
}

export interface ValeRule {
  /** `Style.Rule`. */
  name: string;
  level: ValeLevel;
  scopes: string[];
  link?: string;
  /** Whether an alert is about the words it spans (not a count or a whole heading): they are quoted when the message does not. */
  quotesMatch: boolean;
  run(text: string, context: RuleContext): ValeAlert[];
}

export type RuleDefinition = Record<string, unknown>;

export const SUPPORTED_TYPES = [
  'existence',
  'substitution',
  'occurrence',
  'repetition',
  'capitalization',
  'conditional',
];

const WORD_TEMPLATE = (body: string) => `(?m)\\b(?:${body})\\b`;
const NONWORD_TEMPLATE = (body: string) => `(?m)(?:${body})`;

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
const flag = (definition: RuleDefinition, key: string) =>
  Object.entries(definition).some(([k, v]) => k.toLowerCase() === key && (v === true || v === 'true'));

/** Every match of `pattern` in `text`: [start, end, groups (start/end pairs)]. */
export function* matches(
  pattern: RE2JS,
  text: string,
): Generator<{ start: number; end: number; groups: [number, number][] }> {
  const matcher = pattern.matcher(text);
  while (matcher.find()) {
    const groups: [number, number][] = [];
    for (let i = 1; i <= matcher.groupCount(); i++) groups.push([matcher.start(i), matcher.end(i)]);
    if (matcher.end() > matcher.start() || groups.length > 0)
      yield { start: matcher.start(), end: matcher.end(), groups };
  }
}

const found = (pattern: RE2JS | null, text: string): boolean => pattern?.matcher(text).find() ?? false;

/** Vale's printf: each `%s` takes the next value; extra values are dropped. */
export function formatMessage(message: string, ...values: string[]): string {
  let i = 0;
  return message.replace(/%s/g, () => (i < values.length ? values[i++]! : '%s'));
}

/** The exceptions of a rule: its own and (unless `vocab: false`) the accepted vocabulary. */
function exceptionPattern(definition: RuleDefinition, accepted: string[]): RE2JS | null {
  const terms = [...strings(definition.exceptions), ...(definition.vocab === false ? [] : accepted)];
  if (terms.length === 0) return null;
  terms.sort((a, b) => b.length - a.length);
  const body = terms.map((t) => (t.startsWith('(?i)') ? t : `(?-i)${t}`)).join('|');
  return RE2JS.compile(WORD_TEMPLATE(body));
}

const isPhrase = (s: string) => /^[\p{L}\p{N} -]*$/u.test(s);
const capFirst = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** Vale's ToSentence: 'a', 'a' or 'b', 'a', 'b' or 'c'. */
function toList(words: string[]): string {
  const quoted = words.map((w) => `'${w}'`);
  if (quoted.length <= 2) return quoted.join(' or ');
  return `${quoted.slice(0, -1).join(', ')}, or ${quoted.at(-1)}`;
}

interface Compiled {
  run(text: string, context: RuleContext): ValeAlert[];
}

type Builder = (
  definition: RuleDefinition,
  message: string,
  except: RE2JS | null,
  accepted: string[],
) => Compiled;

const existence: Builder = (definition, message, except) => {
  const tokens = strings(definition.tokens).filter((t) => t.trim() !== '');
  const raw = strings(definition.raw).join('');
  const word = !flag(definition, 'nonword') && tokens.length > 0;
  const template = word ? WORD_TEMPLATE(tokens.join('|')) : NONWORD_TEMPLATE(tokens.join('|'));
  let regex = flag(definition, 'append') ? template + raw : raw + template;
  if (flag(definition, 'ignorecase')) regex = `(?i)${regex}`;
  const pattern = RE2JS.compile(regex);
  return {
    run(text) {
      const alerts: ValeAlert[] = [];
      for (const m of matches(pattern, text)) {
        const match = text.slice(m.start, m.end);
        if (m.end === m.start || found(except, match.trim())) continue;
        alerts.push({ start: m.start, end: m.end, match, message: formatMessage(message, match) });
      }
      return alerts;
    },
  };
};

const substitution: Builder = (definition, message, except) => {
  const swap = (definition.swap ?? {}) as Record<string, unknown>;
  const keys = Object.keys(swap).sort((a, b) => b.length - a.length);
  const ignorecase = flag(definition, 'ignorecase');
  const capitalize = flag(definition, 'capitalize');
  // Each key is one group: its own groups become non-capturing, so the group tells which key matched.
  const body = keys.map((key) => `(${key.replace(/(?<!\\)\((?!\?)/g, '(?:')})`).join('|');
  const template = flag(definition, 'nonword') ? NONWORD_TEMPLATE(body) : WORD_TEMPLATE(body);
  const pattern = RE2JS.compile(ignorecase ? `(?i)${template}` : template);
  const action = (definition.action ?? {}) as { name?: unknown; params?: unknown };
  const replaceAction = action.name === 'replace' && strings(action.params).length === 0;
  const expectedFor = (index: number, observed: string) => {
    let expected = String(swap[keys[index]!] ?? '');
    if (capitalize && observed === capFirst(observed)) expected = capFirst(expected);
    if (!/\$\d/.test(expected)) return expected;
    const own = RE2JS.compile(ignorecase ? `(?i)${keys[index]}` : keys[index]!).matcher(observed);
    if (!own.find()) return expected;
    return expected.replace(/\$(\d+)/g, (_, n: string) => own.group(Number(n)) ?? '');
  };
  return {
    run(text) {
      const alerts: ValeAlert[] = [];
      for (const m of matches(pattern, text)) {
        const index = m.groups.findIndex(([s]) => s !== -1);
        if (index === -1) continue;
        const [start, end] = m.groups[index]!;
        const observed = text.slice(start, end).trim();
        let expected = expectedFor(index, observed);
        if (sameToken(expected, observed) || found(except, observed)) continue;
        let template = message;
        if (replaceAction) {
          const options = expected
            .split('|')
            .map((o) => (capitalize && observed === capFirst(observed) ? capFirst(o) : o));
          expected = toList(options);
          for (const spec of ["'%s'", '"%s"'])
            if (template.split(spec).length === 3) template = template.replace(spec, '%s');
        }
        alerts.push({
          start,
          end,
          match: text.slice(start, end),
          message: formatMessage(template, expected, observed),
        });
      }
      return alerts;
    },
  };
};

/** Vale's matchToken: a plain phrase must be equal; a pattern must match the whole observed text. */
function sameToken(expected: string, observed: string): boolean {
  if (isPhrase(expected)) return expected === observed;
  try {
    return RE2JS.compile(`^(?:${expected})$`).matches(observed);
  } catch {
    return expected === observed;
  }
}

const occurrence: Builder = (definition, message) => {
  const token = typeof definition.token === 'string' ? definition.token : '';
  const pattern = RE2JS.compile(`${flag(definition, 'ignorecase') ? '(?i)' : ''}(?:${token})`);
  const max = Number(definition.max ?? 0);
  const min = Number(definition.min ?? 0);
  return {
    run(text) {
      const all = [...matches(pattern, text)];
      const count = all.length;
      if (!((max > 0 && count > max) || (min > 0 && count < min))) return [];
      const first = all.find((m) => text.slice(m.start, m.end).trim() !== '');
      const [start, end] = first ? [first.start, first.end] : [0, 0];
      return [{ start, end, match: text.slice(start, end), message: formatMessage(message, String(count)) }];
    },
  };
};

const repetition: Builder = (definition, message, except) => {
  const ignorecase = flag(definition, 'ignorecase');
  const pattern = RE2JS.compile(`${ignorecase ? '(?i)' : ''}(${strings(definition.tokens).join('|')})`);
  const alpha = flag(definition, 'alpha');
  const max = Number(definition.max ?? 0);
  return {
    run(text) {
      const alerts: ValeAlert[] = [];
      let previous = '';
      let previousStart = 0;
      let count = 0;
      for (const m of matches(pattern, text)) {
        const current = text.slice(m.start, m.end).trim();
        let hit =
          current !== '' &&
          (ignorecase ? current.toLowerCase() === previous.toLowerCase() : current === previous);
        hit &&= !alpha || /^\p{L}+$/u.test(current);
        if (hit) count++;
        if (hit && count > max) {
          const span = text.slice(previousStart, m.end);
          if (!span.includes('\n') && !found(except, span)) {
            alerts.push({
              start: previousStart,
              end: m.end,
              match: span,
              message: formatMessage(message, current),
            });
            count = 0;
          }
        }
        previous = current;
        previousStart = m.start;
      }
      return alerts;
    },
  };
};

const capitalization: Builder = (definition, message, except, accepted) => {
  const match = typeof definition.match === 'string' ? definition.match : '$title';
  const exceptions = new Set([
    ...strings(definition.exceptions),
    ...(definition.vocab === false ? [] : accepted),
  ]);
  const options: CaseOptions = {
    exceptions,
    excepted: (word) => found(except, word),
    threshold: Number(definition.threshold ?? 0) || 0.8,
  };
  const style = definition.style === 'Chicago' ? 'Chicago' : 'AP';
  const own = match.startsWith('$') ? null : RE2JS.compile(match);
  const check = (text: string): [string, boolean] => {
    if (match === '$title') {
      const expected = toTitle(text, style, options);
      return [expected, titleMatches(text, expected, options)];
    }
    if (match === '$sentence') {
      const expected = toSentence(text, options);
      return [expected, sentenceMatches(text, expected, options)];
    }
    if (match === '$lower') return [text.toLowerCase(), text === text.toLowerCase() || found(except, text)];
    if (match === '$upper') return [text.toUpperCase(), text === text.toUpperCase() || found(except, text)];
    return [match, own!.matcher(text).find() || found(except, text)];
  };
  return {
    run(text) {
      const trimmed = text.trim();
      if (trimmed === '') return [];
      const [expected, ok] = check(trimmed);
      if (ok) return [];
      const start = text.indexOf(trimmed);
      return [
        {
          start,
          end: start + trimmed.length,
          match: trimmed,
          message: formatMessage(message, trimmed, expected),
        },
      ];
    },
  };
};

const conditional: Builder = (definition, message, except) => {
  const first = RE2JS.compile(String(definition.first ?? ''));
  const second = RE2JS.compile(String(definition.second ?? ''));
  return {
    run(text, context) {
      for (const m of matches(second, text)) {
        for (const [s, e] of m.groups) if (s !== -1 && e > s) context.sequences.add(text.slice(s, e));
      }
      const alerts: ValeAlert[] = [];
      for (const m of matches(first, text)) {
        const match = text.slice(m.start, m.end);
        if (m.end === m.start || context.sequences.has(match) || found(except, match)) continue;
        alerts.push({ start: m.start, end: m.end, match, message: formatMessage(message, match) });
      }
      return alerts;
    },
  };
};

const BUILDERS: Record<string, Builder> = {
  existence,
  substitution,
  occurrence,
  repetition,
  capitalization,
  conditional,
};

/**
 * The rule `name` from its YAML definition, or why it cannot run (an unsupported type, a pattern
 * RE2 refuses, a missing message).
 */
export function compileRule(
  name: string,
  definition: RuleDefinition,
  accepted: string[],
  level: ValeLevel | undefined,
): ValeRule | { problem: string; unsupportedType?: string } {
  const type = String(definition.extends ?? '');
  const builder = BUILDERS[type];
  if (!builder)
    return { problem: `type ${type || '(none)'} is not applied`, unsupportedType: type || '(none)' };
  if (typeof definition.message !== 'string') return { problem: 'it has no message' };
  const scope = definition.scope ?? 'text';
  try {
    const compiled = builder(
      definition,
      definition.message,
      exceptionPattern(definition, accepted),
      accepted,
    );
    const declared = String(definition.level ?? 'warning');
    return {
      name,
      level:
        level ??
        ((['suggestion', 'warning', 'error'].includes(declared) ? declared : 'warning') as ValeLevel),
      scopes: Array.isArray(scope) ? scope.map(String) : [String(scope)],
      quotesMatch: type !== 'occurrence' && type !== 'capitalization',
      ...(typeof definition.link === 'string' && { link: definition.link }),
      run: compiled.run,
    };
  } catch (error) {
    return { problem: `its pattern is not RE2 (${(error as Error).message.split('\n')[0]})` };
  }
}
