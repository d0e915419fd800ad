/**
 * Stage 2, checkout: the docs repository at the run's branch (sparse: the documentation and the
 * site's configuration), and the code the agent reads beside it. Both are removed once the
 * run's outcome is recorded (the worker's deferred work).
 */
import { siteCheckoutFolders } from '../agent/site/detect.ts';
import { type Checkout, checkoutForRun } from '../git/checkout.ts';
import { type GitAccess, gitAccess } from '../git/hosts/index.ts';
import type { MirrorCache } from '../git/mirror.ts';
import { isOwnHeadBranch } from '../jobs/branches.ts';
import { openRunCode, type RunCode } from './run-code.ts';
import type { RunContext } from './run-context.ts';
import type { Resolved } from './stage-resolve.ts';

export interface Workspace {
  checkout: Checkout;
  code: RunCode;
  /** git's environment for the docs repository's remote (credentials travel only here). */
  env: GitAccess['env'];
}

export async function checkoutStage(
  ctx: RunContext,
  resolved: Resolved,
  mirrors: { cache: MirrorCache; evict: () => Promise<void> },
): Promise<Workspace> {
  const { app, job, run, tools, redact } = ctx;
  const remote = await gitAccess(ctx.host, tools.signal, ctx.gitOptions);
  // A GitHub App installation token is minted, not stored with the project.
  if (remote.token) ctx.runSecrets.add(remote.token);
  const checkout = await checkoutForRun({
    remote: remote.url,
    ref: job.source.ref,
    branch: ctx.branch,
    // An existing branch is continued only if docwright created it for this project.
    ownsBranch: () => isOwnHeadBranch(app.store.db, job.projectId, ctx.branch),
    // A job's first run, first attempt: no run can have pushed the branch yet.
    likelyNew: run.seq === 1 && run.attempt === 1,
    // A retry replaces what an earlier attempt of this run may have pushed; so does an attempt
    // whose predecessor was handed back (a shutdown, a database outage), which keeps its number.
    runId: run.id,
    tmpDir: tools.tmpDir,
    mirror: { cache: mirrors.cache, project: job.projectId },
    sparse: siteCheckoutFolders(ctx.project.settings.docsDir),
    onMirrorFailure: (error) =>
      app.logger.warn(
        { jobId: job.id, err: { message: redact(error instanceof Error ? error.message : String(error)) } },
        'the git mirror could not be used; rebuilding it or cloning instead',
      ),
    signal: tools.signal,
    env: remote.env,
    redact,
  });
  let code: RunCode | undefined;
  // Once the checkout is gone its mirror is idle, and may be evicted.
  tools.defer(async () => {
    await code?.close();
    await checkout.remove().then(mirrors.evict);
  });
  code = await openRunCode({
    checkout,
    ...(remote.env ? { env: remote.env } : {}),
    redact,
    docsDir: ctx.project.settings.docsDir,
    cache: mirrors.cache,
    project: job.projectId,
    context: resolved.codeContext,
    maxFileBytes: app.config.agentLimits.maxFileBytes,
    signal: tools.signal,
    onUnavailable: (name, error) =>
      void ctx.record('code.context_unavailable', {
        repository: name,
        message: error instanceof Error ? error.message : String(error),
      }),
  });
  ctx.runSecrets.add(...code.secrets);
  return { checkout, code, env: remote.env };
}
