/**
 * A project's check commands (SPEC §19, docs/verification.mdx): each is run on a copy of the
 * checkout, so that whatever it writes (build output, caches, a formatter's rewrites) is thrown
 * away with the copy, inside bubblewrap (sandbox.ts). A non-zero exit is one finding carrying the
 * last 4 KiB of its output.
 *
 * The base state is run only when the head run failed: a passing head has nothing to compare. The
 * base has no directory of its own (tree.ts's overlay), so it is materialised — the head's copy
 * with the run's touched files put back as they were.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { normalizeRel } from '../site/repo-files.ts';
import { type CommandRunResult, runBounded } from './command-run.ts';
import { defaultHidden, type SandboxMode, sandboxArguments, sandboxMode } from './sandbox.ts';
import type { Check, CheckInput, CheckOutcome, DocsTree } from './types.ts';

const run = promisify(execFile);

/** Default time a command may take (`DOCWRIGHT_CHECK_TIMEOUT_SECONDS`). */
export const DEFAULT_CHECK_TIMEOUT_SECONDS = 120;

export interface CommandCheckOptions {
  /** Where PATH, LANG, DOCWRIGHT_CHECK_TIMEOUT_SECONDS and DOCWRIGHT_CHECKS_UNSANDBOXED are read (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Overrides DOCWRIGHT_CHECK_TIMEOUT_SECONDS. */
  timeoutSeconds?: number;
  /** Directories the command must not read besides the service's home (e.g. the data directory). */
  hidden?: string[];
}

/** The timeout the environment asks for, or the default when it is unset or not a positive number. */
export function checkTimeoutSeconds(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.DOCWRIGHT_CHECK_TIMEOUT_SECONDS);
  return Number.isFinite(value) && value > 0 ? value : DEFAULT_CHECK_TIMEOUT_SECONDS;
}

/** A check that runs `commandLine` with `sh -c` in a disposable copy of the checkout. */
export function commandCheck(commandLine: string, options: CommandCheckOptions = {}): Check {
  const env = options.env ?? process.env;
  /** The checkout of the last head run that failed: the base is materialised from it. */
  let failedHeadDir: string | null = null;
  return {
    name: commandLine,
    async run(input) {
      const mode = await sandboxMode(env);
      if (mode.kind === 'refused') return { findings: [], skipped: mode.reason };
      const headDir = input.state === 'head' ? input.tree.dir : failedHeadDir;
      if (input.state === 'head') failedHeadDir = null;
      else if (headDir === null) return { findings: [] };
      if (headDir === null)
        return { findings: [], skipped: 'the checkout has no directory to run the command in' };
      const outcome = await runOnCopy(commandLine, input, headDir, mode, options);
      if (input.state === 'head' && outcome.findings.length > 0) failedHeadDir = headDir;
      return outcome;
    },
  };
}

async function runOnCopy(
  commandLine: string,
  input: CheckInput,
  headDir: string,
  mode: SandboxMode,
  options: CommandCheckOptions,
): Promise<CheckOutcome> {
  const env = options.env ?? process.env;
  const scratch = await mkdtemp(path.join(tmpdir(), 'docwright-check-'));
  try {
    const copy = path.join(scratch, 'tree');
    await run('cp', ['-a', '--reflink=auto', '--', headDir, copy]);
    if (input.state === 'base') await materialiseBase(copy, input.tree, input);
    const home = path.join(scratch, 'home');
    await mkdir(home);
    const timeoutSeconds = options.timeoutSeconds ?? checkTimeoutSeconds(env);
    const result = await runBounded({
      argv: commandArgv(commandLine, copy, headDir, mode, options),
      cwd: copy,
      env: { PATH: env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: env.LANG ?? 'C.UTF-8' },
      timeoutMs: timeoutSeconds * 1000,
      signal: input.signal,
    });
    if (result.aborted) throw input.signal.reason ?? new Error('the check was cancelled');
    const notes = mode.kind === 'unsandboxed' ? [`ran without isolation (${mode.reason})`] : undefined;
    const counts = result.code === null ? undefined : { exitCode: result.code };
    if (result.code === 0) return { findings: [], counts, notes };
    // Paths of the copy differ between runs; the message must not (the base's is compared to it).
    const tail = result.tail.replaceAll(copy, headDir);
    return {
      findings: [
        {
          path: normalizeRel(input.docsDir),
          line: null,
          message: failureMessage(commandLine, result, timeoutSeconds, tail),
          level: 'error',
          rule: commandLine,
        },
      ],
      counts,
      notes,
    };
  } finally {
    await rm(scratch, { recursive: true, force: true, maxRetries: 3 });
  }
}

function commandArgv(
  commandLine: string,
  copy: string,
  headDir: string,
  mode: SandboxMode,
  options: CommandCheckOptions,
): string[] {
  const env = options.env ?? process.env;
  // One stream, so that the tail shows errors where the command printed them.
  const shell = ['sh', '-c', `exec 2>&1\n${commandLine}`];
  if (mode.kind !== 'bwrap') return shell;
  const pathDirs = (env.PATH ?? '').split(':').filter(Boolean);
  return [
    'bwrap',
    ...sandboxArguments({
      writable: copy,
      // Where the real checkout is, so that paths in the output are the same on every run.
      mountAt: headDir,
      hidden: [...defaultHidden(), ...(options.hidden ?? [])],
      path: pathDirs,
    }),
    '--setenv',
    'PATH',
    env.PATH ?? '/usr/bin:/bin',
    '--setenv',
    'LANG',
    env.LANG ?? 'C.UTF-8',
    ...shell,
  ];
}

/** What went wrong and what to do, then the output: the same for the same failure on any run. */
function failureMessage(
  commandLine: string,
  result: CommandRunResult,
  timeoutSeconds: number,
  tail: string,
): string {
  const how = result.timedOut
    ? `did not finish within ${timeoutSeconds} s and was stopped`
    : result.code === null
      ? 'was killed'
      : `exited with code ${result.code}`;
  const output = tail.trim() === '' ? '(no output)' : tail.trimEnd();
  return `check command \`${commandLine}\` ${how}: fix what its output reports.\n${output}`;
}

/** Puts the run's touched files of the copy back as the base has them (absent where it has none). */
async function materialiseBase(copy: string, base: DocsTree, input: CheckInput): Promise<void> {
  const touched = new Set([...input.changes.changed, ...input.changes.deleted].map(normalizeRel));
  for (const file of touched) {
    if (file === '.' || file.startsWith('../') || path.isAbsolute(file)) continue;
    const target = path.join(copy, file);
    const text = await base.readText(file);
    if (text === null) {
      await rm(target, { force: true });
    } else {
      await mkdir(path.dirname(target), { recursive: true });
      await rm(target, { force: true });
      await writeFile(target, text);
    }
  }
}
