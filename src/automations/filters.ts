/**
 * Whether a change starts an automation (docs/automations.mdx): not at all when the automation does not
 * watch it (another repository, a trigger that changes do not start), else a run, or a run
 * recorded `skipped` with its reason, checked in this order:
 * 1. `disabled`: the automation is disabled;
 * 2. `own-change`: docwright's own change (loop-safety.ts);
 * 3. `label`: the change carries one of `skipLabels` (in any case);
 * 4. `paths`: the change touches no file matching `paths`.
 */
import { compileGlob } from '../glob.ts';
import { type AutomationSettings, DOCS_REPOSITORY, type SkipReason } from './automation.ts';
import { isOwnChange } from './loop-safety.ts';

/** What a change is, as far as the filters look. */
export interface ChangeFacts {
  /** The context repository's name, or `docs` for the project's own. */
  repository: string;
  /** The files it touches (paths from the repository's root); null when unknown. */
  files: readonly string[] | null;
  /** Whether `files` lists every file it touches (false when a host cut the list; default true). */
  filesComplete?: boolean;
  labels: readonly string[];
  /** The branch it was merged from; null for a push. */
  headRef: string | null;
  /** Its commits, as many as are known (their messages carry docwright's trailer or not). */
  commits: readonly { message: string }[];
  /**
   * Whether `commits` is every commit of the change with its whole message (default true); false
   * for a merged pull request before its commits are read from the host, a poll's title-only
   * listing, or a push whose event listed some of its commits only.
   */
  commitsComplete?: boolean;
}

export type ChangeVerdict =
  /** Start a run (and its job) for the change. */
  | { verdict: 'run' }
  /** Record a run `skipped` with `reason`. */
  | { verdict: 'skip'; reason: Extract<SkipReason, 'disabled' | 'own-change' | 'label' | 'paths'> }
  /** The automation does not watch this change: record nothing. */
  | { verdict: 'unwatched' };

export interface JudgeOptions {
  /** The project's branch prefix (its docs pull requests' head branches start with it). */
  branchPrefix: string;
}

export function judgeChange(
  automation: Pick<AutomationSettings, 'enabled' | 'trigger'>,
  change: ChangeFacts,
  options: JudgeOptions,
): ChangeVerdict {
  const { trigger } = automation;
  if (!watches(trigger, change.repository)) return { verdict: 'unwatched' };
  if (!automation.enabled) return { verdict: 'skip', reason: 'disabled' };
  if (isOwnChange(change, options.branchPrefix)) return { verdict: 'skip', reason: 'own-change' };
  if (trigger.type === 'code-change' && carriesSkipLabel(trigger.skipLabels, change.labels)) {
    return { verdict: 'skip', reason: 'label' };
  }
  if (!touchesPaths(trigger.paths, change)) return { verdict: 'skip', reason: 'paths' };
  return { verdict: 'run' };
}

type ChangeTrigger = Extract<AutomationSettings['trigger'], { type: 'code-change' | 'docs-push' }>;

function watches(trigger: AutomationSettings['trigger'], repository: string): trigger is ChangeTrigger {
  if (trigger.type === 'docs-push') return repository === DOCS_REPOSITORY;
  if (trigger.type !== 'code-change') return false;
  return trigger.repositories.length === 0
    ? repository !== DOCS_REPOSITORY
    : trigger.repositories.includes(repository);
}

function carriesSkipLabel(skipLabels: readonly string[], labels: readonly string[]): boolean {
  const skip = new Set(skipLabels.map((l) => l.trim().toLowerCase()));
  return labels.some((l) => skip.has(l.trim().toLowerCase()));
}

/**
 * Whether the change touches a file matching one of `globs` (none: any change does). Globs match
 * dot files too (`src/**` covers `src/.env.example`). A change whose files are unknown, or cut
 * short without a match, is given the benefit of the doubt.
 */
function touchesPaths(globs: readonly string[], change: ChangeFacts): boolean {
  if (globs.length === 0 || change.files === null) return true;
  const matchers = globs.map((glob) => compileGlob(glob, { dot: true }));
  const touches = change.files.some((file) => {
    const path = file.replace(/^\.?\/+/, '');
    return matchers.some((match) => match(path));
  });
  return touches || change.filesComplete === false;
}
