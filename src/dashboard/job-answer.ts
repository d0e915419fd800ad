/**
 * The answer of an ask job on its page (docs/questions.mdx): the text as the agent wrote it, and
 * each citation as `path:start-end`, linked to those lines on the host's web page of the
 * repository when there is one (GitHub, GitLab, Gitea/Forgejo; not a local repository, and not a
 * context repository's file, whose address the page does not know).
 */
import type { AgentJob } from '../jobs/agent-job.ts';
import type { Citation } from '../jobs/job-mode.ts';
import type { ProjectView } from '../projects/projects.ts';
import { isWebLink } from '../web-link.ts';
import { type Html, html } from './html.ts';
import { markdownHtml } from './markdown.ts';

/** Where a citation's lines are on the web, or null. */
export function citationHref(
  project: Pick<ProjectView, 'host' | 'repository'>,
  ref: string,
  citation: Citation,
): string | null {
  if (citation.path.startsWith('_context/') || !isWebLink(project.repository)) return null;
  const base = project.repository.replace(/\/+$/, '');
  const path = citation.path.split('/').map(encodeURIComponent).join('/');
  const branch = ref.split('/').map(encodeURIComponent).join('/');
  const { startLine: start, endLine: end } = citation;
  switch (project.host) {
    case 'github':
      return `${base}/blob/${branch}/${path}#L${start}-L${end}`;
    case 'gitlab':
      return `${base}/-/blob/${branch}/${path}#L${start}-${end}`;
    case 'gitea':
      return `${base}/src/branch/${branch}/${path}#L${start}-L${end}`;
    default:
      return null;
  }
}

const citationName = (c: Citation) => `${c.path}:${c.startLine}-${c.endLine}`;

/** The answer section's content: the answer and its sources, or what stands in for them. */
export function jobAnswer(job: AgentJob, project: Pick<ProjectView, 'host' | 'repository'>): Html {
  if (job.answer === null) {
    const pending =
      job.status === 'active' ? 'The answer appears here when the agent has given it.' : 'No answer.';
    return html`<p class="muted">${pending}</p>`;
  }
  const stale =
    job.status === 'active' &&
    html`<p class="small muted">The answer to the previous question; a new one is on its way.</p>`;
  return html`${stale}<div class="answer">${markdownHtml(job.answer)}</div>
<h3 id="sources-heading">Sources</h3>
${
  job.citations.length === 0
    ? html`<p class="muted">The answer cites no file.</p>`
    : html`<ul class="citations" aria-labelledby="sources-heading">${job.citations.map((c) => {
        const href = citationHref(project, job.source.ref, c);
        return html`<li>${href ? html`<a href="${href}" rel="noreferrer"><code>${citationName(c)}</code></a>` : html`<code>${citationName(c)}</code>`}</li>`;
      })}</ul>`
}`;
}
