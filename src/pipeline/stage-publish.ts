/**
 * Stage 5, publish: the change committed and pushed to the run's branch, its diff kept for the
 * dashboard, the pull request opened (or the open one reused), and the source pull requests
 * told where their documentation is. What the model wrote is scrubbed before it is published.
 */
import type { AgentResult } from '../agent/types.ts';
import { commitFiles, commitMessage } from '../git/commit.ts';
import { diffAgainstBase } from '../git/diff.ts';
import { pullRequestInput } from '../git/hosts/index.ts';
import { readPullRequestTemplate } from '../git/pull-request-template.ts';
import { pushBranch } from '../git/push.ts';
import { recordHeadBranch } from '../jobs/branches.ts';
import { redactDeep } from '../redact.ts';
import { pullRequestBody } from './pull-request-body.ts';
import type { RunContext } from './run-context.ts';
import type { RunOutcome } from './runner.ts';
import { commentOnSources } from './source-comments.ts';
import type { Workspace } from './stage-checkout.ts';
import type { Resolved } from './stage-resolve.ts';

type Diff = NonNullable<Extract<RunOutcome, { status: 'completed' }>['diff']>;

export async function publishStage(
  ctx: RunContext,
  resolved: Resolved,
  workspace: Workspace,
  result: AgentResult,
): Promise<RunOutcome> {
  const { job, run, redact } = ctx;
  const title = redact(result.title);
  const summary = redact(result.summary);
  const { committed, diff } = await commitAndPush(ctx, workspace, result, { title, summary });
  const { checkout } = workspace;
  const branch = committed || checkout.existing ? ctx.branch : null;
  // A retried or follow-up run reuses the open pull request (ensurePullRequest looks it up first).
  const pull = branch ? await openPullRequest(ctx, resolved, workspace, result, { title, summary }) : null;
  if (pull)
    await ctx.record('pull_request.ready', { url: pull.url, number: pull.number, created: pull.created });
  if (ctx.project.settings.commentOnSource)
    await commentOnSources(resolved.changes, ctx.hostOf, {
      prLink: pull?.url ?? null,
      branch,
      summary,
      jobId: job.id,
      record: ctx.record,
      redact,
      signal: ctx.tools.signal,
    });
  return {
    status: 'completed',
    prLink: pull?.url ?? null,
    branch,
    summary,
    diff,
    ...(run.changes.length > 0 && { changes: redactDeep(resolved.jobChanges, redact) }),
    checks: redactDeep(result.checks, redact),
  };
}

/** Commits the change and pushes it; the diff against the job's base is taken while the push runs. */
async function commitAndPush(
  ctx: RunContext,
  workspace: Workspace,
  result: AgentResult,
  text: { title: string; summary: string },
): Promise<{ committed: boolean; diff: Diff | undefined }> {
  const { app, job, run, redact, tools } = ctx;
  const { checkout, env } = workspace;
  const { signal } = tools;
  const committed = await commitFiles(checkout, {
    files: result.changedFiles,
    message: commitMessage(text.title, text.summary, run.id),
    author: { name: ctx.project.settings.authorName, email: ctx.project.settings.authorEmail },
    signal,
  });
  if (!committed) return { committed: false, diff: undefined };
  // The job's base is the one its first committing run started from.
  const base = run.history.find((h) => h.baseCommit)?.baseCommit ?? checkout.base;
  const takeDiff = () =>
    diffAgainstBase(checkout, { base, env, redact, signal }).then(
      (diff) => ({ diff }),
      (error: Error) => ({ error }),
    );
  // The diff is local work, taken while the branch is pushed; once more if the push had to
  // replay the commit onto a branch that moved meanwhile.
  const diffing = takeDiff();
  const pushedFrom = checkout.head.commit;
  let diffed: Awaited<ReturnType<typeof takeDiff>>;
  try {
    await pushBranch(checkout, { signal });
  } finally {
    diffed = await diffing;
  }
  // Whatever becomes of the run now, the branch is docwright's.
  await recordHeadBranch(app.store.db, {
    projectId: job.projectId,
    branch: ctx.branch,
    jobId: job.id,
    at: app.now(),
  });
  await ctx.record('git.pushed', { branch: ctx.branch });
  if (checkout.head.commit !== pushedFrom) diffed = await takeDiff();
  if ('error' in diffed) {
    // The pushed work stands without its diff (the dashboard then says so).
    await ctx.record('git.diff_failed', { message: redact(diffed.error.message) });
    return { committed: true, diff: undefined };
  }
  return { committed: true, diff: { ...diffed.diff, text: ctx.runSecrets.redactShown(diffed.diff.text) } };
}

function openPullRequest(
  ctx: RunContext,
  resolved: Resolved,
  workspace: Workspace,
  result: AgentResult,
  text: { title: string; summary: string },
) {
  const { job, run, redact, tools } = ctx;
  const { checkout, env } = workspace;
  return readPullRequestTemplate(checkout.dir, checkout.base, { env, signal: tools.signal, redact })
    .catch(() => null)
    .then((template) =>
      ctx.host.ensurePullRequest(
        pullRequestInput(ctx.project, {
          branch: ctx.branch,
          base: job.source.ref,
          title: text.title,
          body: redact(
            pullRequestBody({
              summary: text.summary,
              instruction: run.prompt,
              jobId: job.id,
              changes: resolved.jobChanges,
              template,
              checks: result.checks,
            }),
          ),
          draft: job.draft,
        }),
        tools.signal,
      ),
    );
}
