import { runAgent } from '../agent/loop.ts';
import { resolveModel } from '../agent/models.ts';
import { AgentFailure, DEFAULT_BUDGETS, DEFAULT_LIMITS } from '../agent/types.ts';
import type { App } from '../app.ts';
import { checkoutForRun, commitFiles, commitMessage, pushBranch } from '../git/checkout.ts';
import type { ProjectSettings } from '../projects/projects.ts';
import type { Runner, RunOutcome } from './runner.ts';

/** The head branch of a job: the project's prefix and the job id's last eight characters. */
export const headBranch = (settings: Pick<ProjectSettings, 'branchPrefix'>, jobId: string): string =>
  `${settings.branchPrefix}${jobId.slice(-8)}`;

const failed = (code: string, message: string): RunOutcome => ({
  status: 'failed',
  error: { code, message },
});

/**
 * The pipeline for one run: checkout → agent → validation → commit → push.
 * Projects on code hosts need the host integration (pull requests), which is
 * not in this build; they fail with `host-not-supported` instead of pretending.
 */
export function createAgentRunner(app: App): Runner {
  return async (job, run, signal, emit) => {
    const project = await app.projects.get(job.projectId);
    if (!job.model)
      return failed(
        'model-not-configured',
        'no model is configured: set the project model or DOCWRIGHT_MODEL',
      );
    if (project.host !== 'local') {
      return failed(
        'host-not-supported',
        `pull requests on ${project.host} are not supported by this build; use a local project`,
      );
    }
    let model: ReturnType<typeof resolveModel>;
    try {
      // The project's own keys win over the environment's.
      const secrets = await app.projects.getSecrets(job.projectId);
      model = resolveModel(job.model, {
        env: process.env,
        openaiCompatibleBaseUrl: project.settings.openaiCompatibleBaseUrl,
        apiKeys: {
          anthropic: secrets.anthropicApiKey,
          openai: secrets.openaiApiKey,
          openaiCompatible: secrets.openaiCompatibleApiKey,
        },
      });
    } catch (error) {
      if (error instanceof AgentFailure) return failed(error.code, error.message);
      throw error;
    }

    const branch = headBranch(project.settings, job.id);
    const checkout = await checkoutForRun({
      remote: project.repository,
      ref: job.source.ref,
      branch,
      signal,
    });
    try {
      const result = await runAgent(
        {
          root: checkout.dir,
          project: { docsDir: project.settings.docsDir, writable: project.settings.writable },
          instruction: run.prompt,
          history: run.history.map((h) => ({ prompt: h.prompt, summary: h.summary, error: h.error })),
          budgets: { ...DEFAULT_BUDGETS, ...app.config.agent },
          limits: DEFAULT_LIMITS,
          signal,
          emit: (event) => emit(event.type, event.data),
        },
        model,
      );
      const committed = await commitFiles(checkout, {
        files: result.changedFiles,
        message: commitMessage(result.title, result.summary),
        author: { name: project.settings.authorName, email: project.settings.authorEmail },
        signal,
      });
      if (committed) {
        await pushBranch(checkout, { signal });
        await emit('git.pushed', { branch });
      }
      return {
        status: 'completed',
        // The local host opens no pull request (SPEC §6).
        prLink: null,
        branch: committed || checkout.existing ? branch : null,
        summary: result.summary,
        usage: result.usage,
      };
    } catch (error) {
      if (error instanceof AgentFailure) return failed(error.code, error.message);
      throw error;
    } finally {
      await checkout.remove();
    }
  };
}
