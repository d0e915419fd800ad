/**
 * One code change, made in a real repository, that every host's test reads back: a feature
 * branch of two commits that modifies a file, adds one, renames one, deletes one and adds a
 * binary file, the second commit carrying docwright's trailer. `expectFiles` checks what a host
 * returned against git's own account of the same diff.
 */
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import type { Change } from '../../src/git/hosts/change.ts';
import { HostError } from '../../src/git/hosts/host.ts';
import { createGitRepository, type GitRepository } from '../doubles/git-repository.ts';

export const FEATURE = 'feature/export';

const OLD = Array.from({ length: 20 }, (_, i) => `export const old${i} = ${i};`).join('\n');

export interface ChangeScenario {
  repo: GitRepository;
  /** `main` before the change. */
  base: string;
  /** The feature's first commit (the code change) and second (docs, with the trailer). */
  first: string;
  second: string;
}

export function changeScenario(options: { dir?: string } = {}): ChangeScenario {
  const repo = createGitRepository(
    {
      'README.md': '# api\n',
      'src/api.ts': 'export function existing() {\n  return 1;\n}\n',
      'src/old.ts': `${OLD}\n`,
      'src/gone.ts': 'export const gone = 1;\n',
    },
    options,
  );
  const base = repo.head('main');
  const first = repo.commit(
    FEATURE,
    {
      'src/api.ts':
        'export function existing() {\n  return 1;\n}\n\nexport function exportDocs(format: string) {\n  return format;\n}\n',
      'src/new.ts': 'export const created = 1;\n',
      'src/old.ts': null,
      'src/renamed.ts': `${OLD}\n`,
      'src/gone.ts': null,
      'assets/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0, 1, 2, 3]),
    },
    { from: 'main', message: 'Add the export command\n\nExports the docs in a format.' },
  );
  const second = repo.commit(
    FEATURE,
    { 'docs/export.md': '# Export\n\nRun `api export`.\n' },
    { message: 'Document export\n\nGenerated-By: docwright' },
  );
  return { repo, base, first, second };
}

const STATUS: Record<string, string> = { A: 'added', M: 'modified', D: 'removed', R: 'renamed', C: 'added' };

/**
 * The files of `change` are git's diff from `from` to `to`: same paths, statuses, counts and
 * binary flags, in any order, and (unless `diffs` is false) each text file's hunks.
 */
export function expectFiles(
  change: Change,
  repo: GitRepository,
  from: string | null,
  to: string,
  options: { diffs?: boolean; counts?: boolean } = {},
) {
  const expected = repo
    .diff(from, to)
    .map((entry) => ({
      path: entry.path,
      previousPath: entry.previousPath,
      status: STATUS[entry.status] ?? 'modified',
      binary: entry.binary,
      ...(options.counts === false ? {} : { additions: entry.additions, deletions: entry.deletions }),
      ...(options.diffs === false ? {} : { diff: entry.patch === '' ? null : entry.patch }),
    }))
    .sort((a, b) => a.path.localeCompare(b.path));
  const actual = change.files
    .map((file) => ({
      path: file.path,
      previousPath: file.previousPath,
      status: file.status,
      binary: file.binary,
      ...(options.counts === false ? {} : { additions: file.additions, deletions: file.deletions }),
      ...(options.diffs === false ? {} : { diff: file.diff }),
    }))
    .sort((a, b) => a.path.localeCompare(b.path));
  assert.deepEqual(actual, expected);
  assert.ok(change.files.every((file) => !file.truncated));
}

/** The `HostError` a call fails with; none of `secrets` may be in it. */
export async function hostError(promise: Promise<unknown>, secrets: string[] = []): Promise<HostError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof HostError, `expected a HostError, got ${inspect(error)}`);
    const text = `${error.message}\n${inspect(error, { depth: 10 })}`;
    for (const secret of secrets) assert.ok(!text.includes(secret), `a secret leaked into: ${text}`);
    return error;
  }
  assert.fail('expected the call to fail');
}
