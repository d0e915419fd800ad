import { parseModelId, projectModelOptions, resolveModel } from '../agent/models.ts';
import { AgentFailure } from '../agent/types.ts';
import type { App } from '../app.ts';
import type { ProjectView } from '../projects/projects.ts';

/** How long `project create` waits for a model server to answer before warning. */
const REACH_TIMEOUT_MS = 3_000;

/**
 * Why jobs of this project would fail for want of a model, or undefined when a model is
 * configured (and, for an OpenAI-compatible server, answers at all). Judged with this process's
 * environment, as the server would with the same one; no model request is sent (that is
 * `docwright doctor`'s job), so no tokens are spent.
 */
export async function modelWarning(app: App, project: ProjectView): Promise<string | undefined> {
  const modelId = project.model ?? app.config.defaultModel;
  if (!modelId) {
    return (
      'no model is configured, so jobs of this project will fail with model-not-configured: ' +
      'set DOCWRIGHT_MODEL for the server (e.g. anthropic/claude-sonnet-4-5), or give the project --model'
    );
  }
  const options = projectModelOptions(project, await app.projects.getSecrets(project.id));
  try {
    resolveModel(modelId, options);
  } catch (error) {
    if (error instanceof AgentFailure) return `${error.message} (jobs will fail with ${error.code})`;
    throw error;
  }
  if (parseModelId(modelId).provider !== 'openai-compatible') return undefined;
  // A local model server (Ollama, vLLM, LM Studio) that is not running is the usual first-hour
  // failure. Any HTTP answer means something listens there.
  const baseUrl = (options.openaiCompatibleBaseUrl ?? process.env.DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL)!;
  try {
    await fetch(baseUrl, { signal: AbortSignal.timeout(REACH_TIMEOUT_MS) }).then((r) => r.body?.cancel());
    return undefined;
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
    return `the model server at ${baseUrl} does not answer (${cause}): start it, or fix the base URL; jobs of this project will fail with model-unavailable until it answers`;
  }
}
