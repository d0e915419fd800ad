import { parseModelId, projectModelOptions, resolveModel } from '../agent/model-resolution.ts';
import { AgentFailure } from '../agent/types.ts';
import type { App } from '../app.ts';
import {
  describeServer,
  liveServers,
  modelEnvironmentOf,
  type ServerProcess,
} from '../processes/process-registry.ts';
import type { ProjectView } from '../projects/projects.ts';

/** How long `project create` waits for a model server to answer before warning. */
const REACH_TIMEOUT_MS = 3_000;

export interface ModelReport {
  /** Why jobs of the project would fail for want of a model. */
  warnings: string[];
  /** What the check was judged by, when that is not the running server. */
  notes: string[];
}

/**
 * Why jobs of this project would fail for want of a model, judged by the settings of the running
 * docwright processes (process-registry.ts): the default model of those that create jobs, the keys and
 * endpoint of those that run them. With none running, by this shell's environment, and saying
 * so. No model request is sent (that is `docwright doctor`'s job), so no tokens are spent.
 */
export async function modelReport(app: App, project: ProjectView): Promise<ModelReport> {
  const servers = await liveServers(app.store.db, app.now());
  const secrets = await app.projects.getSecrets(project.id);
  const shellModel = app.config.defaultModel;
  if (servers.length === 0) {
    const problem = modelProblem(project.model ?? shellModel, projectModelOptions(project, secrets));
    const baseUrl =
      project.settings.openaiCompatibleBaseUrl ?? process.env.DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL;
    const unreachable = problem ? undefined : await reachProblem(project.model ?? shellModel, baseUrl);
    return {
      warnings: [problem, unreachable].filter((w): w is string => w !== undefined),
      notes: [
        `no docwright server is running on ${app.store.location}, so the model was checked in this shell's environment` +
          ` (DOCWRIGHT_MODEL ${shellModel ? `is ${shellModel}` : 'is not set'}): start the server with the same model settings`,
      ],
    };
  }

  const warnings: string[] = [];
  // The process that takes a create chooses the model of a job whose project names none.
  const creators = servers.filter((s) => s.servesApi);
  const defaults = [
    ...new Set((creators.length > 0 ? creators : servers).map((s) => s.settings.defaultModel)),
  ];
  let modelId = project.model ?? undefined;
  if (!modelId) {
    if (defaults.length > 1) {
      warnings.push(
        `the running docwright servers disagree on DOCWRIGHT_MODEL (${defaults.map((d) => d ?? 'not set').join(', ')}): ` +
          "a job's model depends on which one takes it; start them with one model, or give the project --model",
      );
    }
    modelId = defaults.find((d): d is string => d !== null);
    if (defaults.includes(null)) {
      const shell = shellModel
        ? ` This shell's DOCWRIGHT_MODEL=${shellModel} does not reach a server that is already running: restart it with that variable set.`
        : ' Start it with DOCWRIGHT_MODEL set (e.g. anthropic/claude-sonnet-4-5).';
      warnings.push(
        `the running ${(creators.length > 0 ? creators : servers).map(describeServer).join(', ')} has no model: ` +
          `DOCWRIGHT_MODEL is not set in its environment, so jobs of this project will fail with model-not-configured.${shell} ` +
          'Or give the project its own: docwright project update --model …',
      );
      return { warnings, notes: [] };
    }
  }

  const runners = servers.filter((s) => s.runsJobs);
  if (runners.length === 0) {
    warnings.push(
      'no running docwright process runs jobs (all are serve --no-worker): jobs wait in the queue until a worker starts (docwright worker)',
    );
  }
  // The process that runs a job resolves its model with the keys and endpoint of its environment.
  const problems = new Map<string, ServerProcess[]>();
  for (const runner of runners) {
    const problem = modelProblem(
      modelId,
      projectModelOptions(project, secrets, modelEnvironmentOf(runner.settings)),
    );
    if (problem) problems.set(problem, [...(problems.get(problem) ?? []), runner]);
  }
  for (const [problem, where] of problems) {
    warnings.push(`${problem}, in the environment of the running ${where.map(describeServer).join(', ')}`);
  }
  if (problems.size === 0 && runners.length > 0) {
    const baseUrl = project.settings.openaiCompatibleBaseUrl ?? runners[0]!.settings.openaiCompatibleBaseUrl;
    const unreachable = await reachProblem(modelId, baseUrl ?? undefined);
    if (unreachable) warnings.push(`${unreachable} (tried from this machine)`);
  }
  return { warnings, notes: [] };
}

/** Why a job on `modelId` would fail to resolve its model with these options, or undefined. */
function modelProblem(
  modelId: string | undefined,
  options: ReturnType<typeof projectModelOptions>,
): string | undefined {
  if (!modelId) {
    return (
      'no model is configured, so jobs of this project will fail with model-not-configured: ' +
      'set DOCWRIGHT_MODEL for the server (e.g. anthropic/claude-sonnet-4-5), or give the project --model'
    );
  }
  try {
    resolveModel(modelId, options);
    return undefined;
  } catch (error) {
    if (error instanceof AgentFailure) return `${error.message} (jobs will fail with ${error.code})`;
    throw error;
  }
}

/**
 * A local model server (Ollama, vLLM, LM Studio) that is not running is the usual first-hour
 * failure. Any HTTP answer means something listens there.
 */
async function reachProblem(
  modelId: string | undefined,
  baseUrl: string | undefined,
): Promise<string | undefined> {
  if (!modelId || !baseUrl || parseModelId(modelId).provider !== 'openai-compatible') return undefined;
  try {
    await fetch(baseUrl, { signal: AbortSignal.timeout(REACH_TIMEOUT_MS) }).then((r) => r.body?.cancel());
    return undefined;
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
    return `the model server at ${baseUrl} does not answer (${cause}): start it, or fix the base URL; jobs of this project will fail with model-unavailable until it answers`;
  }
}
