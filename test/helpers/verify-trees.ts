/**
 * Scenarios for verification's checks: a repository written to a temporary directory (the base),
 * then a run's edits applied on disk, giving the head tree (the checkout) and the base tree (the
 * checkout seen through the originals), as the run will give them to the checks.
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkoutTree, overlayTree } from '../../src/agent/verify/tree.ts';
import type { Check, DocsTree, Finding, RunChanges } from '../../src/agent/verify/types.ts';
import { temporaryDirectory } from './temp.ts';

export interface Scenario {
  root: string;
  head: DocsTree;
  base: DocsTree;
  changes: RunChanges;
}

/** What the run does: files it writes (created or modified), deletes, and moves. */
export interface RunEdits {
  write?: Record<string, string>;
  remove?: string[];
  move?: [from: string, to: string][];
}

async function put(root: string, file: string, text: string): Promise<void> {
  await mkdir(path.dirname(path.join(root, file)), { recursive: true });
  await writeFile(path.join(root, file), text);
}

/** Writes `files` as the base, then applies `edits` as the run would. */
export async function scenario(files: Record<string, string>, edits: RunEdits = {}): Promise<Scenario> {
  const root = temporaryDirectory('docwright-verify-');
  for (const [file, text] of Object.entries(files)) await put(root, file, text);
  const originals = new Map<string, string | null>();
  const original = async (file: string) => {
    if (!originals.has(file))
      originals.set(file, await readFile(path.join(root, file), 'utf8').catch(() => null));
  };
  const changes: RunChanges = { changed: [], deleted: [], moved: [] };
  for (const [from, to] of edits.move ?? []) {
    await original(from);
    await original(to);
    await mkdir(path.dirname(path.join(root, to)), { recursive: true });
    await rename(path.join(root, from), path.join(root, to));
    changes.moved.push({ from, to });
    changes.deleted.push(from);
    changes.changed.push(to);
  }
  for (const file of edits.remove ?? []) {
    await original(file);
    await rm(path.join(root, file));
    changes.deleted.push(file);
  }
  for (const [file, text] of Object.entries(edits.write ?? {})) {
    await original(file);
    await put(root, file, text);
    if (!changes.changed.includes(file)) changes.changed.push(file);
  }
  const head = checkoutTree(root);
  return { root, head, base: overlayTree(head, originals), changes };
}

export interface BothStates {
  head: Finding[];
  base: Finding[];
  /** Head findings the base does not have (the lead's rule: same rule, path and message). */
  introduced: Finding[];
  skipped?: string;
}

/** Runs a check on the head and on the base, the way the run will. */
export async function runBoth(check: Check, s: Scenario, docsDir = '.'): Promise<BothStates> {
  const signal = new AbortController().signal;
  const head = await check.run({
    tree: s.head,
    state: 'head',
    other: s.base,
    docsDir,
    changes: s.changes,
    signal,
  });
  const base = await check.run({
    tree: s.base,
    state: 'base',
    other: s.head,
    docsDir,
    changes: s.changes,
    signal,
  });
  const oldPath = (p: string) => s.changes.moved.find((m) => m.to === p)?.from ?? p;
  const key = (f: Finding) => `${f.rule}\n${f.path}\n${f.message}`;
  const inBase = new Set(base.findings.map(key));
  const introduced = head.findings.filter((f) => !inBase.has(key({ ...f, path: oldPath(f.path) })));
  return { head: head.findings, base: base.findings, introduced, skipped: head.skipped };
}

/** A page with a title and a body. */
export const page = (title: string, body = '') => `---\ntitle: ${title}\n---\n\n${body}\n`;
