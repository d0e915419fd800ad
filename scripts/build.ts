// `npm run build` (also run by `prepack` and CI): compiles src/ into dist/ as ES modules with
// type declarations, so that the published package runs on Node without a TypeScript compiler
// (Node strips no types under node_modules). tsc, not a bundler: one emitted file per source file
// keeps every module a path away (the worker forks its child entry by path), stack traces name
// the file they come from, and the compiler is the same one `npm run typecheck` already trusts.
import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');

// A file deleted from src/ must not live on in the package.
rmSync(dist, { recursive: true, force: true });
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
});
if (result.status !== 0) process.exit(result.status ?? 1);

// tsc emits only what it compiles: any other file under src/ (templates, stylesheets) is copied as
// it is. Hand-written `*.d.ts` files only augment types for the compiler; nothing loads them.
for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || entry.name.endsWith('.ts')) continue;
  const from = path.join(entry.parentPath, entry.name);
  cpSync(from, path.join(dist, path.relative(src, from)));
}
