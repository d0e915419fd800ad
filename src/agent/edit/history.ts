/**
 * What files held before the edits of this run, so that an old_string copied before an earlier
 * edit (stale) is told apart from one that was never in the file: the model is then told to
 * read the file again rather than to copy more carefully.
 */

/** Earlier versions kept per file, and characters kept per run (the oldest are forgotten first). */
const MAX_VERSIONS = 4;
const MAX_CHARS = 8 * 1024 * 1024;

/** A run's earlier versions of the files it edited (the workspace's `editHistory`). */
export class EditHistory {
  readonly #versions = new Map<string, string[]>();
  #chars = 0;

  /** Records `content` as what `relative` held before an edit. */
  remember(relative: string, content: string): void {
    if (content.length > MAX_CHARS) return;
    const versions = this.#versions.get(relative) ?? [];
    versions.unshift(content);
    this.#versions.set(relative, versions);
    this.#chars += content.length;
    if (versions.length > MAX_VERSIONS) this.#chars -= versions.pop()!.length;
    // Over the run's budget: drop the oldest version of whichever file has the most.
    while (this.#chars > MAX_CHARS) {
      let longest: string[] | undefined;
      for (const list of this.#versions.values())
        if (!longest || list.length > longest.length) longest = list;
      if (!longest || longest.length === 0) break;
      this.#chars -= longest.pop()!.length;
    }
  }

  /** What `relative` held before the edits of this run, newest first. */
  earlier(relative: string): readonly string[] {
    return this.#versions.get(relative) ?? [];
  }
}
