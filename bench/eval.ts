/**
 * Built-in suite benchmark: `node bench/eval.ts [--runs 3] [--concurrency 4]`.
 *
 * Runs `docwright eval` (the built-in suite, the real pipeline) as a user would, a real process,
 * against the scripted OpenAI-compatible model that solves every task (test/eval/builtin-solutions.ts),
 * and prints the wall-clock time of each run and their median, with the time the model took as
 * the double saw it (the rest is docwright: repositories, jobs, checkouts, agent processes, git).
 * Target: the suite finishes in under 2 minutes on the team's 2-core machine.
 */
import { parseArgs } from 'node:util';
import { startOpenAIServer } from '../test/doubles/openai-server.ts';
import { taskModel } from '../test/doubles/task-model.ts';
import { builtinPlans } from '../test/eval/builtin-solutions.ts';
import { runCli } from '../test/helpers/process.ts';

const { values: args } = parseArgs({
  options: { runs: { type: 'string', default: '3' }, concurrency: { type: 'string', default: '4' } },
});

const model = await startOpenAIServer({ fallback: taskModel(await builtinPlans()) });
const seconds: number[] = [];
try {
  for (let run = 1; run <= Number(args.runs); run++) {
    const firstRequest = model.requests.length;
    const started = performance.now();
    const result = await runCli(
      ['eval', '--model', 'openai-compatible/scripted', '--concurrency', args.concurrency, '--json'],
      { DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: model.url, DOCWRIGHT_LOG_LEVEL: 'error' },
      '',
      { timeoutMs: 600_000 },
    );
    const elapsed = (performance.now() - started) / 1000;
    if (result.code !== 0) throw new Error(`docwright eval exited ${result.code}:\n${result.stderr}`);
    const summary = (JSON.parse(result.stdout) as { summary: { tasks: number; composite: number } }).summary;
    const modelMs = model.requests
      .slice(firstRequest)
      .reduce((sum, r) => sum + ((r.served.end ?? r.served.start) - r.served.start), 0);
    seconds.push(elapsed);
    console.log(
      `run ${run}: ${summary.tasks} tasks in ${elapsed.toFixed(1)} s (composite ${summary.composite}; ${model.requests.length - firstRequest} model requests, ${(modelMs / 1000).toFixed(1)} s in the model)`,
    );
  }
} finally {
  await model.close();
}
const median = [...seconds].sort((a, b) => a - b)[Math.floor(seconds.length / 2)]!;
console.log(`median ${median.toFixed(1)} s (target: under 120 s)`);
