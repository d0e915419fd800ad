/**
 * Where runs make their checkouts: `<tmp>/docwright-runs/<pid>/`, one folder per process, 0700.
 * A process killed mid-run cannot remove its checkouts; the next worker to start on the
 * machine (and every worker, now and then) removes the folders of processes that are gone.
 */
import { mkdirSync } from 'node:fs';
import { readdir, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isRunning } from './worker-identity.ts';

/** The folder holding every process's run folder on this machine. */
export const runsRoot = (): string => path.join(tmpdir(), 'docwright-runs');

/** This process's folder for run checkouts (created 0700 when missing). */
export function processRunDirectory(): string {
  const dir = path.join(runsRoot(), String(process.pid));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** Removes the run folders of processes that no longer run; returns the folders removed. */
export async function removeStaleRunDirectories(): Promise<string[]> {
  let entries: string[];
  try {
    entries = await readdir(runsRoot());
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of entries) {
    if (!/^\d+$/.test(name) || isRunning(Number(name))) continue;
    const dir = path.join(runsRoot(), name);
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    removed.push(dir);
  }
  return removed;
}

/**
 * Removes this process's run folder, and the folder of all of them, when they hold nothing
 * (a worker stopping): a run still going elsewhere in the process, or another process's
 * folder, keeps them.
 */
export async function removeOwnRunDirectory(): Promise<void> {
  for (const dir of [path.join(runsRoot(), String(process.pid)), runsRoot()]) {
    try {
      await rmdir(dir);
    } catch {
      return;
    }
  }
}
