/**
 * A run's two trees for verification tests: a site written to a temporary directory, then the
 * run's edits applied to it; the head is the checkout, the base the overlay of the originals.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkoutTree, overlayTree } from '../../src/agent/verify/tree.ts';
import type { Check, CheckInput, DocsTree, Finding, RunChanges } from '../../src/agent/verify/types.ts';
import { temporaryDirectory } from './temp.ts';

export async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), content);
  }
}

export interface DocsRun {
  head: DocsTree;
  base: DocsTree;
  changes: RunChanges;
}

/**
 * Writes `site`, then applies `edits` (text, or null to delete) and `moves` as a run would;
 * `changed` lists the written files and move targets.
 */
export async function docsRun(
  site: Record<string, string>,
  edits: Record<string, string | null>,
  moves: { from: string; to: string }[] = [],
): Promise<DocsRun> {
  const root = temporaryDirectory('docwright-verify-');
  await writeFiles(root, site);
  const originals = new Map<string, string | null>();
  const remember = async (file: string) => {
    if (!originals.has(file))
      originals.set(file, await readFile(path.join(root, file), 'utf8').catch(() => null));
  };
  const changes: RunChanges = { changed: [], deleted: [], moved: moves };
  for (const { from, to } of moves) {
    await remember(from);
    await remember(to);
    await writeFiles(root, { [to]: await readFile(path.join(root, from), 'utf8') });
    await rm(path.join(root, from));
    changes.changed.push(to);
    changes.deleted.push(from);
  }
  for (const [file, text] of Object.entries(edits)) {
    await remember(file);
    if (text === null) {
      await rm(path.join(root, file));
      changes.deleted.push(file);
    } else {
      await writeFiles(root, { [file]: text });
      changes.changed.push(file);
    }
  }
  const head = checkoutTree(root);
  return { head, base: overlayTree(head, originals), changes };
}

/** Runs `check` on one state; findings as "rule path:line message". */
export async function findingsOf(
  check: Check,
  run: DocsRun,
  state: CheckInput['state'],
  docsDir = '.',
): Promise<{ findings: Finding[]; lines: string[]; skipped?: string | undefined }> {
  const outcome = await check.run({
    tree: state === 'head' ? run.head : run.base,
    other: state === 'head' ? run.base : run.head,
    state,
    docsDir,
    changes: run.changes,
    signal: AbortSignal.timeout(60_000),
  });
  return {
    findings: outcome.findings,
    lines: outcome.findings.map((f) => `${f.rule} ${f.path}:${f.line ?? '-'} ${f.message}`),
    skipped: outcome.skipped,
  };
}
