/**
 * Suites of tasks: a folder of task folders (docs/evaluation.mdx), and the built-in suite.
 *
 * A task folder holds `task.json`, `docs/` (the docs repository's base tree), optionally
 * `code/base/` and `code/head/` (a code change) and `rubric.md` (the judge's criteria). A
 * folder that holds task.json itself is a suite of that one task. Every problem of a task folder
 * makes that task invalid, with the file and the problem; the others still load.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { DocwrightError } from '../errors.ts';
import { parseRubric, type Rubric } from './rubric.ts';
import type { Expected } from './score.ts';
import { expectedOf, type InvalidTask, parseTaskJson, type Task, type TaskJson, type Tree } from './task.ts';

export interface Suite {
  /** What the JSON document calls it: `builtin`, or the folder. */
  name: string;
  tasks: (Task | InvalidTask)[];
  /** Whose figures the suite is scored with: docwright's (default) or DogBench's (`--dogbench`). */
  scoring?: 'docwright' | 'dogbench';
}

/** A problem with a file of a task, reported as `file: problem`. */
class TaskFileError extends Error {
  /** What the task expects, when its task.json says so (set once task.json is read). */
  expected: Expected | null = null;
  constructor(file: string, problem: string) {
    super(`${file}: ${problem}`);
  }
}

const isFile = (file: string) =>
  stat(file).then(
    (s) => s.isFile(),
    () => false,
  );
const isDirectory = (dir: string) =>
  stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );

async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Where a task's trees are: a task folder's own, or the built-in suite's product and overlays. */
interface TaskTrees {
  docs: Tree;
  /** Folders that must exist, each with the file name to report when it does not. */
  required: { dir: string; file: string; what: string }[];
  code: { base: Tree; head: Tree } | null;
}

async function loadTask(dir: string, trees: (json: TaskJson) => Promise<TaskTrees>): Promise<Task> {
  const text = await readOptional(path.join(dir, 'task.json'));
  if (text === undefined) throw new TaskFileError('task.json', 'missing');
  try {
    return await taskFrom(dir, text, trees);
  } catch (error) {
    if (error instanceof TaskFileError) error.expected = expectedOf(text);
    throw error;
  }
}

async function taskFrom(
  dir: string,
  text: string,
  trees: (json: TaskJson) => Promise<TaskTrees>,
): Promise<Task> {
  let json: TaskJson;
  try {
    json = parseTaskJson(text);
  } catch (error) {
    throw new TaskFileError('task.json', (error as Error).message);
  }
  const found = await trees(json);
  for (const { dir: required, file, what } of found.required) {
    if (!(await isDirectory(required))) throw new TaskFileError(file, `missing (${what})`);
  }
  let rubric: Rubric | null = null;
  const rubricText = await readOptional(path.join(dir, 'rubric.md'));
  if (rubricText !== undefined) {
    try {
      rubric = parseRubric(rubricText);
    } catch (error) {
      throw new TaskFileError('rubric.md', (error as Error).message);
    }
  }
  return {
    id: json.id,
    origin: dir,
    instruction: json.instruction,
    expected: json.expected,
    docsDir: json.docsDir ?? '.',
    change: json.change ?? null,
    docs: found.docs,
    code: found.code,
    checks: json.checks,
    rubric,
  };
}

/** A task folder of docs/evaluation.mdx. */
function folderTrees(dir: string) {
  return async (json: TaskJson): Promise<TaskTrees> => {
    const docs = path.join(dir, 'docs');
    const required = [{ dir: docs, file: 'docs/', what: "the docs repository's base tree" }];
    if (json.docsDir && json.docsDir !== '.') {
      required.push({
        dir: path.join(docs, json.docsDir),
        file: `docs/${json.docsDir}/`,
        what: 'the docsDir of task.json',
      });
    }
    const [base, head] = [path.join(dir, 'code', 'base'), path.join(dir, 'code', 'head')];
    const [hasBase, hasHead] = await Promise.all([isDirectory(base), isDirectory(head)]);
    if (hasBase !== hasHead || (!hasBase && (await isDirectory(path.join(dir, 'code'))))) {
      required.push(
        hasBase
          ? { dir: head, file: 'code/head/', what: 'a code change needs code/base/ and code/head/' }
          : { dir: base, file: 'code/base/', what: 'a code change needs code/base/ and code/head/' },
      );
    }
    return {
      docs: { kind: 'folders', dirs: [docs] },
      required,
      code:
        hasBase && hasHead
          ? { base: { kind: 'folders', dirs: [base] }, head: { kind: 'folders', dirs: [head] } }
          : null,
    };
  };
}

/** Loads tasks from folders, each on its own: one that fails is invalid and the others load. */
async function loadTasks(
  dirs: string[],
  trees: (dir: string) => (json: TaskJson) => Promise<TaskTrees>,
): Promise<(Task | InvalidTask)[]> {
  const tasks = await Promise.all(
    dirs.map(async (dir): Promise<Task | InvalidTask> => {
      try {
        return await loadTask(dir, trees(dir));
      } catch (error) {
        if (!(error instanceof TaskFileError)) throw error;
        return { id: path.basename(dir), origin: dir, error: error.message, expected: error.expected };
      }
    }),
  );
  return withUniqueIds(tasks, 'task.json');
}

/** Ids identify tasks in --tasks, the report and the JSON: a second task with one is invalid. */
export function withUniqueIds(tasks: (Task | InvalidTask)[], file: string): (Task | InvalidTask)[] {
  const seen = new Map<string, string>();
  return tasks.map((task) => {
    const first = seen.get(task.id);
    if (first === undefined) {
      seen.set(task.id, task.origin);
      return task;
    }
    return {
      id: task.id,
      origin: task.origin,
      error: `${file}: id "${task.id}" is already the id of ${first}`,
      expected: task.expected,
    };
  });
}

/** The suite in `dir`: its task folders (sorted by name), or `dir` itself when it is one. */
export async function loadSuiteFolder(dir: string): Promise<Suite> {
  const root = path.resolve(dir);
  if (!(await isDirectory(root))) throw new DocwrightError('invalid-request', `${dir} is not a folder`);
  let dirs: string[];
  if ((await readOptional(path.join(root, 'task.json'))) !== undefined) dirs = [root];
  else {
    const entries = await readdir(root, { withFileTypes: true });
    dirs = entries
      .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
      .map((e) => path.join(root, e.name))
      .sort();
  }
  if (dirs.length === 0)
    throw new DocwrightError('invalid-request', `${dir} holds no task folders (folders with a task.json)`);
  return { name: root, tasks: await loadTasks(dirs, folderTrees) };
}

/**
 * The built-in suite (src/eval/builtin/): one small product written for docwright, and tasks on
 * it. The product's docs site and code repository are written once (`product/docs/`,
 * `product/code/`); each task folder under `tasks/` holds its task.json and rubric.md, and as
 * patches to the product what its docs differ in (`docs.patch`, e.g. a page with a typo) and its
 * code change (`change.patch`).
 */
export const BUILTIN_SUITE_DIR = path.join(import.meta.dirname, 'builtin');

export async function loadBuiltinSuite(): Promise<Suite> {
  const product = path.join(BUILTIN_SUITE_DIR, 'product');
  const tasksDir = path.join(BUILTIN_SUITE_DIR, 'tasks');
  const entries = await readdir(tasksDir, { withFileTypes: true });
  const dirs = entries
    .filter((e) => e.isDirectory())
    .map((e) => path.join(tasksDir, e.name))
    .sort();
  const patched = (dir: string) => async (): Promise<TaskTrees> => {
    const patch = async (name: string) =>
      (await isFile(path.join(dir, name))) ? [path.join(dir, name)] : [];
    const code = [path.join(product, 'code')];
    const change = await patch('change.patch');
    return {
      docs: { kind: 'folders', dirs: [path.join(product, 'docs')], patches: await patch('docs.patch') },
      required: [],
      code:
        change.length > 0
          ? { base: { kind: 'folders', dirs: code }, head: { kind: 'folders', dirs: code, patches: change } }
          : null,
    };
  };
  return { name: 'builtin', tasks: await loadTasks(dirs, patched) };
}
