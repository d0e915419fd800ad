/**
 * Mintlify's split configuration: a `{"$ref": "./file.json"}` object anywhere in docs.json is
 * replaced by the contents of that file, resolved relative to the file holding the reference,
 * recursively; sibling keys of an object reference are merged on top of it; references must stay
 * inside the project and must not form a cycle (organize/settings in Mintlify's docs).
 */
import path from 'node:path';
import { isObject } from './types.ts';

/** Reads a repository-relative file's text, or null when there is none. */
export type ReadText = (file: string) => Promise<string | null>;

/** A reference or file that could not be resolved. */
export interface RefProblem {
  /** Repository-relative file the problem is in. */
  file: string;
  /** 1-based line, or null. */
  line: number | null;
  /** What is wrong and how to fix it; no line numbers (they go in `line`). */
  message: string;
}

export interface ResolvedConfig {
  /** The configuration with every resolvable `$ref` replaced; null when the config itself is not JSON. */
  value: unknown;
  /** Every file read: the config first, then the referenced files in the order they were reached. */
  files: string[];
  /** The text of each file read (for locating entries). */
  texts: Map<string, string>;
  /** The file each object or array of `value` was written in. */
  origin: WeakMap<object, string>;
  problems: RefProblem[];
}

/** Files followed at most, and how deep references nest: far past any real site, short of a runaway one. */
const MAX_REF_FILES = 2_000;
const MAX_REF_DEPTH = 32;

/**
 * Reads `configFile` (repository-relative) and resolves its `$ref`s. `projectDir` is the folder
 * references may not leave (the folder of docs.json).
 */
export async function resolveMintlifyConfig(read: ReadText, configFile: string): Promise<ResolvedConfig> {
  const projectDir = path.posix.dirname(configFile);
  const out: ResolvedConfig = {
    value: null,
    files: [],
    texts: new Map(),
    origin: new WeakMap(),
    problems: [],
  };
  const parsed = await load(read, configFile, out);
  if (parsed === undefined) return out;
  out.value = await resolveValue(parsed, configFile, [configFile], {
    read,
    out,
    projectDir,
    parsed: new Map(),
  });
  return out;
}

interface Context {
  read: ReadText;
  out: ResolvedConfig;
  projectDir: string;
  /** Each file's parsed JSON (undefined: not JSON). */
  parsed: Map<string, unknown>;
}

/** Parses one file and records where its objects came from; undefined when it is missing or not JSON. */
async function load(read: ReadText, file: string, out: ResolvedConfig): Promise<unknown> {
  const text = await read(file);
  if (text === null) return undefined;
  out.files.push(file);
  out.texts.set(file, text);
  try {
    const value: unknown = JSON.parse(text);
    markOrigin(value, file, out.origin);
    return value;
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
    const position = /position (\d+)/.exec(reason);
    const line = position ? lineAt(text, Number(position[1])) : null;
    out.problems.push({ file, line, message: 'invalid JSON: fix the syntax' });
    return undefined;
  }
}

function markOrigin(value: unknown, file: string, origin: WeakMap<object, string>): void {
  if (typeof value !== 'object' || value === null) return;
  origin.set(value, file);
  for (const child of Object.values(value)) markOrigin(child, file, origin);
}

async function resolveValue(value: unknown, file: string, stack: string[], ctx: Context): Promise<unknown> {
  if (Array.isArray(value)) {
    const items = [];
    for (const item of value) items.push(await resolveValue(item, file, stack, ctx));
    ctx.out.origin.set(items, ctx.out.origin.get(value) ?? file);
    return items;
  }
  if (!isObject(value)) return value;
  const { $ref, ...siblings } = value;
  const resolved: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(siblings))
    resolved[key] = await resolveValue(child, file, stack, ctx);
  ctx.out.origin.set(resolved, ctx.out.origin.get(value) ?? file);
  if (typeof $ref !== 'string') return resolved;
  const target = await follow($ref, file, stack, ctx);
  if (target === undefined) return resolved;
  if (!isObject(target)) return target;
  const merged = { ...target, ...resolved };
  ctx.out.origin.set(merged, ctx.out.origin.get(target) ?? file);
  return merged;
}

/** The resolved contents of the file a `$ref` names, or undefined (with a problem recorded). */
async function follow(ref: string, file: string, stack: string[], ctx: Context): Promise<unknown> {
  const line = locateLine(ctx.out.texts.get(file) ?? '', JSON.stringify(ref));
  const problem = (message: string) => {
    ctx.out.problems.push({ file, line, message });
    return undefined;
  };
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), ref));
  const inside = ctx.projectDir === '.' ? !target.startsWith('../') : target.startsWith(`${ctx.projectDir}/`);
  if (path.posix.isAbsolute(ref) || !inside || target === '..') {
    return problem(`"$ref": "${ref}" leaves the project folder: references must be relative paths inside it`);
  }
  if (stack.includes(target)) {
    return problem(
      `"$ref": "${ref}" makes a cycle (${[...stack, target].join(' → ')}): remove one of the references`,
    );
  }
  if (stack.length > MAX_REF_DEPTH || ctx.out.files.length >= MAX_REF_FILES) {
    return problem(`"$ref": "${ref}" nests references too deeply: flatten the configuration`);
  }
  // A file referenced twice is read and parsed once; each use resolves its own copy.
  const seen = ctx.out.texts.has(target);
  const parsed = seen ? ctx.parsed.get(target) : await load(ctx.read, target, ctx.out);
  if (!seen) ctx.parsed.set(target, parsed);
  if (parsed === undefined) {
    if (ctx.out.texts.has(target)) return undefined; // not JSON: reported where it was loaded
    return problem(`"$ref": "${ref}" names ${target}, which does not exist: create it or fix the path`);
  }
  return resolveValue(parsed, target, [...stack, target], ctx);
}

/** 1-based line of the first occurrence of `needle` in `text`, or null. */
export function locateLine(text: string, needle: string): number | null {
  const index = text.indexOf(needle);
  return index < 0 ? null : lineAt(text, index);
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}
