/**
 * The probes of `docwright doctor` that talk to something outside the database: the git
 * binary, model endpoints and code hosts. Each returns an outcome and never throws for what it
 * checks; each goes through the same code a job run uses (resolveModel with the project's
 * options, createHost, git with credentials in the environment), so that a pass here means a
 * run gets as far.
 */
import { createHash } from 'node:crypto';
import { generateText } from 'ai';
import { classifyModelError } from '../agent/model-errors.ts';
import {
  type ModelProvider,
  parseModelId,
  projectModelOptions,
  type ResolveModelOptions,
  resolveModel,
} from '../agent/model-resolution.ts';
import { AgentFailure } from '../agent/types.ts';
import { classifyGitError } from '../git/checkout.ts';
import { GitError, git } from '../git/git.ts';
import { type CodeHost, createHost, gitAccess, HostError } from '../git/hosts/index.ts';
import type { ProjectSecrets, ProjectView } from '../projects/projects.ts';
import type { Redact } from '../redact.ts';

export interface Outcome {
  status: 'ok' | 'warn' | 'fail';
  detail: string;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * The oldest git docwright works with: credentials reach git in `GIT_CONFIG_COUNT`/`_KEY_n`/
 * `_VALUE_n` (git 2.31), and `GIT_CONFIG_GLOBAL` keeps the user's configuration out (2.32).
 */
export const MIN_GIT_VERSION = [2, 32] as const;
const MIN_GIT = MIN_GIT_VERSION.join('.');

export async function checkGit(signal: AbortSignal): Promise<Outcome> {
  let output: string;
  try {
    output = await git(['--version'], { signal, timeoutMs: 10_000 });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') {
      return {
        status: 'fail',
        detail: `git is not installed or not on PATH (docwright needs git ${MIN_GIT} or newer)`,
      };
    }
    return { status: 'fail', detail: `git --version failed: ${message(error)}` };
  }
  const match = /git version (\d+)\.(\d+)(?:\.(\d+))?/.exec(output);
  if (!match) return { status: 'warn', detail: `cannot tell the version of git from "${output.trim()}"` };
  const [major, minor] = [Number(match[1]), Number(match[2])];
  const version = match.slice(1).filter(Boolean).join('.');
  if (major < MIN_GIT_VERSION[0] || (major === MIN_GIT_VERSION[0] && minor < MIN_GIT_VERSION[1])) {
    return {
      status: 'fail',
      detail: `git ${version} is too old: docwright needs ${MIN_GIT} or newer (credentials travel in GIT_CONFIG_COUNT, 2.31; GIT_CONFIG_GLOBAL keeps user configuration out, 2.32)`,
    };
  }
  return { status: 'ok', detail: `git ${version} (${MIN_GIT} or newer needed)` };
}

// ---------------------------------------------------------------------------------------------
// Models

export interface ModelProbe {
  /** Resolve only: send no request. */
  skip: boolean;
  env: NodeJS.ProcessEnv;
  /** One request per distinct model, endpoint and key, however many projects share it. */
  memo: Map<string, Promise<Outcome>>;
}

/** Where the key a model call sends comes from, to say which one was rejected. */
function keySource(provider: ModelProvider, options: ResolveModelOptions, env: NodeJS.ProcessEnv): string {
  const keys = options.apiKeys ?? {};
  switch (provider) {
    case 'anthropic':
      return keys.anthropic ? "the project's Anthropic key" : 'ANTHROPIC_API_KEY';
    case 'openai':
      return keys.openai ? "the project's OpenAI key" : 'OPENAI_API_KEY';
    case 'openai-compatible':
      if (keys.openaiCompatible) return "the project's OpenAI-compatible key";
      return env.DOCWRIGHT_OPENAI_COMPATIBLE_API_KEY ? 'DOCWRIGHT_OPENAI_COMPATIBLE_API_KEY' : 'no key';
  }
}

/**
 * Resolves `modelId` as a run would and sends it one tiny request (one output token, no
 * retries), so that the key, the base URL and the model name are all verified.
 */
export function checkModel(
  modelId: string,
  options: ResolveModelOptions,
  probe: ModelProbe,
  signal: AbortSignal,
): Promise<Outcome> {
  const fingerprint = createHash('sha256')
    .update(JSON.stringify([modelId, options.openaiCompatibleBaseUrl ?? null, options.apiKeys ?? {}]))
    .digest('hex');
  let outcome = probe.memo.get(fingerprint);
  if (!outcome) {
    outcome = callModel(modelId, options, probe, signal);
    probe.memo.set(fingerprint, outcome);
  }
  return outcome;
}

async function callModel(
  modelId: string,
  options: ResolveModelOptions,
  probe: ModelProbe,
  signal: AbortSignal,
): Promise<Outcome> {
  let model: ReturnType<typeof resolveModel>;
  try {
    model = resolveModel(modelId, { ...options, env: probe.env });
  } catch (error) {
    if (error instanceof AgentFailure) return { status: 'fail', detail: `${error.code}: ${error.message}` };
    throw error;
  }
  if (probe.skip) return { status: 'ok', detail: `${modelId} is configured (not contacted: --skip-model)` };
  const started = Date.now();
  try {
    await generateText({
      model,
      prompt: 'Reply with the single word OK.',
      maxOutputTokens: 1,
      maxRetries: 0,
      abortSignal: signal,
    });
    return { status: 'ok', detail: `${modelId} answered in ${Date.now() - started} ms` };
  } catch (error) {
    if (signal.aborted)
      return { status: 'fail', detail: `model-unavailable: ${modelId} did not answer in time` };
    const { code, message: said } = classifyModelError(error);
    const source =
      code === 'model-auth-failed'
        ? ` (key from ${keySource(parseModelId(modelId).provider, options, probe.env)})`
        : '';
    return { status: 'fail', detail: `${code}: ${modelId}: ${said}${source}` };
  }
}

/** DOCWRIGHT_MODEL, with the environment's keys: what projects that name no model run on. */
export async function checkGlobalModel(
  defaultModel: string | undefined,
  projects: ProjectView[],
  probe: ModelProbe,
  signal: AbortSignal,
): Promise<Outcome> {
  if (defaultModel) return checkModel(defaultModel, { env: probe.env }, probe, signal);
  if (projects.length > 0 && projects.every((p) => p.model)) {
    return { status: 'ok', detail: 'DOCWRIGHT_MODEL is not set; every project checked names its own model' };
  }
  return {
    status: 'warn',
    detail:
      'DOCWRIGHT_MODEL is not set: jobs of projects that name no model will fail with model-not-configured',
  };
}

/** The model a job of the project runs on when the request names none, resolved as the runner does. */
export async function checkProjectModel(
  defaultModel: string | undefined,
  project: ProjectView,
  secrets: ProjectSecrets,
  probe: ModelProbe,
  signal: AbortSignal,
): Promise<Outcome> {
  const modelId = project.model ?? defaultModel;
  if (!modelId) {
    return {
      status: 'warn',
      detail:
        'the project names no model and DOCWRIGHT_MODEL is not set: jobs will fail with model-not-configured',
    };
  }
  const outcome = await checkModel(modelId, projectModelOptions(project, secrets, probe.env), probe, signal);
  return project.model ? outcome : { ...outcome, detail: `${outcome.detail} (from DOCWRIGHT_MODEL)` };
}

// ---------------------------------------------------------------------------------------------
// Code hosts

/** A host for probing: one retry at most, each request bounded by the check's time. */
const probeHost = (
  project: ProjectView,
  secrets: ProjectSecrets,
  timeoutMs: number,
  allowLinkLocal = false,
): CodeHost =>
  createHost(project, secrets, {
    retry: { attempts: 2, baseDelayMs: 250, maxDelayMs: 1_000 },
    timeoutMs,
    allowLinkLocal,
  });

const hostFailure = (error: unknown, redact: Redact): Outcome => ({
  status: 'fail',
  detail: redact(error instanceof HostError ? `${error.code}: ${error.message}` : message(error)),
});

/** Can the project's credentials read the repository and push to it? */
export async function checkProjectHost(
  project: ProjectView,
  secrets: ProjectSecrets,
  redact: Redact,
  timeoutMs: number,
  signal: AbortSignal,
  /** `DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL`, as the server judges the address. */
  allowLinkLocal = false,
): Promise<Outcome> {
  try {
    const access = await probeHost(project, secrets, timeoutMs, allowLinkLocal).checkAccess(signal);
    const detail = redact(access.detail);
    if (access.read && access.push) return { status: 'ok', detail };
    if (access.read) return { status: 'fail', detail: `cannot push: ${detail}` };
    return { status: 'fail', detail };
  } catch (error) {
    return hostFailure(error, redact);
  }
}

/**
 * Lists the project's ref on its git remote exactly as a run's checkout does (credentials in
 * the environment only), so that the git transport, the credentials and the ref are verified.
 */
export async function checkProjectRepository(
  project: ProjectView,
  secrets: ProjectSecrets,
  redact: Redact,
  remember: (secret: string) => Redact,
  timeoutMs: number,
  signal: AbortSignal,
  /** `DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL`, as the server judges the address. */
  allowLinkLocal = false,
): Promise<Outcome> {
  try {
    const host = probeHost(project, secrets, timeoutMs, allowLinkLocal);
    const remote = await gitAccess(host, signal, { allowLinkLocal });
    const { env } = remote;
    // A GitHub App's installation token is minted, not stored: redact it too.
    const clean = remote.token ? remember(remote.token) : redact;
    const ref = project.ref;
    let listed: string;
    try {
      listed = await git(['ls-remote', '--', remote.url, `refs/heads/${ref}`, `refs/tags/${ref}`], {
        env,
        signal,
        timeoutMs,
        redact: clean,
      });
    } catch (error) {
      const classified = classifyGitError(error);
      if (classified instanceof GitError) {
        // git's last line is often the tail of a hint ("and the repository exists."): say its first error.
        const fatal = /^(?:fatal|error): (.+)$/m.exec(classified.stderr)?.[1];
        return { status: 'fail', detail: clean(`cannot list ${remote.url}: ${fatal ?? classified.message}`) };
      }
      return hostFailure(classified, clean);
    }
    const [line] = listed.split('\n').filter((l) => l.trim() !== '');
    if (!line) {
      return {
        status: 'fail',
        detail: clean(`ref-not-found: ${JSON.stringify(ref)} is neither a branch nor a tag of ${remote.url}`),
      };
    }
    const [sha = '', name = ''] = line.split('\t');
    const kind = name.startsWith('refs/tags/') ? 'tag' : 'branch';
    return { status: 'ok', detail: clean(`${kind} ${ref} at ${remote.url} (${sha.slice(0, 7)})`) };
  } catch (error) {
    return hostFailure(error, redact);
  }
}
