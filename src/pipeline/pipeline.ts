/**
 * The pipeline for one run, in named stages over one RunContext (docs/architecture.mdx):
 *
 *   resolve → checkout → agent → verify → publish
 *
 * An ask run (docs/questions.mdx) ends after the agent with its answer (stage-answer.ts):
 * nothing is verified, committed or pushed.
 * Every secret the run could meet (run-secrets.ts) is redacted from what it records and
 * publishes by the context's one redactor, and a change holding one is not pushed (verify);
 * git gets its credentials only through the environment.
 */
import { AgentFailure } from '../agent/types.ts';
import { HostError } from '../git/hosts/index.ts';
import { MirrorCache } from '../git/mirror.ts';
import { redactDeep } from '../redact.ts';
import type { ResolveCodeContext } from './run-code.ts';
import { failed, openRunContext, type PipelineDeps, type RunContext } from './run-context.ts';
import type { Runner, RunOutcome } from './runner.ts';
import { SpareAgentProcess } from './spare-agent.ts';
import { agentStage } from './stage-agent.ts';
import { answerStage } from './stage-answer.ts';
import { checkoutStage } from './stage-checkout.ts';
import { publishStage } from './stage-publish.ts';
import { resolveStage } from './stage-resolve.ts';
import { verifyStage } from './stage-verify.ts';

export type { PipelineDeps };

export interface PipelineOptions {
  /**
   * Replaces the code context of each run (tests of code reading alone). Default: the project's
   * context repositories, each at the head of the job's change of it or else at its ref, and the
   * job's changes as their hosts resolved them.
   */
  codeContext?: ResolveCodeContext;
}

export function createPipeline(app: PipelineDeps, options: PipelineOptions = {}): Runner {
  const cache = new MirrorCache(app.config.mirrors);
  const mirrors = {
    cache,
    evict: () =>
      cache.evict().then(
        (removed) => {
          if (removed.length > 0) app.logger.info({ removed }, 'removed least recently used git mirrors');
        },
        (error: Error) => app.logger.warn({ err: { message: error.message } }, 'could not evict git mirrors'),
      ),
  };
  const spares = new SpareAgentProcess(app.config.agentProcess);

  /** The stages in order, once the context is open; an outcome from a stage ends the run. */
  async function runStages(ctx: RunContext): Promise<RunOutcome> {
    // The agent's process was started after the last run, or starts now and loads while the
    // checkout is made.
    const agent = spares.take();
    try {
      const resolved = await resolveStage(ctx, options.codeContext);
      const workspace = await checkoutStage(ctx, resolved, mirrors);
      const result = await agentStage(ctx, agent, resolved, workspace);
      if (ctx.job.mode === 'ask') return answerStage(ctx, resolved, result);
      const refused = await verifyStage(ctx, workspace, result);
      if (refused) return refused;
      return await publishStage(ctx, resolved, workspace, result);
    } finally {
      agent.kill();
      // Once the outcome is recorded: the next run's process starts while this worker is idle.
      ctx.tools.defer(async () => spares.replenish());
    }
  }

  const runner: Runner = async (job, run, tools) => {
    let redact = (text: string) => text;
    try {
      const ctx = await openRunContext(app, job, run, tools);
      if (!('runSecrets' in ctx)) return ctx;
      redact = ctx.redact;
      return await runStages(ctx);
    } catch (error) {
      return outcomeOf(error, redact);
    }
  };
  runner.close = () => spares.close();
  return runner;
}

/** The outcome of a run a stage ended by throwing: a known failure, or the error again (redacted). */
function outcomeOf(error: unknown, redact: (text: string) => string): RunOutcome {
  if (error instanceof AgentFailure && error.checks)
    return { ...failed(error.code, redact(error.message)), checks: redactDeep(error.checks, redact) };
  if (error instanceof AgentFailure || error instanceof HostError)
    return failed(error.code, redact(error.message));
  throw redactDeep(error, redact);
}
