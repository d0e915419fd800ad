/**
 * The deterministic checks of docs/evaluation.mdx, evaluated on what a job left: the files it changed, the
 * lines it added, and the docs repository at the job's head.
 */
import { readRepoFile } from '../agent/site/repo-files.ts';
import type { SiteInfo } from '../agent/site/types.ts';
import { validateChanges } from '../agent/validate.ts';
import { compileGlob } from '../glob.ts';
import { type Check, compilePattern } from './task.ts';

/** Largest file a check reads (the agent cannot write more than this into one file either). */
const MAX_CHECK_FILE_BYTES = 5 * 1024 * 1024;
/** Problems of a failed `valid` check kept for the report. */
const MAX_PROBLEMS_SHOWN = 5;

/** What a job left, as the checks see it. */
export interface JobResult {
  /** The docs repository's work tree at the job's head (its base when nothing was pushed). */
  root: string;
  /** The project's docsDir. */
  docsDir: string;
  /** Every file at the head, repository-relative. */
  files: string[];
  /** Files the job added, modified or deleted (both ends of a rename), repository-relative. */
  changed: string[];
  /** Files the job deleted (or renamed away). */
  deleted: string[];
  /** The lines the job's diff adds, without their `+`. */
  addedLines: string;
  /** The docs site as it was before the job (what `valid` compares against, as the pipeline does). */
  baseSite: SiteInfo;
}

export interface CheckOutcome {
  passed: boolean;
  /** Why, for people reading the report. */
  detail: string;
}

const matcher = (glob: string) => compileGlob(glob, { dot: true });

const inDocsDir = (docsDir: string) => (file: string) =>
  docsDir === '.' || file === docsDir || file.startsWith(`${docsDir.replace(/\/+$/, '')}/`);

/** The files at the head that `path` names, and the first of them whose text matches `pattern`. */
async function firstMatching(result: JobResult, path: string, pattern: string) {
  const files = result.files.filter(matcher(path));
  const regex = compilePattern(pattern);
  for (const file of files) {
    const read = await readRepoFile(result.root, file, MAX_CHECK_FILE_BYTES);
    if (read && regex.matcher(read.text).find()) return { files, match: file };
  }
  return { files, match: undefined };
}

export async function evaluateCheck(check: Check, result: JobResult): Promise<CheckOutcome> {
  switch (check.type) {
    case 'changed':
    case 'unchanged': {
      const changed = check.path ? result.changed.filter(matcher(check.path)) : result.changed;
      const passed = check.type === 'changed' ? changed.length > 0 : changed.length === 0;
      const what = check.path ? `matching ${check.path}` : 'at all';
      return {
        passed,
        detail:
          changed.length > 0 ? `changed: ${changed.slice(0, 10).join(', ')}` : `no file changed ${what}`,
      };
    }
    case 'contains':
    case 'not-contains': {
      const pattern = check.pattern!;
      let found: boolean;
      let detail: string;
      if (check.path) {
        const { files, match } = await firstMatching(result, check.path, pattern);
        found = match !== undefined;
        detail =
          files.length === 0
            ? `no file matches ${check.path}`
            : match
              ? `${match} matches /${pattern}/`
              : files.length === 1
                ? `${files[0]} does not match /${pattern}/`
                : `none of the ${files.length} files matching ${check.path} matches /${pattern}/`;
      } else {
        found = compilePattern(pattern).matcher(result.addedLines).find();
        detail = `the added lines ${found ? 'match' : 'do not match'} /${pattern}/`;
      }
      return { passed: check.type === 'contains' ? found : !found, detail };
    }
    case 'valid': {
      const selected = result.files.filter(check.path ? matcher(check.path) : inDocsDir(result.docsDir));
      const problems = await validateChanges(result.root, [...selected, ...result.deleted], result.baseSite);
      return {
        passed: problems.length === 0,
        detail:
          problems.length === 0
            ? `${selected.length} files validate`
            : problems.slice(0, MAX_PROBLEMS_SHOWN).join('\n') +
              (problems.length > MAX_PROBLEMS_SHOWN
                ? `\n… ${problems.length - MAX_PROBLEMS_SHOWN} more`
                : ''),
      };
    }
  }
}
