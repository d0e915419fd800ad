/**
 * `docwright eval [SUITE_DIR]` (docs/evaluation.mdx): runs a suite of documentation tasks through the real
 * pipeline and scores them. Progress goes to stderr (a spinner on a terminal, and a line per
 * finished task); the result to stdout (a table, or with --json one document); --report writes
 * an HTML report.
 *
 * Exit codes: 0 every task ran; 1 a task was invalid or could not run; 2 a usage error;
 * 130 interrupted (everything the run made is removed first).
 */
import { statSync, writeFileSync } from 'node:fs';
import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { modelEnvironment, resolveModel } from '../agent/model-resolution.ts';
import { AgentFailure } from '../agent/types.ts';
import { DocwrightError } from '../errors.ts';
import { loadDogBench } from '../eval/dogbench.ts';
import { type EvalRun, evalDocument, runEval } from '../eval/eval.ts';
import { renderReport } from '../eval/report.ts';
import type { TaskReport } from '../eval/run-task.ts';
import { loadBuiltinSuite, loadSuiteFolder, type Suite } from '../eval/suite.ts';
import { MODEL_PATTERN } from '../validation.ts';
import { table } from './output.ts';
import { list, positiveInt } from './parsers.ts';
import { spinner } from './spinner.ts';

interface EvalFlags {
  model?: string;
  judge?: string;
  tasks?: string[];
  concurrency: number;
  json?: boolean;
  report?: string;
  dogbench?: string;
}

const usage = (message: string) => new DocwrightError('invalid-request', message);

/** Checks a `provider/model` flag as a job would resolve it (keys and base URLs from the environment). */
function checkModel(flag: string, id: string) {
  if (!MODEL_PATTERN.test(id)) {
    throw usage(`${flag} ${id}: use provider/model with provider anthropic, openai or openai-compatible`);
  }
  try {
    return resolveModel(id, { env: modelEnvironment() });
  } catch (error) {
    if (error instanceof AgentFailure) throw usage(`${flag}: ${error.message}`);
    throw error;
  }
}

async function loadSuite(dir: string | undefined, flags: EvalFlags): Promise<Suite> {
  if (dir !== undefined && flags.dogbench !== undefined)
    throw usage('give SUITE_DIR or --dogbench DIR, not both');
  if (flags.dogbench !== undefined) return loadDogBench(flags.dogbench);
  return dir === undefined ? loadBuiltinSuite() : loadSuiteFolder(dir);
}

function selectTasks(suite: Suite, ids: string[] | undefined): Suite {
  if (!ids) return suite;
  const known = new Set(suite.tasks.map((t) => t.id));
  const unknown = ids.filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw usage(`--tasks: no task ${unknown.join(', ')} in the suite (its tasks: ${[...known].join(', ')})`);
  }
  const wanted = new Set(ids);
  return { ...suite, tasks: suite.tasks.filter((t) => wanted.has(t.id)) };
}

/** A report file must be writable before an evaluation that may take long is started. */
async function checkReportPath(file: string): Promise<void> {
  const dir = path.dirname(path.resolve(file));
  try {
    await access(dir, constants.W_OK);
  } catch {
    throw usage(`--report ${file}: cannot write into ${dir}`);
  }
  if (statSync(file, { throwIfNoEntry: false })?.isDirectory()) throw usage(`--report ${file}: is a folder`);
}

const taskLine = (r: TaskReport): string => {
  const mark = r.outcome === 'invalid' || r.couldNotRun ? '!' : r.score === 100 ? '✓' : '✗';
  const score = r.score === null ? 'invalid' : `score ${r.score}`;
  const tail = r.error ? ` · ${r.error.split('\n')[0]}` : '';
  return `${mark} ${r.id}: ${score} (expected ${r.expected ?? '?'}, ${r.outcome}, ${r.seconds} s)${tail}`;
};

/** Progress on stderr: a line per finished task, and on a terminal a spinner naming the running ones. */
function progress(total: number) {
  const tty = process.stderr.isTTY === true;
  const running = new Set<string>();
  let done = 0;
  const text = () =>
    `eval: ${done}/${total} done${running.size > 0 ? ` · running ${[...running].join(', ')}` : ''}`;
  let bar = tty ? spinner(process.stderr, text()) : undefined;
  return {
    start(id: string) {
      running.add(id);
      bar?.update(text());
    },
    end(report: TaskReport) {
      running.delete(report.id);
      done++;
      bar?.stop();
      process.stderr.write(`${taskLine(report)}\n`);
      bar = tty && done < total ? spinner(process.stderr, text()) : undefined;
    },
    stop() {
      bar?.stop();
      bar = undefined;
    },
  };
}

/** DogBench's figures (docs/evaluation.mdx), in its names. */
function dogbenchLines(run: EvalRun): string[] {
  const d = run.dogbench;
  if (!d) return [];
  const f = (v: number | null, unit = '') => (v === null ? '—' : `${Math.round(v * 10) / 10}${unit}`);
  return [
    `DogBench: composite ${f(d.composite_score)}${d.complete ? '' : ' (not every item ran)'} · patch quality ${f(d.delivered_patch_quality)} · no-op recall ${f(d.no_op_recall, '%')} · P0-clean delivery ${f(d.p0_clean_delivery_percent, '%')} · decisions ${f(d.decision_accuracy_percent, '%')} right`,
  ];
}

function human(run: EvalRun): string {
  if (run.scoring === 'dogbench') return humanDogBench(run);
  const s = run.summary;
  const figure = (v: number | null, unit = '') => (v === null ? '—' : `${v}${unit}`);
  const tasks = (n: number, kind: string) => `${n} ${kind} task${n === 1 ? '' : 's'}`;
  const rows = run.tasks.map((t) => [
    t.id,
    t.expected ?? '—',
    t.outcome,
    t.score === null ? '—' : String(t.score),
    t.p0Clean ? 'yes' : 'no',
    `${t.seconds} s`,
  ]);
  return [
    table(['TASK', 'EXPECTED', 'OUTCOME', 'SCORE', 'P0 CLEAN', 'TIME'], rows),
    '',
    `composite ${figure(s.composite)} · D ${figure(s.D)} (${tasks(s.patchTasks, 'patch')}) · N ${figure(s.N, '%')} (${tasks(s.noChangeTasks, 'no-change')}) · P0 clean ${figure(s.p0CleanRate, '%')}`,
    `${s.tasks} tasks · ${s.tokens.input} tokens in, ${s.tokens.output} out · ${s.seconds} s · model ${run.model}${run.judge ? ` · judge ${run.judge}` : ''}`,
    ...run.tasks.filter((t) => t.error).map((t) => `${t.id}: ${t.error}`),
  ].join('\n');
}

function humanDogBench(run: EvalRun): string {
  const rows = run.tasks.map((t) => [
    t.id,
    t.dogbench?.expected_outcome ?? '—',
    t.dogbench?.decision ?? t.outcome,
    t.score === null ? '—' : String(t.score),
    t.dogbench?.mergeable ? 'yes' : 'no',
    `${t.seconds} s`,
  ]);
  return [
    table(['ITEM', 'EXPECTED', 'DECISION', 'OVERALL', 'MERGEABLE', 'TIME'], rows),
    '',
    ...dogbenchLines(run),
    `${run.tasks.length} items · ${run.summary.tokens.input} tokens in, ${run.summary.tokens.output} out · ${run.summary.seconds} s · model ${run.model} · judge ${run.judge}`,
    ...run.tasks.flatMap((t) => [
      ...(t.error ? [`${t.id}: ${t.error}`] : []),
      ...(t.dogbench?.judgeError ? [`${t.id}: ${t.dogbench.judgeError}`] : []),
    ]),
  ].join('\n');
}

export function registerEvalCommand(program: Command): void {
  program
    .command('eval')
    .description('measure the agent on a suite of documentation tasks (default: the built-in suite)')
    .argument('[SUITE_DIR]', 'a folder of task folders (task.json, docs/, code/base + code/head, rubric.md)')
    .option('--model <provider/model>', 'the model the agent uses (default: DOCWRIGHT_MODEL)')
    .option('--judge <provider/model>', "a model that also rates each task's rubric.md criteria")
    .option('--tasks <ids>', 'only these tasks (comma-separated)', list)
    .option('--concurrency <n>', 'tasks run at once', positiveInt, 4)
    .option('--json', 'print the result as one JSON document')
    .option('--report <file.html>', 'write an HTML report: per task its score, checks and diff')
    .option('--dogbench <dir>', 'run DogBench tasks: items.jsonl, rubrics.jsonl and local clones in DIR')
    .action(async (dir: string | undefined, flags: EvalFlags) => {
      const model = flags.model ?? process.env.DOCWRIGHT_MODEL;
      if (!model) throw usage('no model: pass --model provider/model or set DOCWRIGHT_MODEL');
      checkModel('--model', model);
      if (flags.dogbench !== undefined && !flags.judge)
        throw usage("--dogbench scores patches with DogBench's judge: add --judge provider/model");
      const judge = flags.judge ? { id: flags.judge, model: checkModel('--judge', flags.judge) } : null;
      if (flags.report) await checkReportPath(flags.report);
      const suite = selectTasks(await loadSuite(dir, flags), flags.tasks);

      const interrupt = new AbortController();
      const onSignal = () => interrupt.abort(new Error('interrupted'));
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      process.stderr.write(
        `docwright eval: ${suite.tasks.length} tasks of ${suite.name} with ${model}${judge ? `, judged by ${judge.id}` : ''} (Ctrl-C stops and cleans up)\n`,
      );
      const shown = progress(suite.tasks.length);
      let run: EvalRun;
      try {
        run = await runEval({
          suite,
          model,
          judge,
          concurrency: flags.concurrency,
          env: process.env,
          signal: interrupt.signal,
          onTaskStart: (id) => shown.start(id),
          onTaskEnd: (report) => shown.end(report),
        });
      } catch (error) {
        shown.stop();
        if (interrupt.signal.aborted) {
          process.stderr.write('docwright eval: interrupted; its temporary files are removed\n');
          process.exit(130);
        }
        throw error;
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
      shown.stop();
      if (flags.report) {
        writeFileSync(flags.report, renderReport(run));
        process.stderr.write(`docwright eval: report written to ${flags.report}\n`);
      }
      process.stdout.write(
        flags.json ? `${JSON.stringify(evalDocument(run), null, 2)}\n` : `${human(run)}\n`,
      );
      if (run.tasks.some((t) => t.couldNotRun)) process.exitCode = 1;
    });
}
