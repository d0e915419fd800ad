// A Mintlify site whose navigation is split into `$ref` files: a new page is named in the file of
// its section, so those files are writable wherever docs.json is — and only there.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { detectSite } from '../../src/agent/site/detect.ts';
import { DEFAULT_LIMITS, ToolError } from '../../src/agent/types.ts';
import { Workspace } from '../../src/agent/workspace.ts';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function site(): string {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'docwright-nav-files-')));
  dirs.push(root);
  const files: Record<string, string> = {
    'docs.json': JSON.stringify({ name: 'x', navigation: { groups: [{ $ref: 'nav/guides.json' }] } }),
    'nav/guides.json': JSON.stringify({ group: 'Guides', pages: ['index'] }),
    'index.mdx': '---\ntitle: Home\n---\n',
    'nav/other.json': '{}',
  };
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  return root;
}

test('the $ref navigation files are writable where docs.json is, and no other JSON file', async () => {
  const root = site();
  const siteInfo = await detectSite(root, '.');
  assert.deepEqual(siteInfo.navigationFiles, ['nav/guides.json']);
  const workspace = await Workspace.open(
    root,
    { docsDir: '.', writable: ['**/*.mdx', 'docs.json'] },
    DEFAULT_LIMITS,
  );
  assert.throws(
    () => workspace.locate('nav/guides.json', { write: true }),
    ToolError,
    'not before the site is read',
  );
  workspace.allowNavigationFiles(siteInfo.configFile!, siteInfo.navigationFiles!);
  assert.equal(workspace.locate('nav/guides.json', { write: true }).relative, 'nav/guides.json');
  assert.throws(() => workspace.locate('nav/other.json', { write: true }), ToolError);

  const strict = await Workspace.open(root, { docsDir: '.', writable: ['**/*.mdx'] }, DEFAULT_LIMITS);
  strict.allowNavigationFiles(siteInfo.configFile!, siteInfo.navigationFiles!);
  assert.throws(
    () => strict.locate('nav/guides.json', { write: true }),
    ToolError,
    'a project that keeps docs.json read-only keeps its navigation files read-only',
  );
});
