/**
 * Runs one check command to its end, bounded: a timeout that kills its whole process group, and
 * only the tail of its output kept (a command that prints gigabytes costs no memory).
 */
import { spawn } from 'node:child_process';

/** Output kept of a command: the end of it, where tools print their verdict. */
export const OUTPUT_TAIL_BYTES = 4096;

export interface CommandRunOptions {
  /** argv: the program and its arguments (bwrap …, or sh -c …). */
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface CommandRunResult {
  /** The exit code, or null when it was killed (timeout, abort) or died of a signal. */
  code: number | null;
  timedOut: boolean;
  aborted: boolean;
  /** The last OUTPUT_TAIL_BYTES of stdout and stderr as they arrived (the command merges them itself). */
  tail: string;
  /** Bytes written in all. */
  bytes: number;
}

/** Keeps the last `limit` bytes of a stream. */
function tailKeeper(limit: number) {
  let kept: Buffer = Buffer.alloc(0);
  let bytes = 0;
  return {
    add(chunk: Buffer) {
      bytes += chunk.length;
      kept = chunk.length >= limit ? chunk.subarray(chunk.length - limit) : Buffer.concat([kept, chunk]);
      if (kept.length > limit) kept = kept.subarray(kept.length - limit);
    },
    /** The tail as text; a character cut at the start is dropped rather than shown as garbage. */
    text: () => kept.toString('utf8').replace(/^\uFFFD+/, ''),
    bytes: () => bytes,
  };
}

/** Starts the command in a process group of its own and waits for it, however it ends. */
export function runBounded(options: CommandRunOptions): Promise<CommandRunResult> {
  return new Promise((resolve) => {
    const [program, ...args] = options.argv;
    const child = spawn(program!, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const output = tailKeeper(OUTPUT_TAIL_BYTES);
    child.stdout.on('data', output.add);
    child.stderr.on('data', output.add);
    let timedOut = false;
    let aborted = false;
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onAbort = () => {
      aborted = true;
      killGroup();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    const finish = (code: number | null, spawnError?: Error) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      // Whatever the command left behind in its group goes with it.
      killGroup();
      if (spawnError) output.add(Buffer.from(`cannot start ${program}: ${spawnError.message}\n`));
      resolve({ code, timedOut, aborted, tail: output.text(), bytes: output.bytes() });
    };
    // A background process the command left holding the output open would delay `close` to the
    // timeout: the group is killed as soon as the command itself exits.
    child.on('exit', killGroup);
    child.on('error', (error) => finish(null, error));
    child.on('close', (code) => finish(code));
  });
}
