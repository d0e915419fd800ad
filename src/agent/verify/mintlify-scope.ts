/**
 * Which pages of a Mintlify site a run answers for: the pages it changed, and the pages that
 * link to a page it moved or deleted. The second set is found by a text search for the old
 * page's name over the pages' text; only the pages that mention it are parsed.
 */
import path from 'node:path';
import { normalizeRel } from '../site/repo-files.ts';
import { isMintlifyPage, type MintlifySite, refOfPage } from './mintlify-site.ts';
import type { RunChanges } from './types.ts';

/** Pages read at once while looking for mentions of a moved or deleted page. */
const READ_AT_ONCE = 32;

/** The changed pages that exist in this tree, sorted. */
export function changedPages(site: MintlifySite, changes: RunChanges): string[] {
  return [...new Set(changes.changed.map(normalizeRel))]
    .filter((f) => site.files.has(f) && isMintlifyPage(site, f))
    .sort();
}

/** Pages the run moved or deleted (repository-relative). */
export function removedPages(site: MintlifySite, changes: RunChanges): string[] {
  const removed = new Set([...changes.deleted, ...changes.moved.map((m) => m.from)].map(normalizeRel));
  return [...removed].filter((f) => isMintlifyPage(site, f)).sort();
}

/** Changed pages, then the other pages whose text names a moved or deleted page. */
export async function pagesInScope(
  site: MintlifySite,
  changes: RunChanges,
  signal: AbortSignal,
): Promise<string[]> {
  const scope = changedPages(site, changes);
  const names = removedPages(site, changes).map((file) => {
    const ref = refOfPage(site, file);
    // A folder's index page is linked by the folder's name.
    return path.posix.basename(ref) === 'index'
      ? path.posix.basename(path.posix.dirname(ref))
      : path.posix.basename(ref);
  });
  const usable = names.filter((n) => n !== '' && n !== '.');
  if (usable.length === 0) return scope;
  // The name as a whole path segment: "page-4" is not mentioned by "page-40".
  const escaped = usable.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const mention = new RegExp(`(?<![\\w.-])(?:${escaped.join('|')})(?![\\w-]|\\.(?!mdx?\\b))`);
  const inScope = new Set(scope);
  const others = [...site.files].filter((f) => !inScope.has(f) && isMintlifyPage(site, f));
  // Read a few at a time: the reads wait on the disk, not on each other.
  for (let i = 0; i < others.length && !signal.aborted; i += READ_AT_ONCE) {
    const batch = others.slice(i, i + READ_AT_ONCE);
    const texts = await Promise.all(batch.map((f) => site.text(f)));
    for (const [j, text] of texts.entries()) if (text !== null && mention.test(text)) inScope.add(batch[j]!);
  }
  return [...inScope].sort();
}
