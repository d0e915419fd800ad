#!/usr/bin/env node
// The docwright command. An installed package runs its compiled JavaScript (dist/); a checkout
// runs the TypeScript sources directly, so an edit needs no build. On Node releases that need a
// flag for what docwright uses, it starts again with the flag. Nothing here may need a newer Node
// than the version check below can run on (a named import that Node 20 lacks, such as
// `enableCompileCache`, fails before any line runs): what newer releases add is read off the
// module's namespace after the check.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import nodeModule from 'node:module';
import { fileURLToPath } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  process.stderr.write(
    `docwright needs Node.js 22.12 or newer (24 LTS recommended); this is ${process.version} at ${process.execPath}\n`,
  );
  process.exit(1);
}

const sources = new URL('../src/cli/main.ts', import.meta.url);
const built = new URL('../dist/cli/main.js', import.meta.url);
// Node refuses to strip types of files under node_modules: a package installed with its sources
// (from git, say) still runs the build.
const fromSources = existsSync(sources) && !/[\\/]node_modules[\\/]/.test(fileURLToPath(sources));

// What older Node 22 releases need to be asked for: type stripping (before 22.18) and node:sqlite
// (before 22.13), both still announced with an ExperimentalWarning there.
const flags = [];
if (fromSources && !process.features.typescript) flags.push('--experimental-strip-types');
if (major === 22 && minor < 13) flags.push('--experimental-sqlite');
if (major === 22) flags.push('--disable-warning=ExperimentalWarning');
const missing = flags.filter((flag) => !process.execArgv.includes(flag));

// Stripped types and bytecode kept in Node's compile cache (the agent processes share it): a
// command starts in about half the time.
nodeModule.enableCompileCache?.();

if (missing.length > 0) {
  const child = spawn(process.execPath, [...process.execArgv, ...missing, ...process.argv.slice(1)], {
    stdio: 'inherit',
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else if (fromSources) {
  await import(sources.href);
} else {
  if (!existsSync(built)) {
    process.stderr.write(
      `docwright: ${fileURLToPath(built)} is missing; build the package first (npm run build)\n`,
    );
    process.exit(1);
  }
  await import(built.href);
}
