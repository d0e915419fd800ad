/**
 * What every stage of a run's pipeline shares (src/pipeline/pipeline.ts): the job and the run,
 * the worker's tools, the project as the run sees it, and the one redactor everything the run
 * records or publishes passes through. Opened once per run, before any stage.
 */
import { modelEnvironment, projectModelOptions, resolveModel } from '../agent/model-resolution.ts';
import { AgentFailure } from '../agent/types.ts';
import type { App } from '../app.ts';
import type { CodeHost } from '../git/hosts/host.ts';
import { createHost } from '../git/hosts/index.ts';
import type { ContextRepositoryAccess } from '../projects/context-repositories.ts';
import { headBranch } from '../projects/head-branch.ts';
import type { ProjectSecrets, ProjectView } from '../projects/projects.ts';
import { redactDeep } from '../redact.ts';
import { DOCS_REPOSITORY } from '../repository-names.ts';
import type { ModelSpec } from './agent-process.ts';
import { collectRunSecrets, type RunSecrets } from './run-secrets.ts';
import type { RunnableJob, RunnableRun, RunOutcome, RunTools } from './runner.ts';

/** What the pipeline uses of the App. */
export type PipelineDeps = Pick<
  App,
  'config' | 'contextRepositories' | 'logger' | 'now' | 'projects' | 'store' | 'webhooks'
>;

export interface RunContext {
  app: PipelineDeps;
  job: RunnableJob;
  run: RunnableRun;
  tools: RunTools;
  project: ProjectView;
  secrets: ProjectSecrets;
  contexts: ContextRepositoryAccess[];
  /** Every secret the run could meet; grows as the run mints or opens more. */
  runSecrets: RunSecrets;
  /** `runSecrets.redact`: text with every secret replaced. */
  redact: (text: string) => string;
  /** Records a step in the transcript, redacted. */
  record: (type: string, data?: unknown) => Promise<void>;
  model: ModelSpec;
  /** The head branch: the job's own (v1 `branch`, or pushed by an earlier run), else a new name. */
  branch: string;
  gitOptions: { allowLinkLocal: boolean };
  /** The docs repository's host, with the project's credentials. */
  host: CodeHost;
  /** The host of a repository the job names (`docs` or a context repository), with its credentials. */
  hostOf: (name: string) => CodeHost | undefined;
}

export const failed = (code: string, message: string): RunOutcome => ({
  status: 'failed',
  error: { code, message },
});

/** The run's context, or the outcome that ends it before anything starts (no model configured). */
export async function openRunContext(
  app: PipelineDeps,
  job: RunnableJob,
  run: RunnableRun,
  tools: RunTools,
): Promise<RunContext | RunOutcome> {
  const { project, secrets, contexts } = await app.projects.getForRun(job.projectId);
  if (!job.model) {
    return failed('model-not-configured', 'no model is configured: set the project model or DOCWRIGHT_MODEL');
  }
  const runSecrets = await collectRunSecrets(app, { projectId: job.projectId, secrets, contexts });
  const { redact } = runSecrets;
  // The project's own keys win over the environment's. Resolved here once so that a model
  // that is not configured fails the run before anything starts; the agent's process resolves
  // it again from the same settings.
  const model: ModelSpec = {
    id: job.model,
    options: projectModelOptions(project, secrets, modelEnvironment()),
  };
  try {
    resolveModel(model.id, model.options);
  } catch (error) {
    if (error instanceof AgentFailure) return failed(error.code, redact(error.message));
    throw error;
  }
  const gitOptions = { allowLinkLocal: app.config.allowLinkLocalRepositories };
  const host = createHost(project, secrets, gitOptions);
  const contextHosts = new Map(
    contexts.map((c) => [
      c.name,
      createHost({ host: c.host, repository: c.repository, apiUrl: c.apiUrl }, c.secrets, gitOptions),
    ]),
  );
  return {
    app,
    job,
    run,
    tools,
    project,
    secrets,
    contexts,
    runSecrets,
    redact,
    record: (type, data) => tools.emit(type, redactDeep(data, redact)),
    model,
    // A job created with its own head branch (v1 `branch`) keeps it; later runs reuse the pushed one.
    branch: job.branch ?? headBranch(project.settings, job.id),
    gitOptions,
    host,
    hostOf: (name) => (name === DOCS_REPOSITORY ? host : contextHosts.get(name)),
  };
}
