/**
 * The `snippets` check on a Mintlify site: every `import … from '/snippets/…'` (or a relative
 * path) of a changed page names a file that exists. Package imports are left alone.
 */
import path from 'node:path';
import { joinRel, relativeTo } from '../site/repo-files.ts';
import { similarFiles } from '../suggestions.ts';
import { changedPages } from './mintlify-scope.ts';
import { type MintlifySite, mintlifySite } from './mintlify-site.ts';
import type { Check, CheckInput, CheckOutcome, Finding } from './types.ts';

const IMPORT_SOURCE =
  /\b(?:import|export)\b[^'"]*?\bfrom\s*(['"])([^'"\n]+)\1|\bimport\s*(['"])([^'"\n]+)\3/g;
/** Extensions an import without one may mean. */
const IMPLIED_EXTENSIONS = ['', '.mdx', '.md', '.jsx', '.js', '.tsx', '.ts'];

export const mintlifySnippetsCheck: Check = {
  name: 'snippets',
  async run(input: CheckInput): Promise<CheckOutcome> {
    const site = await mintlifySite(input.tree, input.docsDir);
    if (!site) return { findings: [], skipped: 'not a Mintlify site (no docs.json or mint.json)' };
    const findings: Finding[] = [];
    let imports = 0;
    for (const file of changedPages(site, input.changes)) {
      const tree = (await site.page(file))?.tree;
      if (!tree) continue;
      for (const node of tree.children) {
        if (node.type !== 'mdxjsEsm') continue;
        for (const match of node.value.matchAll(IMPORT_SOURCE)) {
          const source = match[2] ?? match[4]!;
          if (!/^[./]/.test(source)) continue;
          imports++;
          const target = importTarget(site, file, source);
          if (target === null || IMPLIED_EXTENSIONS.some((ext) => site.files.has(target + ext))) continue;
          const line =
            (node.position?.start.line ?? 1) + node.value.slice(0, match.index).split('\n').length - 1;
          findings.push({
            path: file,
            line,
            message: missingImport(site, source, target),
            level: 'error',
            rule: 'snippets',
          });
        }
      }
    }
    return { findings, counts: { imports } };
  },
};

/** The repository-relative file an import names (`/…` from the site folder, `./…` from the page's), or null outside the site. */
function importTarget(site: MintlifySite, file: string, source: string): string | null {
  const rel = source.startsWith('/')
    ? source.slice(1)
    : path.posix.join(path.posix.dirname(relativeTo(site.contentDir, file) ?? file), source);
  const normal = path.posix.normalize(rel);
  return normal.startsWith('../') ? null : joinRel(site.contentDir, normal);
}

function missingImport(site: MintlifySite, source: string, target: string): string {
  const snippets = [...site.files].filter((f) => /\.(mdx?|jsx?|tsx?)$/.test(f) && f.includes('snippets/'));
  const near = similarFiles(target, snippets, 1, Date.now() + 50)[0];
  const hint = near
    ? `did you mean "/${relativeTo(site.contentDir, near) ?? near}"?`
    : `create ${target} or fix the path`;
  return `import from "${source}" finds no file: ${hint}`;
}
