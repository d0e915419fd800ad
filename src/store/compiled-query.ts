import type { CompiledQuery, Kysely } from 'kysely';
import type { Database } from './schema.ts';

/**
 * Stands in for a named parameter while the query is compiled; no constant of docwright's queries
 * looks like it, and it survives being written into a JSON text (so that misuse is caught).
 */
const MARKER = '@@docwright-parameter:';

interface Compiled {
  query: CompiledQuery<unknown>;
  /** For each parameter of `query`: the name the caller fills it from, or undefined (a constant). */
  slots: (string | undefined)[];
}

/**
 * A query built and compiled once per database, then run with other parameters: on the hot paths
 * (creating a job, a worker's run) Kysely spent longer building and compiling a short statement
 * than SQLite spent running it (15–40 µs a statement; see bench/api.ts).
 *
 * `build` receives a marker in place of each named parameter and returns the compiled query; the
 * markers are found among the compiled parameters and filled from each call's values, so a value
 * must reach the SQL as one parameter (not inside a JSON text, not spread over a list). Values the
 * builder wrote itself stay as they were compiled.
 *
 * A transaction shares its database's adapter, and compiles as its database does (docwright's
 * Kysely instances have no plugins): one compilation, remembered with the adapter, serves the
 * database and all its transactions.
 */
export function compiledQuery<P extends Record<string, unknown>, R = unknown>(
  names: readonly (keyof P & string)[],
  build: (db: Kysely<Database>, parameters: P) => CompiledQuery<R>,
): (db: Kysely<Database>, parameters: P) => CompiledQuery<R> {
  const byAdapter = new WeakMap<object, Compiled>();
  const compile = (db: Kysely<Database>): Compiled => {
    const executor = db.getExecutor();
    if (executor.plugins.length > 0)
      throw new Error('compiledQuery: a database with plugins compiles differently');
    const markers = Object.fromEntries(names.map((name) => [name, `${MARKER}${name}`])) as unknown as P;
    const query = build(db, markers);
    const slots = query.parameters.map((value) => {
      if (typeof value !== 'string' || !value.includes(MARKER)) return undefined;
      const name = value.slice(MARKER.length);
      if (!value.startsWith(MARKER) || !(names as readonly string[]).includes(name)) {
        throw new Error(`compiledQuery: a parameter is not one value (${JSON.stringify(value)})`);
      }
      return name;
    });
    const unused = names.filter((name) => !slots.includes(name));
    if (unused.length > 0) throw new Error(`compiledQuery: ${unused.join(', ')} never reached the SQL`);
    return { query, slots };
  };
  return (db, parameters) => {
    const { adapter } = db.getExecutor();
    let compiled = byAdapter.get(adapter);
    if (!compiled) {
      compiled = compile(db);
      byAdapter.set(adapter, compiled);
    }
    const { query, slots } = compiled;
    return {
      ...(query as CompiledQuery<R>),
      parameters: slots.map((name, i) =>
        name === undefined ? query.parameters[i] : (parameters[name] ?? null),
      ),
    };
  };
}
