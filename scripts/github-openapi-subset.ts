// Writes test/data/github-openapi-subset.json: the operations of GitHub's published REST API
// description (`@octokit/openapi`, api.github.com.json) that docwright calls and the GitHub
// double answers, with every `$ref` in their parameters and request bodies inlined, and the
// JSON schema of each one's success answer with the component schemas it refers to (kept as
// references: inlined, the nested repository objects would weigh megabytes). The double
// (test/doubles/github-api.ts) checks each request, and each of its own answers, against it;
// the 385 MB package itself is not a dependency. To refresh it after a new release of the
// description:
//
//   npm install --no-save @octokit/openapi@<version> && node scripts/github-openapi-subset.ts &&
//     npx biome format --write test/data
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** The operations, as `METHOD /path/template`: what src/git/hosts/github.ts sends. */
const OPERATIONS = [
  'GET /repos/{owner}/{repo}',
  'GET /repos/{owner}/{repo}/pulls',
  'POST /repos/{owner}/{repo}/pulls',
  'POST /repos/{owner}/{repo}/issues/{issue_number}/labels',
  'POST /app/installations/{installation_id}/access_tokens',
  'GET /repos/{owner}/{repo}/pulls/{pull_number}',
  'GET /repos/{owner}/{repo}/pulls/{pull_number}/files',
  'GET /repos/{owner}/{repo}/pulls/{pull_number}/commits',
  'GET /repos/{owner}/{repo}/commits',
  'GET /repos/{owner}/{repo}/commits/{ref}',
  'GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls',
  'GET /repos/{owner}/{repo}/compare/{basehead}',
  'POST /repos/{owner}/{repo}/issues/{issue_number}/comments',
  // Pull request comments (src/git/hosts/github-conversation.ts).
  'GET /user',
  'GET /app',
  'GET /repos/{owner}/{repo}/collaborators/{username}/permission',
  'GET /repos/{owner}/{repo}/issues/{issue_number}/comments',
  'GET /repos/{owner}/{repo}/pulls/{pull_number}/comments',
  'POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies',
];

/** Words of a schema that describe rather than constrain: left out to keep the file small. */
const PROSE = new Set(['description', 'title', 'examples', 'example', 'externalDocs', 'summary']);

type Json = Record<string, unknown>;

const require = createRequire(import.meta.url);
const packageJson = require('@octokit/openapi/package.json') as { version: string };
const spec = JSON.parse(
  readFileSync(require.resolve('@octokit/openapi/generated/api.github.com.json'), 'utf8'),
) as Json;

/** Inlines `#/…` references (a reference back into itself becomes `{}`). */
function deref(node: unknown, stack: string[] = []): unknown {
  if (Array.isArray(node)) return node.map((item) => deref(item, stack));
  if (node === null || typeof node !== 'object') return node;
  const record = node as Json;
  if (typeof record.$ref === 'string') {
    const ref = record.$ref;
    if (stack.includes(ref)) return {};
    const target = ref
      .slice(2)
      .split('/')
      .reduce<unknown>((value, key) => (value as Json)[key.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
    return deref(target, [...stack, ref]);
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(record)) {
    // Examples are free-form, and the double does not read them.
    if (key === 'examples' || key === 'example') continue;
    out[key] = deref(value, stack);
  }
  return out;
}

/** A schema with its prose left out; `$ref`s kept, and the component schemas they name collected. */
function schemaOf(node: unknown, components: Set<string>): unknown {
  if (Array.isArray(node)) return node.map((item) => schemaOf(item, components));
  if (node === null || typeof node !== 'object') return node;
  const record = node as Json;
  if (typeof record.$ref === 'string') {
    const name = record.$ref.replace('#/components/schemas/', '');
    if (!components.has(name)) {
      components.add(name);
      schemas[name] = null;
      schemas[name] = schemaOf(((spec.components as Json).schemas as Json)[name], components);
    }
    return { $ref: record.$ref };
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(record)) {
    // Field names are the keys of `properties`, which is mapped on its own: a field called
    // `description` or `title` is kept.
    if (PROSE.has(key)) continue;
    out[key] =
      key === 'properties'
        ? Object.fromEntries(
            Object.entries(value as Json).map(([name, v]) => [name, schemaOf(v, components)]),
          )
        : schemaOf(value, components);
  }
  return out;
}

const schemas: Json = {};
const components = new Set<string>();
const paths: Json = {};
for (const operation of OPERATIONS) {
  const [method, template] = operation.split(' ') as [string, string];
  const item = (spec.paths as Json)[template] as Json | undefined;
  const raw = item?.[method.toLowerCase()] as Json | undefined;
  if (!item || !raw) throw new Error(`${operation} is not in @octokit/openapi ${packageJson.version}`);
  const entry = (paths[template] ?? {}) as Json;
  paths[template] = entry;
  if (item.parameters) entry.parameters = deref(item.parameters);
  const responses = raw.responses as Json;
  const status = ['200', '201'].find((code) => responses[code] !== undefined);
  const answer = status
    ? (((responses[status] as Json).content as Json)?.['application/json'] as Json)
    : undefined;
  entry[method.toLowerCase()] = {
    operationId: raw.operationId,
    parameters: deref(raw.parameters ?? []),
    ...(raw.requestBody ? { requestBody: deref(raw.requestBody) } : {}),
    ...(answer ? { response: { status: Number(status), schema: schemaOf(answer.schema, components) } } : {}),
  };
}

const subset = {
  openapi: spec.openapi,
  info: {
    title: 'GitHub REST API: the operations docwright uses',
    description: `Generated by scripts/github-openapi-subset.ts from @octokit/openapi ${packageJson.version} (api.github.com.json).`,
  },
  paths,
  components: { schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))) },
};
const out = path.resolve(import.meta.dirname, '../test/data/github-openapi-subset.json');
writeFileSync(out, `${JSON.stringify(subset, null, 2)}\n`);
console.log(`wrote ${out}: ${OPERATIONS.length} operations`);
