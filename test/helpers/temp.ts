import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const created = new Set<string>();

/**
 * A new directory under the temporary directory, removed when the test process exits (each
 * test file runs in a process of its own), whether or not the test that made it got to its
 * own clean-up. `npm test` fails when a run leaves anything behind (scripts/run-tests.ts).
 */
export function temporaryDirectory(prefix: string): string {
  if (created.size === 0) process.once('exit', removeTemporaryDirectories);
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  created.add(dir);
  return dir;
}

/** Removes every directory `temporaryDirectory` made that is still there. */
function removeTemporaryDirectories(): void {
  for (const dir of created) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  created.clear();
}
