import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Environment for git commands that must never stop to ask for a password. */
export const nonInteractiveGitEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  GIT_TERMINAL_PROMPT: '0',
  GIT_ASKPASS: '',
  SSH_ASKPASS: '',
});

/** Whether `dir` is inside a git repository (bare or not). */
export async function isGitRepository(dir: string): Promise<boolean> {
  try {
    await run('git', ['-C', dir, 'rev-parse', '--git-dir'], { env: nonInteractiveGitEnv(), timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

/**
 * The branch HEAD points at: for a local directory, from its HEAD; for a
 * remote URL, by asking the server (`ls-remote --symref`), with `env` carrying the
 * credentials (src/git/credentials.ts) a private repository needs. Returns undefined
 * when it cannot be told.
 */
export async function findDefaultBranch(
  repository: string,
  env: Record<string, string> = {},
): Promise<string | undefined> {
  try {
    if (repository.startsWith('file://')) {
      // Not `.pathname`: that keeps percent-escapes (`my%20docs`).
      const dir = fileURLToPath(repository);
      const { stdout } = await run('git', ['-C', dir, 'symbolic-ref', '--short', 'HEAD'], {
        env: nonInteractiveGitEnv(),
        timeout: 10_000,
      });
      return stdout.trim() || undefined;
    }
    const { stdout } = await run('git', ['ls-remote', '--symref', '--', repository, 'HEAD'], {
      env: { ...nonInteractiveGitEnv(), ...env },
      timeout: 15_000,
    });
    const match = /^ref: refs\/heads\/(\S+)\s+HEAD$/m.exec(stdout);
    return match?.[1];
  } catch {
    return undefined;
  }
}

/**
 * The branches and tags of a repository (`ls-remote`, with `env` carrying the credentials a
 * private one needs), or undefined when it cannot be listed.
 */
export async function listRemoteRefs(
  repository: string,
  env: Record<string, string> = {},
): Promise<{ branches: string[]; tags: string[] } | undefined> {
  try {
    const { stdout } = await run('git', ['ls-remote', '--heads', '--tags', '--', repository], {
      env: { ...nonInteractiveGitEnv(), ...env },
      timeout: 15_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    const names = [...stdout.matchAll(/^[0-9a-f]+\trefs\/(heads|tags)\/(\S+?)(\^\{\})?$/gm)];
    const of = (kind: string) => [...new Set(names.filter((m) => m[1] === kind).map((m) => m[2]!))];
    return { branches: of('heads'), tags: of('tags') };
  } catch {
    return undefined;
  }
}

/**
 * Why `dir` cannot be a local project's repository, or undefined when it can.
 * Jobs clone it and push back to it, which needs the repository itself: a
 * directory inside a working tree passes `git rev-parse` but cannot be cloned.
 * A bare repository is fine.
 */
export async function localRepositoryProblem(dir: string): Promise<string | undefined> {
  if (!(await isGitRepository(dir))) return `${dir} is not a git repository`;
  const git = (...args: string[]) =>
    run('git', ['-C', dir, ...args], { env: nonInteractiveGitEnv(), timeout: 10_000 });
  if ((await git('rev-parse', '--is-bare-repository')).stdout.trim() === 'true') return undefined;
  const up = (await git('rev-parse', '--show-cdup')).stdout.trim();
  if (up)
    return `${dir} is inside the git repository ${path.resolve(dir, up)}; give the repository's top directory`;
  return undefined;
}
