/**
 * `docwright doctor`'s model checks while a docwright server runs (issue 35): a job's model and
 * keys are the server's, recorded by it (process-registry.ts), not this shell's, which may well have none.
 * Judged the way `project create` judges them (model-report.ts): the default model of the
 * processes that create jobs, the keys and endpoint of those that run them. The model is contacted
 * from here only when this shell's model settings are the server's; otherwise a pass says it was
 * judged by the server's settings and sent nothing.
 */
import { type ResolveModelOptions, resolveModel } from '../agent/model-resolution.ts';
import { AgentFailure } from '../agent/types.ts';
import type { Config } from '../config.ts';
import {
  describeServer,
  effectiveSettings,
  jobCreators,
  modelEnvironmentOf,
  type ServerProcess,
  type ServerSettings,
} from '../processes/process-registry.ts';
import type { ProjectView } from '../projects/projects.ts';
import { checkModel, type ModelProbe, type Outcome } from './doctor-probes.ts';

export interface RunningServers {
  servers: ServerProcess[];
  /** This shell's model settings, to tell whether a probe from here stands for the server's. */
  shell: ServerSettings;
}

export const runningServers = (servers: ServerProcess[], config: Config, env: NodeJS.ProcessEnv) => ({
  servers,
  shell: effectiveSettings(config, env),
});

const named = (servers: ServerProcess[]) => servers.map(describeServer).join(', ');

/** The default model the running servers give a job whose project names none. */
export function servedDefaultModel(running: RunningServers): string | undefined {
  return (
    jobCreators(running.servers).find((s) => s.settings.defaultModel)?.settings.defaultModel ?? undefined
  );
}

const sameModelSettings = (a: ServerSettings, b: ServerSettings) =>
  JSON.stringify([a.modelKeys, a.openaiCompatibleBaseUrl]) ===
  JSON.stringify([b.modelKeys, b.openaiCompatibleBaseUrl]);

/**
 * A job's model as the running servers would run it: `modelId` (the project's, or the servers'
 * default) resolved with each runner's recorded keys and endpoint and `options` (the project's
 * own keys and base URL); contacted from here when this shell has the same model settings.
 */
export async function checkServedModel(
  modelId: string | undefined,
  options: ResolveModelOptions,
  running: RunningServers,
  probe: ModelProbe,
  signal: AbortSignal,
): Promise<Outcome> {
  const creators = jobCreators(running.servers);
  if (!modelId) {
    return {
      status: 'warn',
      detail: `DOCWRIGHT_MODEL is not set in the environment of the running ${named(creators)}: jobs of projects that name no model will fail with model-not-configured (restart it with DOCWRIGHT_MODEL set, or give the project --model)`,
    };
  }
  const runners = running.servers.filter((s) => s.runsJobs);
  if (runners.length === 0) {
    return {
      status: 'warn',
      detail: `${modelId}: no running docwright process runs jobs (all are serve --no-worker); jobs wait until a worker starts`,
    };
  }
  for (const runner of runners) {
    try {
      resolveModel(modelId, { ...options, env: modelEnvironmentOf(runner.settings) });
    } catch (error) {
      if (!(error instanceof AgentFailure)) throw error;
      return {
        status: 'fail',
        detail: `${error.code}: ${error.message}, in the environment of the running ${describeServer(runner)}`,
      };
    }
  }
  const by = `judged by the running ${named(runners)}`;
  if (runners.every((r) => sameModelSettings(r.settings, running.shell))) {
    const outcome = await checkModel(modelId, options, probe, signal);
    return { ...outcome, detail: `${outcome.detail} (${by})` };
  }
  return {
    status: 'ok',
    detail: `${modelId} is configured (${by}, whose keys and endpoint differ from this shell's: not contacted from here)`,
  };
}

/** The servers' default model: what projects that name no model run on. */
export function checkServedDefault(
  running: RunningServers,
  projects: ProjectView[],
  probe: ModelProbe,
  signal: AbortSignal,
): Promise<Outcome> {
  const modelId = servedDefaultModel(running);
  if (!modelId && projects.length > 0 && projects.every((p) => p.model)) {
    return Promise.resolve({
      status: 'ok',
      detail: 'the running server has no DOCWRIGHT_MODEL; every project checked names its own model',
    });
  }
  return checkServedModel(modelId, { env: probe.env }, running, probe, signal);
}
