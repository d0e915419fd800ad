#!/usr/bin/env node
// The docwright command. Runs the TypeScript sources directly: Node ≥ 22.18
// strips types by itself; 22.12–22.17 need --experimental-strip-types, so we
// start again with the flag there.
import { spawn } from 'node:child_process';

const [major] = process.versions.node.split('.').map(Number);
if (major < 22) {
  process.stderr.write(
    `docwright needs Node.js 22.12 or newer (24 LTS recommended); this is ${process.version}\n`,
  );
  process.exit(1);
}

if (process.features.typescript) {
  await import('../src/cli/main.ts');
} else {
  const child = spawn(
    process.execPath,
    ['--experimental-strip-types', '--disable-warning=ExperimentalWarning', ...process.argv.slice(1)],
    { stdio: 'inherit' },
  );
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
