import { modelEnvironment, projectModelOptions, resolveModel } from '../agent/model-resolution.ts';
import { siteCheckoutFolders } from '../agent/site/detect.ts';
import { AgentFailure } from '../agent/types.ts';
import type { App } from '../app.ts';
import { checkoutForRun } from '../git/checkout.ts';
import { commitFiles, commitMessage } from '../git/commit.ts';
import { diffAgainstBase } from '../git/diff.ts';
import { createHost, gitAccess, HostError, pullRequestInput } from '../git/hosts/index.ts';
import { MirrorCache } from '../git/mirror.ts';
import { readPullRequestTemplate } from '../git/pull-request-template.ts';
import { pushBranch } from '../git/push.ts';
import { isOwnHeadBranch, recordHeadBranch } from '../jobs/branches.ts';
import { DOCS_REPOSITORY } from '../jobs/changes.ts';
import { headBranch } from '../projects/head-branch.ts';
import { redactDeep } from '../redact.ts';
import type { ModelSpec } from './agent-process.ts';
import { askOutcome } from './ask-outcome.ts';
import { jobChanges, resolveChanges } from './change-resolution.ts';
import { pullRequestBody } from './pull-request-body.ts';
import { codeContextOf, openRunCode, type ResolveCodeContext, type RunCode } from './run-code.ts';
import { processRunDirectory } from './run-directories.ts';
import { collectRunSecrets, filesAddingSecrets } from './run-secrets.ts';
import type { Runner, RunOutcome } from './runner.ts';
import { commentOnSources } from './source-comments.ts';
import { SpareAgentProcess } from './spare-agent.ts';

/** What the pipeline uses of the App. */
export type PipelineDeps = Pick<
  App,
  'config' | 'contextRepositories' | 'logger' | 'now' | 'projects' | 'store' | 'webhooks'
>;

const failed = (code: string, message: string): RunOutcome => ({
  status: 'failed',
  error: { code, message },
});

/** The run wrote a known secret into files it would commit: nothing is pushed (the files are named, never the secret). */
const secretInChange = (files: readonly string[]): RunOutcome =>
  failed(
    'secret-in-change',
    `the change would commit a secret docwright knows (a credential, key or webhook secret) in ${files.join(', ')}; nothing was pushed. Keep secrets out of the instruction and the pages the agent reads, or rotate the secret`,
  );

/**
 * The pipeline for one run: resolve changes → checkout → agent (with validation and
 * verification in its repair rounds) → commit → push → pull request; an ask run ends with the
 * agent's answer (ask-outcome.ts). Every secret the run
 * could meet (run-secrets.ts) is redacted from what it records and publishes, and a change
 * holding one is not pushed; git gets its credentials only through the environment.
 */
export interface PipelineOptions {
  /**
   * Replaces the code context of each run (tests of code reading alone). Default: the project's
   * context repositories, each at the head of the job's change of it or else at its ref, and the
   * job's changes as their hosts resolved them.
   */
  codeContext?: ResolveCodeContext;
}

export function createPipeline(app: PipelineDeps, options: PipelineOptions = {}): Runner {
  const mirrors = new MirrorCache(app.config.mirrors);
  const evictMirrors = () =>
    mirrors.evict().then(
      (removed) => {
        if (removed.length > 0) app.logger.info({ removed }, 'removed least recently used git mirrors');
      },
      (error: Error) => app.logger.warn({ err: { message: error.message } }, 'could not evict git mirrors'),
    );
  const spares = new SpareAgentProcess(app.config.agentProcess);
  const runner: Runner = async (job, run, signal, emit, defer, recordUsage) => {
    const { project, secrets, contexts } = await app.projects.getForRun(job.projectId);
    if (!job.model) {
      return failed(
        'model-not-configured',
        'no model is configured: set the project model or DOCWRIGHT_MODEL',
      );
    }
    const runSecrets = await collectRunSecrets(app, { projectId: job.projectId, secrets, contexts });
    const { redact } = runSecrets;
    const record = (type: string, data?: unknown) => emit(type, redactDeep(data, redact));
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

    // A job created with its own head branch (v1 `branch`) keeps it; later runs reuse the pushed one.
    const branch = job.branch ?? headBranch(project.settings, job.id);
    // The agent's process was started after the last run, or starts now and loads while the
    // checkout is made.
    const agent = spares.take();
    try {
      const gitOptions = { allowLinkLocal: app.config.allowLinkLocalRepositories };
      const host = createHost(project, secrets, gitOptions);
      const contextHosts = new Map(
        contexts.map((c) => [
          c.name,
          createHost({ host: c.host, repository: c.repository, apiUrl: c.apiUrl }, c.secrets, gitOptions),
        ]),
      );
      const hostOf = (name: string) => (name === DOCS_REPOSITORY ? host : contextHosts.get(name));
      // Each change is fetched before the model starts: one the host cannot give ends the run here.
      const resolved = await resolveChanges(run.changes, hostOf, signal);
      const changes = jobChanges(resolved);
      if (resolved.length > 0) await record('changes.resolved', { changes });
      const codeContext = options.codeContext
        ? await options.codeContext(job, run, signal)
        : await codeContextOf(contexts, contextHosts, resolved, signal, gitOptions);
      const remote = await gitAccess(host, signal, gitOptions);
      // A GitHub App installation token is minted, not stored with the project.
      if (remote.token) runSecrets.add(remote.token);
      const checkout = await checkoutForRun({
        remote: remote.url,
        ref: job.source.ref,
        branch,
        // An existing branch is continued only if docwright created it for this project.
        ownsBranch: () => isOwnHeadBranch(app.store.db, job.projectId, branch),
        // A job's first run, first attempt: no run can have pushed the branch yet.
        likelyNew: run.seq === 1 && run.attempt === 1,
        // A retry replaces what an earlier attempt of this run may have pushed; so does an attempt
        // whose predecessor was handed back (a shutdown, a database outage), which keeps its number.
        runId: run.id,
        tmpDir: processRunDirectory(),
        mirror: { cache: mirrors, project: job.projectId },
        // Only the documentation (and the site's configuration) is checked out.
        sparse: siteCheckoutFolders(project.settings.docsDir),
        onMirrorFailure: (error) =>
          app.logger.warn(
            {
              jobId: job.id,
              err: { message: redact(error instanceof Error ? error.message : String(error)) },
            },
            'the git mirror could not be used; rebuilding it or cloning instead',
          ),
        signal,
        env: remote.env,
        redact,
      });
      let code: RunCode | undefined;
      try {
        code = await openRunCode({
          checkout,
          ...(remote.env ? { env: remote.env } : {}),
          redact,
          docsDir: project.settings.docsDir,
          cache: mirrors,
          project: job.projectId,
          context: codeContext,
          maxFileBytes: app.config.agentLimits.maxFileBytes,
          signal,
          onUnavailable: (name, error) =>
            void record('code.context_unavailable', {
              repository: name,
              message: error instanceof Error ? error.message : String(error),
            }),
        });
        runSecrets.add(...code.secrets);
        const result = await agent.run(
          {
            root: checkout.dir,
            mode: job.mode,
            project: {
              docsDir: project.settings.docsDir,
              writable: project.settings.writable,
              readOnly: project.settings.readOnly,
            },
            instruction: run.prompt,
            history: run.history.map((h) => ({ prompt: h.prompt, summary: h.summary, error: h.error })),
            budgets: app.config.agent,
            spent: run.spent,
            limits: app.config.agentLimits,
            signal,
            emit: (event) => record(event.type, event.data),
            onUsage: recordUsage,
            code: code.description,
            codeReader: code.reader,
            changes: codeContext.changes,
            verification: { commands: project.checks, hidden: [app.config.dataDir] },
          },
          model,
        );
        await code.close();
        // An ask changes nothing: no commit, no push, no pull request (docs/questions.mdx).
        if (job.mode === 'ask')
          return askOutcome(result, redact, run.changes.length > 0 ? changes : undefined);
        const leaking = await filesAddingSecrets(checkout, result.changedFiles, runSecrets, {
          env: remote.env,
          signal,
        });
        if (leaking.length > 0) return secretInChange(leaking);
        // What the model wrote is published: its title and summary are scrubbed like its transcript.
        const title = redact(result.title);
        const summary = redact(result.summary);
        const committed = await commitFiles(checkout, {
          files: result.changedFiles,
          message: commitMessage(title, summary, run.id),
          author: { name: project.settings.authorName, email: project.settings.authorEmail },
          signal,
        });
        // The job's base is the one its first committing run started from.
        const base = run.history.find((h) => h.baseCommit)?.baseCommit ?? checkout.base;
        const takeDiff = () =>
          diffAgainstBase(checkout, { base, env: remote.env, redact, signal }).then(
            (diff) => ({ diff }),
            (error: Error) => ({ error }),
          );
        // The diff is local work, taken while the branch is pushed; once more if the push had to
        // replay the commit onto a branch that moved meanwhile.
        const diffing = committed ? takeDiff() : undefined;
        let diffed: Awaited<ReturnType<typeof takeDiff>> | undefined;
        if (committed) {
          const pushedFrom = checkout.head.commit;
          try {
            await pushBranch(checkout, { signal });
          } finally {
            diffed = await diffing;
          }
          // Whatever becomes of the run now, the branch is docwright's.
          await recordHeadBranch(app.store.db, {
            projectId: job.projectId,
            branch,
            jobId: job.id,
            at: app.now(),
          });
          await record('git.pushed', { branch });
          if (checkout.head.commit !== pushedFrom) diffed = await takeDiff();
        }
        if (diffed && 'error' in diffed)
          // The pushed work stands without its diff (the dashboard then says so).
          await record('git.diff_failed', { message: redact(diffed.error.message) });
        const diff =
          diffed && 'diff' in diffed
            ? { ...diffed.diff, text: runSecrets.redactShown(diffed.diff.text) }
            : undefined;
        // A retried or follow-up run reuses the open pull request (ensurePullRequest looks it up first).
        const pull =
          committed || checkout.existing
            ? await host.ensurePullRequest(
                pullRequestInput(project, {
                  branch,
                  base: job.source.ref,
                  title,
                  body: redact(
                    pullRequestBody({
                      summary,
                      instruction: run.prompt,
                      jobId: job.id,
                      changes,
                      template: await readPullRequestTemplate(checkout.dir, checkout.base, {
                        env: remote.env,
                        signal,
                        redact,
                      }).catch(() => null),
                      checks: result.checks,
                    }),
                  ),
                  draft: job.draft,
                }),
                signal,
              )
            : null;
        if (pull)
          await record('pull_request.ready', { url: pull.url, number: pull.number, created: pull.created });
        if (project.settings.commentOnSource)
          await commentOnSources(resolved, hostOf, {
            prLink: pull?.url ?? null,
            branch: committed || checkout.existing ? branch : null,
            summary,
            jobId: job.id,
            record,
            redact,
            signal,
          });
        return {
          status: 'completed',
          prLink: pull?.url ?? null,
          branch: committed || checkout.existing ? branch : null,
          summary,
          diff,
          ...(run.changes.length > 0 && { changes: redactDeep(changes, redact) }),
          checks: redactDeep(result.checks, redact),
        };
      } finally {
        // Once the checkout is gone its mirror is idle, and may be evicted.
        const opened = code;
        defer(async () => {
          await opened?.close();
          await checkout.remove().then(evictMirrors);
        });
      }
    } catch (error) {
      if (error instanceof AgentFailure && error.checks)
        return { ...failed(error.code, redact(error.message)), checks: redactDeep(error.checks, redact) };
      if (error instanceof AgentFailure || error instanceof HostError)
        return failed(error.code, redact(error.message));
      throw redactDeep(error, redact);
    } finally {
      agent.kill();
      // Once the outcome is recorded: the next run's process starts while this worker is idle.
      defer(async () => spares.replenish());
    }
  };
  runner.close = () => spares.close();
  return runner;
}
