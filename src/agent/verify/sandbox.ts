/**
 * How a project's check command is isolated (SPEC §19): bubblewrap (`bwrap`) with the whole system
 * read-only, no network, a fresh `/tmp`, `/proc` and `/dev` of its own, and one writable
 * directory — the copy of the checkout the command runs in. Where bubblewrap is missing or does not
 * work (a container without user namespaces), commands are refused unless the operator sets
 * `DOCWRIGHT_CHECKS_UNSANDBOXED=1`; `docwright doctor` reports which of the three it is.
 */
import { spawn } from 'node:child_process';
import { homedir } from 'node:os';
import path from 'node:path';

/** How commands can run on this machine. */
export type SandboxMode =
  | { kind: 'bwrap' }
  | { kind: 'unsandboxed'; reason: string }
  | { kind: 'refused'; reason: string };

/** The one place the environment switch is read. */
export function unsandboxedAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.DOCWRIGHT_CHECKS_UNSANDBOXED === '1';
}

/**
 * Why bwrap cannot isolate commands here, or null when it can: it is asked to run `true` in the
 * same namespaces a check uses, so a kernel or container that forbids them counts as missing.
 * Remembered per PATH: the answer does not change while the process runs.
 */
const probed = new Map<string, Promise<string | null>>();
export function bwrapProblem(searchPath = process.env.PATH ?? '/usr/bin:/bin'): Promise<string | null> {
  let answer = probed.get(searchPath);
  if (!answer) {
    answer = probeBwrap(searchPath);
    probed.set(searchPath, answer);
  }
  return answer;
}

function probeBwrap(searchPath: string): Promise<string | null> {
  return new Promise((resolve) => {
    const child = spawn('bwrap', [...sandboxArguments({ writable: null }), 'true'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { PATH: searchPath },
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-500);
    });
    child.on('error', (error: NodeJS.ErrnoException) =>
      resolve(
        error.code === 'ENOENT'
          ? 'bwrap (bubblewrap) is not installed'
          : `bwrap cannot start: ${error.message}`,
      ),
    );
    child.on('close', (code) =>
      resolve(
        code === 0
          ? null
          : `bwrap is installed but cannot make a sandbox here: ${stderr.trim() || `exit ${code}`}`,
      ),
    );
  });
}

/** Which way commands run: in bwrap, unsandboxed because the operator allowed it, or not at all. */
export async function sandboxMode(env: NodeJS.ProcessEnv = process.env): Promise<SandboxMode> {
  const problem = await bwrapProblem(env.PATH ?? '/usr/bin:/bin');
  if (problem === null) return { kind: 'bwrap' };
  if (unsandboxedAllowed(env)) return { kind: 'unsandboxed', reason: problem };
  return {
    kind: 'refused',
    reason: `${problem}; check commands are refused (install bubblewrap, or set DOCWRIGHT_CHECKS_UNSANDBOXED=1 to run them without isolation)`,
  };
}

export interface SandboxOptions {
  /** The directory the command may write (bound read-write at `mountAt`), or null for none. */
  writable: string | null;
  /** Where the writable directory appears inside the sandbox (default: its own path). */
  mountAt?: string;
  /** Directories whose contents the command must not read (the data directory, the service's home). */
  hidden?: string[];
  /** Directories of PATH to keep visible (read-only, with their prefix) when they lie inside a hidden one. */
  path?: string[];
}

/** The service's home holds its credentials (git, cloud, ssh): hidden from commands by default. */
export function defaultHidden(): string[] {
  return [homedir()];
}

/**
 * bwrap's arguments, up to the command. Order matters: later mounts cover earlier ones, so the
 * read-only system comes first, then the private `/tmp` and hidden folders, then what is put back.
 */
export function sandboxArguments(options: SandboxOptions): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  const hidden = (options.hidden ?? []).filter((dir) => path.isAbsolute(dir) && dir !== '/');
  for (const dir of hidden) args.push('--tmpfs', dir);
  for (const dir of options.path ?? []) {
    if (path.isAbsolute(dir) && hidden.some((h) => dir === h || dir.startsWith(`${h}/`))) {
      // A `bin` folder's links point into its prefix (nvm's npm → ../lib/node_modules/…): the
      // prefix is put back, not the folder alone.
      const kept = path.basename(dir) === 'bin' ? path.dirname(dir) : dir;
      if (!hidden.includes(kept)) args.push('--ro-bind-try', kept, kept);
    }
  }
  args.push('--dir', '/tmp/home');
  if (options.writable !== null) args.push('--bind', options.writable, options.mountAt ?? options.writable);
  args.push(
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--clearenv',
    '--setenv',
    'HOME',
    '/tmp/home',
  );
  if (options.writable !== null) args.push('--chdir', options.mountAt ?? options.writable);
  return args;
}
