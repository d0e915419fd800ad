/**
 * DogBench tasks for `docwright eval --dogbench DIR` (docs/evaluation.mdx), so that a team that has
 * obtained DogBench's data (Promptless; its licence forbids shipping it) can score its model on
 * it. The format, as DogBench publishes it (its item schema `item-v1.schema.json` and its
 * `data/sample-5` folder):
 *
 * - `DIR/items.jsonl`, an item a line: `{"instance_id", "source_url", "context", "docs":
 *   {"repo_url", "base_sha", "head_sha", "paths"}, "code": null | {"source_url", "repo_url",
 *   "base_sha", "head_sha", "paths"}}`. `docs.head_sha` and `docs.paths` are the reference
 *   documentation change, never shown to the agent; `code.paths` are the files of the change.
 * - `DIR/rubrics.jsonl`, a row a task: `{"instance_id", "expected_decision": "patch" | "abstain",
 *   "rubric": Markdown | null}`. The dataset's `outcomes.jsonl` (`expected_outcome`,
 *   `rubric_markdown`) is read instead when there is no rubrics.jsonl; either file may use either
 *   field names.
 * - Local clones: `https://github.com/OWNER/NAME` (or any URL ending in OWNER/NAME) is looked
 *   for at `DIR/repos/OWNER/NAME`, `DIR/OWNER/NAME`, then `DIR/NAME`; a `repo_url` that is a
 *   path is used as it is (relative to DIR). Nothing is fetched: a missing clone or commit makes
 *   the task invalid, with what to fetch.
 *
 * An item becomes a task: `abstain` → `no-changes`; the docs repository at `docs.base_sha`; a
 * code change from `code.base_sha` to that base with `code.paths` as at `code.head_sha` (as
 * DogBench prepares it); DogBench's registered prompt as the instruction (dogbench-prompt.ts),
 * with the change's title and description from its head commit; every path of the docs
 * repository writable but the code the change touched there; the rubric read as DogBench reads
 * it and scored by DogBench's judge and formula (dogbench-judge.ts, dogbench-score.ts).
 *
 * The folder is untrusted input: its clones are read through dataset-repository.ts (no
 * configuration of theirs applies, nothing is fetched), and symbolic links and files over 64 MiB
 * are refused.
 */
import { lstat, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { DocwrightError } from '../errors.ts';
import { fieldErrors, fieldSummary } from '../validation.ts';
import { DatasetRepository, MAX_DATASET_FILE_BYTES } from './dataset-repository.ts';
import { dogbenchCodePrompt, dogbenchRequestPrompt } from './dogbench-prompt.ts';
import { type DogBenchCriterion, dogbenchCriteria } from './dogbench-rubric.ts';
import type { Expected } from './score.ts';
import { type Suite, withUniqueIds } from './suite.ts';
import { type InvalidTask, TASK_ID, type Task } from './task.ts';

/** DogBench's doc sources include example code (`docs_src/…py`): every path may be written. */
const DOGBENCH_WRITABLE = ['**/*'];

const sha = z.string().regex(/^[0-9a-fA-F]{40}$/, 'must be a full 40-character commit id');
const paths = z.array(
  z
    .string()
    .min(1)
    .refine(
      (p) => !p.startsWith('/') && !p.split('/').some((s) => s === '..' || s === '.git') && !p.includes('\0'),
      {
        message: 'must be a relative path inside the repository',
      },
    ),
);

const item = z.object({
  instance_id: z.string().regex(TASK_ID, 'must be letters, digits, ".", "_" or "-"'),
  source_url: z.string().min(1),
  context: z.string().trim().min(1),
  docs: z.object({ repo_url: z.string().min(1), base_sha: sha, head_sha: sha.nullable(), paths }),
  code: z
    .object({
      source_url: z.string().min(1),
      repo_url: z.string().min(1),
      base_sha: sha,
      head_sha: sha,
      paths: paths.min(1),
    })
    .nullable(),
});

const rubricRow = z
  .object({
    instance_id: z.string().min(1),
    expected_decision: z.enum(['patch', 'abstain']).optional(),
    expected_outcome: z.enum(['patch', 'abstain']).optional(),
    rubric: z.string().nullable().optional(),
    rubric_markdown: z.string().nullable().optional(),
  })
  .refine((r) => (r.expected_decision ?? r.expected_outcome) !== undefined, {
    message: 'needs expected_decision (patch or abstain)',
  });

/** Whether a path exists; a symbolic link is refused, whatever it points at. */
async function exists(file: string): Promise<boolean> {
  const stats = await lstat(file).catch(() => null);
  if (stats?.isSymbolicLink())
    throw new DocwrightError('invalid-request', `${file} is a symbolic link, which a dataset may not use`);
  return stats !== null;
}

/** A dataset file's text, refusing links and files over 64 MiB. */
async function readDatasetFile(file: string): Promise<string> {
  const stats = await lstat(file);
  if (stats.isSymbolicLink() || !stats.isFile())
    throw new DocwrightError(
      'invalid-request',
      `${file} is not a regular file (a dataset may not use links)`,
    );
  if (stats.size > MAX_DATASET_FILE_BYTES)
    throw new DocwrightError('invalid-request', `${file} is over the 64 MiB a dataset file may be`);
  return readFile(file, 'utf8');
}

/** Lines of a JSON Lines file, parsed, with their line numbers; a bad line is an error value. */
interface JsonLine {
  line: number;
  value?: unknown;
  error?: string;
}

function jsonLines(text: string): JsonLine[] {
  return text.split('\n').flatMap((raw, index): JsonLine[] => {
    if (raw.trim() === '') return [];
    try {
      return [{ line: index + 1, value: JSON.parse(raw) as unknown }];
    } catch (error) {
      return [{ line: index + 1, error: `invalid JSON: ${(error as Error).message}` }];
    }
  });
}

const problems = (error: z.ZodError) => fieldSummary(fieldErrors(error));

/** Where the local clone of `repoUrl` is, or why there is none. */
async function findClone(dir: string, repoUrl: string): Promise<{ path: string } | { error: string }> {
  const isPath = repoUrl.startsWith('/') || repoUrl.startsWith('.') || repoUrl.startsWith('file://');
  const candidates: string[] = [];
  if (isPath) candidates.push(path.resolve(dir, repoUrl.replace(/^file:\/\//, '')));
  else {
    const parts = repoUrl
      .replace(/\.git$/, '')
      .replace(/\/+$/, '')
      .split('/');
    const [owner, name] = parts.slice(-2);
    if (!owner || !name) return { error: `cannot tell the repository of ${repoUrl}` };
    candidates.push(path.join(dir, 'repos', owner, name), path.join(dir, owner, name), path.join(dir, name));
  }
  for (const candidate of candidates) {
    const found = await exists(path.join(candidate, '.git')).catch(() => true);
    if (found || (await exists(path.join(candidate, 'HEAD')).catch(() => true))) return { path: candidate };
  }
  const looked = candidates.map((c) => path.relative(dir, c) || '.').join(', ');
  return { error: `no local clone of ${repoUrl} (looked in ${looked})` };
}

type Outcome = { expected: 'patch' | 'abstain'; rubric: string | null } | { error: string };

/** The expected decision and rubric of each item, by instance id. */
async function readRubrics(file: string, name: string): Promise<Map<string, Outcome>> {
  const rubrics = new Map<string, Outcome>();
  for (const row of jsonLines(await readDatasetFile(file))) {
    const parsed = row.error ? undefined : rubricRow.safeParse(row.value);
    const id = parsed?.success
      ? parsed.data.instance_id
      : (row.value as { instance_id?: unknown })?.instance_id;
    if (typeof id !== 'string') continue;
    rubrics.set(
      id,
      parsed?.success
        ? {
            expected: (parsed.data.expected_decision ?? parsed.data.expected_outcome)!,
            rubric: parsed.data.rubric ?? parsed.data.rubric_markdown ?? null,
          }
        : { error: `${name}:${row.line}: ${row.error ?? problems(parsed!.error!)}` },
    );
  }
  return rubrics;
}

/** A problem that makes one item invalid (its message names the file and line). */
class ItemError extends Error {}

/** Where the loader's clean repositories are made (dataset-repository.ts); removed when it ends. */
interface LoadContext {
  root: string;
  scratch: string;
}

/** The local clone holding `commits`, read through a clean repository, or an ItemError. */
async function cloneWith(
  context: LoadContext,
  where: string,
  part: 'docs' | 'code',
  repoUrl: string,
  commits: [string, string][],
): Promise<{ path: string; reader: DatasetRepository }> {
  const clone = await findClone(context.root, repoUrl);
  if ('error' in clone) throw new ItemError(`${where}: ${part}: ${clone.error}`);
  let reader: DatasetRepository;
  try {
    reader = await DatasetRepository.open(clone.path, context.scratch);
  } catch (error) {
    throw new ItemError(`${where}: ${part}: ${(error as Error).message}`);
  }
  for (const [field, commit] of commits) {
    if (!(await reader.hasCommit(commit)))
      throw new ItemError(`${where}: ${field} ${commit} is not in ${clone.path} (fetch it there)`);
  }
  return { path: clone.path, reader };
}

/** DogBench's decision as docwright's kind of task: an abstention expects no change. */
const expectedKind = (decision: 'patch' | 'abstain'): Expected =>
  decision === 'abstain' ? 'no-changes' : 'patch';

async function itemTask(
  context: LoadContext,
  row: JsonLine,
  rubrics: Map<string, Outcome>,
  rubricsName: string,
): Promise<Task> {
  const where = `items.jsonl:${row.line}`;
  if (row.error) throw new ItemError(`${where}: ${row.error}`);
  const parsed = item.safeParse(row.value);
  if (!parsed.success) throw new ItemError(`${where}: ${problems(parsed.error)}`);
  const { instance_id: id, docs, code, context: itemContext } = parsed.data;
  const outcome = rubrics.get(id);
  if (!outcome) throw new ItemError(`${rubricsName}: no row for ${id}`);
  if ('error' in outcome) throw new ItemError(outcome.error);
  let criteria: DogBenchCriterion[] | null = null;
  if (outcome.expected === 'patch' && outcome.rubric) {
    try {
      criteria = dogbenchCriteria(outcome.rubric);
    } catch (error) {
      throw new ItemError(`${rubricsName}: the rubric of ${id} ${(error as Error).message}`);
    }
  }
  const docsClone = await cloneWith(context, where, 'docs', docs.repo_url, [
    ['docs.base_sha', docs.base_sha],
  ]);
  let codeTrees: Task['code'] = null;
  let change: Task['change'] = null;
  let readOnly: string[] = [];
  if (code) {
    const codeClone = await cloneWith(context, where, 'code', code.repo_url, [
      ['code.base_sha', code.base_sha],
      ['code.head_sha', code.head_sha],
    ]);
    change = await codeClone.reader.message(code.head_sha);
    codeTrees = {
      base: { kind: 'commit', repository: codeClone.path, commit: code.base_sha },
      head: {
        kind: 'commit',
        repository: codeClone.path,
        commit: code.base_sha,
        from: { commit: code.head_sha, paths: code.paths },
      },
    };
    // The change's own files, where the docs live in the code's repository, stay the change's.
    if (codeClone.path === docsClone.path) readOnly = code.paths;
  }
  const expected = expectedKind(outcome.expected);
  return {
    id,
    origin: `${path.join(context.root, 'items.jsonl')}:${row.line}`,
    instruction: code
      ? dogbenchCodePrompt(code.source_url, change, itemContext)
      : dogbenchRequestPrompt(itemContext),
    expected,
    docsDir: '.',
    writable: DOGBENCH_WRITABLE,
    ...(readOnly.length > 0 && { readOnly }),
    change,
    docs: { kind: 'commit', repository: docsClone.path, commit: docs.base_sha },
    code: codeTrees,
    checks: [],
    rubric: null,
    dogbench: { rubric: outcome.rubric, criteria },
  };
}

/** Reads DogBench's items and rubrics from `dir` (see above). Throws when the files are missing. */
export async function loadDogBench(dir: string): Promise<Suite> {
  const root = path.resolve(dir);
  const itemsFile = path.join(root, 'items.jsonl');
  if (!(await exists(itemsFile))) throw new DocwrightError('invalid-request', `${dir} has no items.jsonl`);
  const rubricsName = (await exists(path.join(root, 'rubrics.jsonl'))) ? 'rubrics.jsonl' : 'outcomes.jsonl';
  if (!(await exists(path.join(root, rubricsName))))
    throw new DocwrightError('invalid-request', `${dir} has no rubrics.jsonl (nor outcomes.jsonl)`);
  const rubrics = await readRubrics(path.join(root, rubricsName), rubricsName);
  const scratch = await mkdtemp(path.join(tmpdir(), 'docwright-dogbench-'));
  try {
    return await loadItems({ root, scratch }, itemsFile, rubrics, rubricsName, dir);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

async function loadItems(
  context: LoadContext,
  itemsFile: string,
  rubrics: Map<string, Outcome>,
  rubricsName: string,
  dir: string,
): Promise<Suite> {
  const tasks = await Promise.all(
    jsonLines(await readDatasetFile(itemsFile)).map(async (row): Promise<Task | InvalidTask> => {
      try {
        return await itemTask(context, row, rubrics, rubricsName);
      } catch (error) {
        if (!(error instanceof ItemError)) throw error;
        const rawId = (row.value as { instance_id?: unknown } | undefined)?.instance_id;
        const id = typeof rawId === 'string' && TASK_ID.test(rawId) ? rawId : `line-${row.line}`;
        // The rubric's row may still say which kind the item is, when only the item is broken.
        const outcome = rubrics.get(id);
        const expected = outcome && !('error' in outcome) ? expectedKind(outcome.expected) : null;
        return { id, origin: `${itemsFile}:${row.line}`, error: error.message, expected };
      }
    }),
  );
  if (tasks.length === 0) throw new DocwrightError('invalid-request', `${dir}/items.jsonl holds no items`);
  return { name: context.root, tasks: withUniqueIds(tasks, 'items.jsonl'), scoring: 'dogbench' };
}
