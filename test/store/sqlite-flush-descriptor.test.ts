/**
 * The checkpoint thread flushes the database file through a descriptor of its own, one per file
 * and process, never closed (closing one would release SQLite's locks on the file).
 */
import assert from 'node:assert/strict';
import { fstatSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { flushDescriptor } from '../../src/store/sqlite-flush-descriptor.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'docwright-flush-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('one descriptor per file, reused while the file is the same, another once it is replaced', () => {
  const file = path.join(dir, 'a.db');
  writeFileSync(file, 'first');
  const first = flushDescriptor(file);
  assert.ok(first !== undefined);
  assert.equal(fstatSync(first).ino, statSync(file).ino);
  assert.equal(flushDescriptor(file), first, 'reused, not opened again');

  const replacement = path.join(dir, 'b.db');
  writeFileSync(replacement, 'second');
  renameSync(replacement, file);
  const second = flushDescriptor(file);
  assert.ok(second !== undefined && second !== first);
  assert.equal(fstatSync(second).ino, statSync(file).ino);
  // The first is still open (never closed), on the file it was opened on.
  assert.notEqual(fstatSync(first).ino, fstatSync(second).ino);
});

test('a file that cannot be opened has none (the thread then does not flush first)', () => {
  assert.equal(flushDescriptor(path.join(dir, 'missing', 'x.db')), undefined);
});
