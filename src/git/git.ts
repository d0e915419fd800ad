import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';

export class GitError extends Error {
  readonly exitCode: number | null;
  readonly stderr: string;
  constructor(message: string, exitCode: number | null, stderr: string) {
    super(message);
    this.name = 'GitError';
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

export interface GitOptions {
  cwd?: string;
  signal?: AbortSignal;
  /** Written to stdin (commit messages go this way, never on the command line). */
  input?: string;
  /** Extra environment, e.g. GIT_CONFIG_* carrying credentials. */
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Applied to a GitError's message and stderr (see src/redact.ts). */
  redact?: (text: string) => string;
  /**
   * Takes git's output as it comes (UTF-8 text) instead of collecting it: the promise then
   * resolves with ''. Answering `false` stops git there (its process group is ended) and counts
   * as success, so that a reader can take the start of a large output and leave the rest.
   */
  onStdout?: (text: string) => boolean | undefined;
}

/** The reason a run was ended by its reader (`onStdout` answered false): not a failure. */
const ENOUGH = new Error('enough output');

/**
 * On Linux, git is started through util-linux's `setpriv --pdeathsig KILL`, so that it dies with
 * the server even when the server is killed outright (git runs in a process group of its own,
 * which no signal to the server reaches). Elsewhere it is started directly; a retried run copes
 * with a push that outlived its server either way (see checkout.ts, `Checkout.replaces`).
 */
let deathSignalWrapper: string[] | undefined;
function wrapper(): string[] {
  deathSignalWrapper ??=
    process.platform === 'linux' &&
    spawnSync('setpriv', ['--pdeathsig', 'KILL', '--', 'true'], { stdio: 'ignore' }).status === 0
      ? ['setpriv', '--pdeathsig', 'KILL', '--']
      : [];
  return deathSignalWrapper;
}

/** How long git gets to exit after SIGTERM before its process group is killed outright. */
const KILL_GRACE_MS = 2_000;

/** The line of git's stderr that says what went wrong (hints come after it). */
const reason = (stderr: string): string =>
  stderr
    .trim()
    .split('\n')
    .filter((line) => !line.startsWith('hint:'))
    .at(-1) ?? '';

/**
 * Runs git without a terminal, without repository hooks, and without any
 * user or system configuration that could change its behaviour.
 *
 * git runs in its own process group: on abort or timeout the whole group
 * (including transport helpers such as git-remote-https) is stopped, and the
 * promise settles only once they are gone, so nothing writes into a checkout
 * its caller is about to remove.
 */
export function git(args: string[], options: GitOptions = {}): Promise<string> {
  const redact = options.redact ?? ((text: string) => text);
  return new Promise((resolve, reject) => {
    const signal = options.signal;
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const child = spawnGit(args, options);
    let stopped: Error | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    const killGroup = (name: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, name);
      } catch {
        // Already gone.
      }
    };
    const stop = (error: Error) => {
      if (stopped) return;
      stopped = error;
      killGroup('SIGTERM');
      killTimer = setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS);
    };
    const onAbort = () => stop(abortError(signal!));
    signal?.addEventListener('abort', onAbort, { once: true });
    const timeoutMs = options.timeoutMs ?? 120_000;
    const timer = setTimeout(
      () => stop(new GitError(`git ${args[0]} timed out after ${timeoutMs} ms`, null, '')),
      timeoutMs,
    );
    const settle = () => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      signal?.removeEventListener('abort', onAbort);
    };

    let stdout = '';
    let stderr = '';
    const reader = options.onStdout;
    if (reader) child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      if (!reader) stdout += chunk;
      else if (!stopped && reader(chunk as string) === false) stop(ENOUGH);
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.stdin.on('error', () => {
      // git exited without reading its input; the exit status tells what happened.
    });
    child.on('error', (error) => {
      // Only a failure to start settles here; otherwise 'close' follows.
      if (child.pid !== undefined) return;
      settle();
      reject(error);
    });
    // 'close' comes once every process holding git's output (helpers too) has exited.
    child.on('close', (code) => {
      settle();
      if (stopped === ENOUGH) resolve('');
      else if (stopped) reject(stopped);
      else if (code === 0) resolve(stdout);
      else reject(new GitError(redact(`git ${args[0]} failed: ${reason(stderr)}`), code, redact(stderr)));
    });
    child.stdin.end(options.input ?? '');
  });
}

/**
 * Starts git the way {@link git} does (no terminal, hooks or outside configuration; its own
 * process group; dying with the server) and hands back the process, for a caller that talks
 * to a long-lived git (`cat-file --batch-command`) itself. Credentials go in `options.env`.
 */
export function spawnGit(
  args: string[],
  options: Pick<GitOptions, 'cwd' | 'env'> = {},
): ChildProcessWithoutNullStreams {
  const argv = [
    ...wrapper(),
    'git',
    '-c',
    'core.hooksPath=/dev/null',
    '-c',
    'protocol.file.allow=always',
    ...args,
  ];
  return spawn(argv[0]!, argv.slice(1), {
    cwd: options.cwd,
    detached: true,
    env: {
      ...process.env,
      GIT_TERMINAL_PROMPT: '0',
      GIT_ASKPASS: '',
      SSH_ASKPASS: '',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      LC_ALL: 'C',
      ...options.env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

export function abortError(signal: AbortSignal): Error {
  const error = new Error('The operation was aborted', { cause: signal.reason });
  error.name = 'AbortError';
  return Object.assign(error, { code: 'ABORT_ERR' });
}
