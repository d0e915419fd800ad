/**
 * One verification of a run's tree (SPEC §19): every check on the run's tree, and — only when it
 * found something — the same check on the base tree, so that a finding the base already had is
 * told apart by comparison rather than guessed.
 */
import { checkoutTree, overlayTree } from './tree.ts';
import type { Check, CheckOutcome, Finding, RunChanges } from './types.ts';

/** A finding of the run's tree, and whether the base tree had it already. */
export interface VerifiedFinding extends Finding {
  preexisting: boolean;
}

/** What one check found in the run's tree. */
export interface VerifiedCheck {
  name: string;
  findings: VerifiedFinding[];
  skipped?: string;
  counts?: Record<string, number>;
  notes?: string[];
}

export interface VerifyTreeOptions {
  /** The checkout's real path. */
  root: string;
  docsDir: string;
  changes: RunChanges;
  /** The run's changed files before the run (null: created by it). */
  originals: ReadonlyMap<string, string | null>;
  checks: readonly Check[];
  signal: AbortSignal;
}

/** Runs every check, one after the other (commands must not race each other over the checkout). */
export async function verifyTree(options: VerifyTreeOptions): Promise<VerifiedCheck[]> {
  const head = checkoutTree(options.root);
  const base = overlayTree(head, options.originals);
  const results: VerifiedCheck[] = [];
  for (const check of options.checks) {
    options.signal.throwIfAborted();
    const input = { docsDir: options.docsDir, changes: options.changes, signal: options.signal };
    const found = await runCheck(check, { ...input, tree: head, state: 'head', other: base });
    let before: CheckOutcome | undefined;
    if (found.findings.length > 0)
      before = await runCheck(check, { ...input, tree: base, state: 'base', other: head });
    const known = new Set((before?.findings ?? []).map(findingKey));
    const basePath = basePathOf(options.changes);
    results.push({
      name: check.name,
      findings: found.findings.map((f) => ({
        ...f,
        preexisting: known.has(findingKey({ ...f, path: basePath(f.path) })),
      })),
      ...(found.skipped !== undefined && { skipped: found.skipped }),
      ...(found.counts && { counts: found.counts }),
      ...(found.notes && { notes: found.notes }),
    });
  }
  return results;
}

/** A check that throws is a finding of its own, not the end of the run: its input is the model's. */
async function runCheck(check: Check, input: Parameters<Check['run']>[0]): Promise<CheckOutcome> {
  try {
    return await check.run(input);
  } catch (error) {
    input.signal.throwIfAborted();
    return {
      findings: [],
      skipped: `the check could not run: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

const findingKey = (f: Pick<Finding, 'rule' | 'path' | 'message'>) =>
  JSON.stringify([f.rule, f.path, f.message]);

/** The base tree's path of a path of the run's tree: a moved file was at its old path. */
function basePathOf(changes: RunChanges): (path: string) => string {
  const from = new Map(changes.moved.map((m) => [m.to, m.from]));
  return (path) => from.get(path) ?? path;
}
