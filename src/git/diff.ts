import { open, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Redact } from '../redact.ts';
import { type Checkout, fetchIntoCheckout } from './checkout.ts';
import { type GitOptions, git } from './git.ts';

/** Largest diff kept for a run (docs/dashboard.mdx): what is longer is cut, with a marker saying so. */
export const DIFF_MAX_BYTES = 1024 * 1024;

/** The unified diff of a run's commit against the job's base. */
export interface RunDiff {
  /** The commit the diff is against: the job's base. */
  base: string;
  /** The commit the diff leads to: the head branch as the run left it. */
  head: string;
  /** At most DIFF_MAX_BYTES (UTF-8); ends with `truncationMarker` when cut. */
  text: string;
  truncated: boolean;
  files: number;
  additions: number;
  deletions: number;
}

/** The last line of a cut diff. Starts with `#`, which no unified diff line does. */
export const truncationMarker = (totalBytes: number): string =>
  `# docwright: diff truncated at ${DIFF_MAX_BYTES} bytes (${totalBytes} bytes in all)\n`;

export interface DiffOptions {
  /** The job's base commit; fetched (one commit, no history) when the shallow checkout lacks it. */
  base: string;
  /** Remote the checkout was cloned from, for fetching the base. */
  remote?: string;
  /** Credentials for that fetch (see gitAccess). */
  env?: Record<string, string>;
  redact?: Redact;
  signal?: AbortSignal;
}

/**
 * Diffs HEAD of the checkout against the job's base. A follow-up run's checkout holds only the
 * head branch's tip, so the base commit is fetched by id first. git writes the diff to a file in
 * the checkout's git directory and only its first megabyte is read: a run that deleted a large
 * file cannot make this hold the whole diff in memory.
 */
export async function diffAgainstBase(checkout: Checkout, options: DiffOptions): Promise<RunDiff> {
  const opts: GitOptions = { cwd: checkout.dir, signal: options.signal, redact: options.redact };
  // The checkout's own starting commit is in it by construction; an earlier run's may not be.
  const present =
    options.base === checkout.base ||
    (await git(['cat-file', '-e', `${options.base}^{commit}`], opts).then(
      () => true,
      () => false,
    ));
  if (!present) {
    await fetchIntoCheckout(
      checkout,
      ['--quiet', '--no-tags', '--depth', '1', '--', options.remote ?? 'origin', options.base],
      { ...opts, env: options.env },
    );
  }
  const head = checkout.head.commit;
  const range = [options.base, head];
  const common = ['--no-color', '--no-ext-diff', '--find-renames'];
  const output = path.join(checkout.gitDir, 'docwright-diff');
  try {
    const [, stat] = await Promise.all([
      git(['diff', ...common, `--output=${output}`, ...range, '--'], opts),
      git(['diff', ...common, '--shortstat', ...range, '--'], opts),
    ]);
    return { base: options.base, head, ...(await readCapped(output)), ...parseShortstat(stat) };
  } finally {
    await rm(output, { force: true });
  }
}

async function readCapped(file: string): Promise<{ text: string; truncated: boolean }> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, DIFF_MAX_BYTES);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, 0);
    if (size <= DIFF_MAX_BYTES) return { text: buffer.toString('utf8'), truncated: false };
    const marker = truncationMarker(size);
    // Cut at a line end, so that no line (and no UTF-8 character) is split.
    const room = DIFF_MAX_BYTES - Buffer.byteLength(marker);
    const end = buffer.lastIndexOf(0x0a, room - 1) + 1;
    return { text: buffer.subarray(0, end).toString('utf8') + marker, truncated: true };
  } finally {
    await handle.close();
  }
}

/** ` 3 files changed, 10 insertions(+), 2 deletions(-)`; parts are omitted when zero. */
function parseShortstat(stat: string): { files: number; additions: number; deletions: number } {
  const count = (pattern: RegExp) => Number(pattern.exec(stat)?.[1] ?? 0);
  return {
    files: count(/(\d+) files? changed/),
    additions: count(/(\d+) insertions?\(\+\)/),
    deletions: count(/(\d+) deletions?\(-\)/),
  };
}
