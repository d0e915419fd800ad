/** Docs sites the benchmarks run on: the Mintlify fixture, and generated sites of any size. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The 317-page Mintlify fixture shared by the worktrees (absent on some machines). */
export const FIXTURE = path.resolve(import.meta.dirname, '../../shared/fixtures/mintlify-docs');

/**
 * A Mintlify site of `pages` pages in a new temporary directory: 10 tabs × groups of 20,
 * realistic page bodies. Page `i` is `tab{i % 10}/group{⌊i / 200⌋}/page-{i}.mdx`; its line
 * `l` reads "Line l of page i explains option_l and the rate limit."
 */
export function generateSite(pages: number): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'docwright-bench-site-'));
  const tabs: { tab: string; groups: { group: string; pages: string[] }[] }[] = [];
  for (let i = 0; i < pages; i++) {
    const tab = i % 10;
    const group = Math.floor(i / 200);
    const ref = `tab${tab}/group${group}/page-${i}`;
    mkdirSync(path.join(dir, `tab${tab}/group${group}`), { recursive: true });
    const body = Array.from(
      { length: 40 },
      (_, l) => `Line ${l} of page ${i} explains option_${l} and the rate limit.`,
    ).join('\n');
    writeFileSync(path.join(dir, `${ref}.mdx`), `---\ntitle: "Page ${i}"\n---\n\n${body}\n`);
    tabs[tab] ??= { tab: `Tab ${tab}`, groups: [] };
    let g = tabs[tab].groups.find((x) => x.group === `Group ${group}`);
    if (!g) {
      g = { group: `Group ${group}`, pages: [] };
      tabs[tab].groups.push(g);
    }
    g.pages.push(ref);
  }
  writeFileSync(
    path.join(dir, 'docs.json'),
    JSON.stringify({ name: 'Bench', navigation: { tabs } }, null, 2),
  );
  return dir;
}
