// The bin on a Node too old for docwright (issue 35): the installed package once died with
// `SyntaxError: … does not provide an export named 'enableCompileCache'` on Node 20, because a
// named import is linked before any line of the file runs, the version check included. The
// machine's own /usr/bin/node is such a Node where these tests run; elsewhere the test says why it
// cannot run.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin', 'docwright.js');
/** A Node older than 22.12, when the machine has one. */
const OLD_NODE = process.env.DOCWRIGHT_TEST_OLD_NODE || '/usr/bin/node';

function oldNodeVersion(): string | undefined {
  if (!existsSync(OLD_NODE)) return undefined;
  const version = execFileSync(OLD_NODE, ['--version'], { encoding: 'utf8' }).trim();
  const [major = 0, minor = 0] = version.slice(1).split('.').map(Number);
  return major < 22 || (major === 22 && minor < 12) ? version : undefined;
}

const version = oldNodeVersion();

test('an old Node gets the version message and exit code 1, not a SyntaxError', {
  skip: version ? false : `no Node older than 22.12 at ${OLD_NODE} (set DOCWRIGHT_TEST_OLD_NODE)`,
}, async () => {
  for (const args of [['--version'], ['serve', '--port', '0']]) {
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(OLD_NODE, [BIN, ...args], { timeout: 30_000 }, (_error, stdout, stderr) =>
        resolve({ code: child.exitCode, stdout, stderr }),
      );
    });
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.stdout, '');
    assert.equal(
      result.stderr,
      `docwright needs Node.js 22.12 or newer (24 LTS recommended); this is ${version} at ${OLD_NODE}\n`,
    );
  }
});
