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
 * DogBench prepares it); the context as the instruction, framed as DogBench frames it (update
 * the documentation for the change, or change nothing and say why); the rubric as the judge's
 * criteria (src/eval/rubric.ts maps its priorities and scorings). Without --judge a patch task
 * is checked only for having changed something (a P0 requirement): its quality is the judge's.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { DocwrightError } from '../errors.ts';
import { git } from '../git/git.ts';
import { DEFAULT_WRITABLE } from '../projects/projects.ts';
import { fieldErrors, fieldSummary } from '../validation.ts';
import { parseDogBenchRubric, type Rubric } from './rubric.ts';
import type { Expected } from './score.ts';
import { type Suite, withUniqueIds } from './suite.ts';
import { type InvalidTask, TASK_ID, type Task } from './task.ts';

/** What a DogBench task may write besides Markdown and MDX: its repositories use Sphinx and AsciiDoc too. */
const DOGBENCH_WRITABLE = [...DEFAULT_WRITABLE, '**/*.rst', '**/*.adoc', '**/*.txt'];

const INSTRUCTION = [
  "You maintain this project's user-facing documentation.",
  'Review the code change or request below and the existing documentation, and decide whether users need the documentation updated.',
  'If they do, update it. If they do not, change nothing, and say why in your summary.',
].join(' ');

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

const exists = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  );

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
  for (const candidate of candidates)
    if ((await exists(path.join(candidate, '.git'))) || (await exists(path.join(candidate, 'HEAD'))))
      return { path: candidate };
  const looked = candidates.map((c) => path.relative(dir, c) || '.').join(', ');
  return { error: `no local clone of ${repoUrl} (looked in ${looked})` };
}

async function hasCommit(repository: string, commit: string): Promise<boolean> {
  return git(['cat-file', '-e', `${commit}^{commit}`], { cwd: repository }).then(
    () => true,
    () => false,
  );
}

type Outcome = { expected: 'patch' | 'abstain'; rubric: string | null } | { error: string };

/** The expected decision and rubric of each item, by instance id. */
async function readRubrics(file: string, name: string): Promise<Map<string, Outcome>> {
  const rubrics = new Map<string, Outcome>();
  for (const row of jsonLines(await readFile(file, 'utf8'))) {
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

/** The local clone holding `commits`, or an ItemError saying what is missing. */
async function cloneWith(
  root: string,
  where: string,
  part: 'docs' | 'code',
  repoUrl: string,
  commits: [string, string][],
) {
  const clone = await findClone(root, repoUrl);
  if ('error' in clone) throw new ItemError(`${where}: ${part}: ${clone.error}`);
  for (const [field, commit] of commits) {
    if (!(await hasCommit(clone.path, commit)))
      throw new ItemError(`${where}: ${field} ${commit} is not in ${clone.path} (fetch it there)`);
  }
  return clone.path;
}

/** DogBench's decision as docwright's kind of task: an abstention expects no change. */
const expectedKind = (decision: 'patch' | 'abstain'): Expected =>
  decision === 'abstain' ? 'no-changes' : 'patch';

async function itemTask(
  root: string,
  row: JsonLine,
  rubrics: Map<string, Outcome>,
  rubricsName: string,
): Promise<Task> {
  const where = `items.jsonl:${row.line}`;
  if (row.error) throw new ItemError(`${where}: ${row.error}`);
  const parsed = item.safeParse(row.value);
  if (!parsed.success) throw new ItemError(`${where}: ${problems(parsed.error)}`);
  const { instance_id: id, docs, code, context } = parsed.data;
  const outcome = rubrics.get(id);
  if (!outcome) throw new ItemError(`${rubricsName}: no row for ${id}`);
  if ('error' in outcome) throw new ItemError(outcome.error);
  let rubric: Rubric | null = null;
  if (outcome.expected === 'patch' && outcome.rubric) {
    try {
      rubric = parseDogBenchRubric(outcome.rubric);
    } catch (error) {
      throw new ItemError(`${rubricsName}: the rubric of ${id} ${(error as Error).message}`);
    }
  }
  const docsClone = await cloneWith(root, where, 'docs', docs.repo_url, [['docs.base_sha', docs.base_sha]]);
  let codeTrees: Task['code'] = null;
  if (code) {
    const repository = await cloneWith(root, where, 'code', code.repo_url, [
      ['code.base_sha', code.base_sha],
      ['code.head_sha', code.head_sha],
    ]);
    codeTrees = {
      base: { kind: 'commit', repository, commit: code.base_sha },
      head: {
        kind: 'commit',
        repository,
        commit: code.base_sha,
        from: { commit: code.head_sha, paths: code.paths },
      },
    };
  }
  const expected = expectedKind(outcome.expected);
  return {
    id,
    origin: `${path.join(root, 'items.jsonl')}:${row.line}`,
    instruction: `${INSTRUCTION}\n\n<context>\n${context}\n</context>`,
    expected,
    docsDir: '.',
    writable: DOGBENCH_WRITABLE,
    change: null,
    docs: { kind: 'commit', repository: docsClone, commit: docs.base_sha },
    code: codeTrees,
    checks: [
      { type: expected === 'patch' ? 'changed' : 'unchanged', priority: 'P0', scoring: 'requirement' },
    ],
    rubric,
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
  const tasks = await Promise.all(
    jsonLines(await readFile(itemsFile, 'utf8')).map(async (row): Promise<Task | InvalidTask> => {
      try {
        return await itemTask(root, row, rubrics, rubricsName);
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
  return { name: root, tasks: withUniqueIds(tasks, 'items.jsonl') };
}
