import parseDiff from 'parse-diff';
import type { RunDiffRow } from '../jobs/job-history.ts';
import { type Html, html } from './html.ts';

/** Files shown expanded; past this many, files start collapsed (each is still one click away). */
const OPEN_FILES = 20;

const fileName = (file: parseDiff.File): string => {
  const from = file.from && file.from !== '/dev/null' ? file.from : undefined;
  const to = file.to && file.to !== '/dev/null' ? file.to : undefined;
  if (from && to && from !== to) return `${from} → ${to}`;
  return to ?? from ?? 'unknown file';
};

const fileState = (file: parseDiff.File) => (file.new ? 'added' : file.deleted ? 'deleted' : undefined);

/**
 * The stored diff of a job, per file, with line numbers (docs/dashboard.mdx); `rawHref` links the raw diff
 * (the dashboard has one; a report saved as a file has not).
 */
export function renderDiff(diff: RunDiffRow | undefined, options: { rawHref?: string }): Html {
  if (!diff) {
    return html`<p class="empty">No diff yet: the agent has not committed anything on this job.</p>`;
  }
  const text = diff.truncated ? diff.diff.replace(/^# docwright: diff truncated.*\n?$/m, '') : diff.diff;
  const files = parseDiff(text);
  return html`<p class="small muted">${diff.files} file${diff.files === 1 ? '' : 's'} changed,
  <span class="add-count">+${diff.additions}</span> <span class="del-count">−${diff.deletions}</span>
  against <code>${diff.base_commit.slice(0, 10)}</code>${options.rawHref && html` · <a href="${options.rawHref}">Raw diff</a>`}</p>
${diff.truncated ? html`<div class="alert" role="note">The diff is longer than 1 MiB; only its first part is shown. The pull request has all of it.</div>` : ''}
${files.map(
  (file, index) => html`<details class="diff-file" ${index < OPEN_FILES && html`open`}>
  <summary><span>${fileName(file)}${fileState(file) && html` <span class="muted">(${fileState(file)})</span>`}</span>
    <span class="counts"><span class="add-count">+${file.additions}</span> <span class="del-count">−${file.deletions}</span></span></summary>
  ${
    file.chunks.length === 0
      ? html`<p class="small muted pad">No text changes (binary file or mode change).</p>`
      : html`<div class="diff" role="group" aria-label="Changes to ${fileName(file)}">${file.chunks.map(
          (
            chunk,
          ) => html`<div class="line hunk"><span class="ln"></span><span class="ln"></span><span class="code">${chunk.content}</span></div>
      ${chunk.changes.map((change) =>
        change.type === 'add'
          ? html`<div class="line add"><span class="ln"></span><span class="ln">${change.ln}</span><span class="code"><span class="skip">added: </span>${change.content}</span></div>`
          : change.type === 'del'
            ? html`<div class="line del"><span class="ln">${change.ln}</span><span class="ln"></span><span class="code"><span class="skip">removed: </span>${change.content}</span></div>`
            : html`<div class="line"><span class="ln">${change.ln1}</span><span class="ln">${change.ln2}</span><span class="code">${change.content}</span></div>`,
      )}`,
        )}</div>`
  }
</details>`,
)}`;
}
