/**
 * The confirm step before a running job is archived (issue 35: Archive cancelled a running job
 * without asking). A form of its own, so that it works without JavaScript: the job page's
 * Archive posts without `confirm`, and for an active job the answer is this page, whose button
 * posts again with `confirm=yes`.
 */
import type { AgentJob } from '../jobs/agent-job.ts';
import { type Html, html } from './html.ts';
import { csrfField } from './layout.ts';
import type { SignedIn } from './session.ts';

export function archiveConfirmation(
  project: { id: string; name: string },
  job: Pick<AgentJob, 'id'>,
  title: string,
  signedIn: SignedIn,
): Html {
  const base = `/projects/${project.id}/jobs/${job.id}`;
  return html`<div class="crumbs"><a href="/">Projects</a> / <a href="/projects/${project.id}/jobs">${project.name}</a> / <a href="${base}" class="mono">${job.id}</a> / Archive</div>
<section class="panel" aria-labelledby="archive-heading">
  <h1 id="archive-heading">Archive a running job?</h1>
  <p>“${title}” is running. Archiving it cancels its run now: the agent stops, and nothing more is pushed. What it pushed already stays on its branch.</p>
  <div class="actions">
    <form method="post" action="${base}/archive">${csrfField(signedIn)}<input type="hidden" name="confirm" value="yes"><button type="submit" class="danger">Cancel the run and archive</button></form>
    <a href="${base}" class="button">Keep it running</a>
  </div>
</section>`;
}
