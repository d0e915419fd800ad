import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { App } from '../../src/app.ts';
import { killChild, trackChild } from './children.ts';

const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/worker-process.ts');

export interface WorkerProcess {
  /** The worker id it writes into `job_runs.lease_owner`. */
  id: string;
  pid: number;
  child: ChildProcess;
  /** Everything the process wrote, to explain a failure. */
  output(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** Sends `signal` and waits for the exit; a no-op once the process is gone. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** How to stop each worker process started and not exited yet, ready or not. */
const liveWorkers = new Set<WorkerProcess['stop']>();

/**
 * Starts test/fixtures/worker-process.ts (a real worker with a scripted
 * runner; see that file for TEST_RUNNER, TEST_RUNNER_MS and TEST_RUN_LOG)
 * and waits for its "worker ready" line.
 */
export async function startWorkerProcess(env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [FIXTURE], {
    env: { ...process.env, DOCWRIGHT_LOG_LEVEL: 'warn', ...env },
    // stdin stays open while this process lives: the worker exits when it closes (see the fixture).
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  trackChild(child, { group: false });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  // Known from the spawn, not once ready: a test failing while its workers start still stops them all.
  liveWorkers.add(stop);
  void exited.then(() => liveWorkers.delete(stop));
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const id = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      killChild(child, false);
      reject(new Error(`worker did not start:\n${output}`));
    }, 20_000);
    const onData = () => {
      const match = /worker ready (\S+)\n/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      resolve(match[1]!);
    };
    child.stdout!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code} before it was ready:\n${output}`));
    });
  });
  return { id, pid: child.pid!, child, output: () => output, exited, stop };
}

/** SIGKILLs every worker process this test file started that is still alive, ready or not (for `after` hooks). */
export async function killWorkerProcesses(): Promise<void> {
  await Promise.all([...liveWorkers].map((stop) => stop('SIGKILL')));
}

/**
 * Polls `condition` until it returns a truthy value (which it returns), or
 * fails after `timeoutMs` with `message` and the last value seen.
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  options: { timeoutMs?: number; intervalMs?: number; message?: string | (() => string) } = {},
): Promise<NonNullable<T>> {
  const { timeoutMs = 10_000, intervalMs = 50 } = options;
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await condition();
    if (last) return last as NonNullable<T>;
    if (Date.now() > deadline) {
      const message = typeof options.message === 'function' ? options.message() : options.message;
      throw new Error(
        `timed out after ${timeoutMs} ms: ${message ?? 'condition not met'} (last: ${JSON.stringify(last)})`,
      );
    }
    await sleep(intervalMs);
  }
}

/** Waits for a child process to exit, failing after `timeoutMs`. Returns the exit code and how long it took. */
export async function exitWithin(
  worker: WorkerProcess,
  timeoutMs: number,
): Promise<{ code: number | null; ms: number }> {
  const start = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`worker did not exit within ${timeoutMs} ms:\n${worker.output()}`)),
      timeoutMs,
    );
  });
  try {
    const code = await Promise.race([worker.exited, timeout]);
    return { code, ms: Date.now() - start };
  } finally {
    clearTimeout(timer);
  }
}

export interface RunLogEntry {
  runId: string;
  attempt: number;
  pid: number;
}

/** The lines TEST_RUN_LOG got: one per runner invocation. */
export function readRunLog(file: string): RunLogEntry[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [runId, attempt, pid] = line.split(' ');
      return { runId: runId!, attempt: Number(attempt), pid: Number(pid) };
    });
}

/** The (only) run of a job, as stored. */
export async function firstRun(app: App, jobId: string) {
  return app.store.db
    .selectFrom('job_runs')
    .selectAll()
    .where('job_id', '=', jobId)
    .where('seq', '=', 1)
    .executeTakeFirstOrThrow();
}

export async function jobRow(app: App, jobId: string) {
  return app.store.db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
}

/** Event types of a job's transcript, oldest first. */
export async function eventTypes(app: App, jobId: string): Promise<string[]> {
  const rows = await app.store.db
    .selectFrom('job_events')
    .select('type')
    .where('job_id', '=', jobId)
    .orderBy('id')
    .execute();
  return rows.map((r) => r.type);
}

/** Creates a job through the jobs service (as the API would) and returns its id. */
export async function createJob(app: App, projectId: string, prompt = 'update the docs'): Promise<string> {
  const result = await app.jobs.create(projectId, { prompt });
  return result.job.id;
}

/**
 * The run checkouts under `tmp` (a TMPDIR given to a server), as paths relative to it:
 * `docwright-runs/<pid>/docwright-run-…` (src/worker/run-directories.ts).
 */
export function runCheckouts(tmp: string): string[] {
  const root = path.join(tmp, 'docwright-runs');
  if (!existsSync(root)) return [];
  return readdirSync(root).flatMap((pid) =>
    readdirSync(path.join(root, pid))
      .filter((name) => name.startsWith('docwright-run-'))
      .map((name) => path.join('docwright-runs', pid, name)),
  );
}
