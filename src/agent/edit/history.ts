/**
 * What files held before the edits of this run, so that an old_string copied before an earlier
 * edit (stale) is told apart from one that was never in the file: the model is then told to
 * read the file again rather than to copy more carefully.
 */
import type { Workspace } from '../workspace.ts';

/** Earlier versions kept per file, and characters kept per run (the oldest are forgotten first). */
const MAX_VERSIONS = 4;
const MAX_CHARS = 8 * 1024 * 1024;

interface History {
  versions: Map<string, string[]>;
  chars: number;
}

const histories = new WeakMap<Workspace, History>();

/** Records `content` as what `relative` held before an edit. */
export function rememberVersion(workspace: Workspace, relative: string, content: string): void {
  let history = histories.get(workspace);
  if (history === undefined) {
    history = { versions: new Map(), chars: 0 };
    histories.set(workspace, history);
  }
  if (content.length > MAX_CHARS) return;
  const versions = history.versions.get(relative) ?? [];
  versions.unshift(content);
  history.versions.set(relative, versions);
  history.chars += content.length;
  if (versions.length > MAX_VERSIONS) history.chars -= versions.pop()!.length;
  // Over the run's budget: drop the oldest version of whichever file has the most.
  while (history.chars > MAX_CHARS) {
    let longest: string[] | undefined;
    for (const list of history.versions.values())
      if (!longest || list.length > longest.length) longest = list;
    if (!longest || longest.length === 0) break;
    history.chars -= longest.pop()!.length;
  }
}

/** What `relative` held before the edits of this run, newest first. */
export function earlierVersions(workspace: Workspace, relative: string): readonly string[] {
  return histories.get(workspace)?.versions.get(relative) ?? [];
}
