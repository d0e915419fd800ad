import type { ChildProcess } from 'node:child_process';

/**
 * The long-running processes a test file starts (servers, workers) that have not exited yet.
 * Each test stops what it started, pass or fail; this is the net under that: a process still
 * running when the test file's process exits (a test that failed before its cleanup was
 * registered, a start given up on) is killed then, with its whole group when it leads one, so
 * that nothing outlives the file holding a database connection or a port.
 */
const running = new Map<ChildProcess, { group: boolean }>();

/** Remembers `child` until it exits; `group`: it leads a process group of its own (spawned detached). */
export function trackChild(child: ChildProcess, options: { group: boolean }): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  running.set(child, options);
  child.once('exit', () => running.delete(child));
}

/** SIGKILLs `child` (and its group) now, whatever it is doing. */
export function killChild(child: ChildProcess, group: boolean): void {
  try {
    if (group && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    else child.kill('SIGKILL');
  } catch {
    // Gone meanwhile.
  }
}

process.once('exit', () => {
  for (const [child, { group }] of running) killChild(child, group);
});
