/** What a remote says of its refs: `git ls-remote`, read once per question. */
import { type GitOptions, git } from './git.ts';

export interface RemoteRefs {
  /** Which of the refs asked for exist (full names: `refs/heads/…`, `refs/tags/…`). */
  refs: Set<string>;
  /** The branch the remote's HEAD names (its default branch), or null when it names none that exists. */
  defaultBranch: string | null;
}

/** Lists which of `refs` exist on `remote`, and its default branch, in one `git ls-remote`. */
export async function listRemoteRefs(remote: string, refs: string[], opts: GitOptions): Promise<RemoteRefs> {
  const listed = await git(['ls-remote', '--symref', '--', remote, 'HEAD', ...refs], opts);
  const found = new Set<string>();
  let defaultBranch: string | null = null;
  for (const line of listed.split('\n')) {
    const symref = /^ref: refs\/heads\/(\S+)\tHEAD$/.exec(line);
    if (symref) defaultBranch = symref[1]!;
    else {
      const name = line.split('\t')[1]?.trim();
      if (name) found.add(name);
    }
  }
  return { refs: found, defaultBranch };
}
