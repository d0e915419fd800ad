import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, beforeEach, describe, test } from 'node:test';
import { AGENT_TOOLS, runTool } from '../../src/agent/tools/index.ts';
import type { ToolContext } from '../../src/agent/tools/tool.ts';
import { type AgentLimits, DEFAULT_LIMITS, ToolError } from '../../src/agent/types.ts';
import { Workspace } from '../../src/agent/workspace.ts';

const PROJECT = { docsDir: 'docs', writable: ['**/*.md', '**/*.mdx', 'docs.json'] };
const temporary: string[] = [];
after(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  temporary.push(dir);
  return dir;
}

function put(root: string, files: Record<string, string>): void {
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), content);
  }
}

interface Fixture {
  root: string;
  outside: string;
  workspace: Workspace;
  context: ToolContext;
  /** Every file and link under the repository and the outside directory, with a hash of its content. */
  snapshot(): Map<string, string>;
}

/**
 * A git repository with docs, a workflow and two planted symbolic links that
 * point outside it, plus the outside directory they point to.
 */
async function fixture(limits: AgentLimits = DEFAULT_LIMITS): Promise<Fixture> {
  const root = tempDir('docwright-guard-');
  const outside = tempDir('docwright-outside-');
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: root });
  put(root, {
    'README.md': '# Project\n',
    'docs.json': '{}\n',
    'src/app.ts': 'export {};\n',
    '.github/workflows/ci.yml': 'on: push\n',
    'docs/index.mdx': '# Welcome\n',
    'docs/guide.md': '# Guide\n',
  });
  put(outside, { 'secret.txt': 'top secret\n', 'page.mdx': '# Outside\n' });
  symlinkSync(outside, path.join(root, 'docs', 'link'));
  symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'docs', 'evil.mdx'));
  const workspace = await Workspace.open(root, PROJECT, limits);
  const context: ToolContext = { root, signal: new AbortController().signal, workspace };
  const snapshot = () => {
    const entries = new Map<string, string>();
    const visit = (dir: string, label: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        const key = `${label}/${entry.name}`;
        if (entry.isSymbolicLink()) entries.set(key, `link:${readlinkSync(full)}`);
        else if (entry.isDirectory()) visit(full, key);
        else entries.set(key, createHash('sha256').update(readFileSync(full)).digest('hex'));
      }
    };
    visit(root, 'repo');
    visit(outside, 'outside');
    return entries;
  };
  return { root, outside, workspace, context, snapshot };
}

const tool = (name: string) => {
  const found = AGENT_TOOLS.find((t) => t.name === name);
  assert.ok(found, name);
  return found;
};

/** Runs a tool expecting a refusal; returns the message. */
async function refused(f: Fixture, name: string, input: unknown): Promise<string> {
  try {
    const output = await runTool(tool(name), input, f.context);
    assert.fail(`${name} ${JSON.stringify(input)} should have been refused, got: ${output}`);
  } catch (error) {
    assert.ok(error instanceof ToolError, `expected a ToolError, got ${String(error)}`);
    return error.message;
  }
}

function guardError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ToolError, `expected a ToolError, got ${String(error)}`);
    return error.message;
  }
  assert.fail('expected a ToolError');
}

describe('path guard: the syntax of a path', () => {
  let f: Fixture;
  beforeEach(async () => {
    f = await fixture();
  });

  test('relative paths resolve under the real root, normalised', () => {
    const real = realpathSync(f.root);
    assert.equal(f.workspace.root, real);
    assert.equal(f.workspace.resolve('docs/index.mdx'), path.join(real, 'docs', 'index.mdx'));
    assert.deepEqual(f.workspace.locate('./docs//index.mdx'), {
      absolute: path.join(real, 'docs', 'index.mdx'),
      relative: 'docs/index.mdx',
    });
    assert.equal(f.workspace.locate('.').relative, '.');
    assert.equal(f.workspace.locate('docs/new/page.mdx', { write: true }).relative, 'docs/new/page.mdx');
  });

  const cases: [string, string][] = [
    ['../x', 'Path "../x" contains "..": paths must stay inside the repository.'],
    ['docs/../../x', 'Path "docs/../../x" contains "..": paths must stay inside the repository.'],
    ['docs/../README.md', 'Path "docs/../README.md" contains "..": paths must stay inside the repository.'],
    [
      '/etc/passwd',
      'Path "/etc/passwd" is absolute; use a path relative to the repository root, such as "docs/index.mdx".',
    ],
    ['docs/a\0.mdx', 'Path contains a NUL character.'],
    [
      'docs\\index.mdx',
      'Path "docs\\index.mdx" contains a backslash; use forward slashes ("docs/page.mdx").',
    ],
    [
      '..\\..\\etc\\passwd',
      'Path "..\\..\\etc\\passwd" contains a backslash; use forward slashes ("docs/page.mdx").',
    ],
    ['.git/config', 'Path ".git/config" is inside .git/, which the agent may not access.'],
    ['.GIT/config', 'Path ".GIT/config" is inside .GIT/, which the agent may not access.'],
    ['docs/.git/HEAD', 'Path "docs/.git/HEAD" is inside .git/, which the agent may not access.'],
    [
      '.github/workflows/x.yml',
      'Path ".github/workflows/x.yml" is inside .github/, which the agent may not access.',
    ],
    [
      'docs/link/secret.txt',
      'Path "docs/link/secret.txt" goes through a symbolic link (docs/link); symbolic links are not followed.',
    ],
    ['docs/link', 'Path "docs/link" is a symbolic link; symbolic links are not followed.'],
    ['docs/evil.mdx', 'Path "docs/evil.mdx" is a symbolic link; symbolic links are not followed.'],
    ['docs/index.mdx/x', 'Path "docs/index.mdx/x": docs/index.mdx is a file, not a directory.'],
  ];
  for (const [input, message] of cases) {
    test(`refuses ${JSON.stringify(input)} for reading and writing`, () => {
      assert.equal(
        guardError(() => f.workspace.resolve(input)),
        message,
      );
      assert.equal(
        guardError(() => f.workspace.resolve(input, { write: true })),
        message,
      );
    });
  }
});

describe('path guard: writes', () => {
  test('only inside docsDir and matching a writable glob', async () => {
    const f = await fixture();
    assert.equal(
      guardError(() => f.workspace.resolve('README.md', { write: true })),
      'Cannot write "README.md": writes are limited to the documentation directory "docs/".',
    );
    assert.equal(
      guardError(() => f.workspace.resolve('docs.json', { write: true })),
      'Cannot write "docs.json": writes are limited to the documentation directory "docs/".',
    );
    assert.equal(
      guardError(() => f.workspace.resolve('docs/script.js', { write: true })),
      'Cannot write "docs/script.js": it matches none of the writable patterns (**/*.md, **/*.mdx, docs.json).',
    );
    assert.equal(
      guardError(() => f.workspace.resolve('docs', { write: true })),
      'Cannot write "docs": it matches none of the writable patterns (**/*.md, **/*.mdx, docs.json).',
    );
    assert.equal(
      guardError(() => f.workspace.resolve('.', { write: true })),
      'Cannot write the repository root; name a file.',
    );
    // Reading outside docsDir is fine.
    assert.equal(f.workspace.locate('README.md').relative, 'README.md');
    // A writable glob matches the path relative to the root or to docsDir: docs/docs.json is the site config.
    assert.equal(f.workspace.locate('docs/docs.json', { write: true }).relative, 'docs/docs.json');
    assert.equal(f.workspace.locate('docs/a/b.mdx', { write: true }).relative, 'docs/a/b.mdx');
  });

  test('with docsDir ".", the whole repository is the documentation directory', async () => {
    const root = tempDir('docwright-guard-');
    const workspace = await Workspace.open(root, { docsDir: '.', writable: ['**/*.mdx'] }, DEFAULT_LIMITS);
    assert.equal(workspace.locate('a/b.mdx', { write: true }).relative, 'a/b.mdx');
    assert.equal(
      guardError(() => workspace.resolve('a/b.ts', { write: true })),
      'Cannot write "a/b.ts": it matches none of the writable patterns (**/*.mdx).',
    );
  });

  test('a docsDir that leaves the repository is a configuration error', async () => {
    await assert.rejects(
      Workspace.open(tempDir('docwright-guard-'), { docsDir: '../x', writable: ['**'] }, DEFAULT_LIMITS),
      /Invalid docsDir "..\/x"/,
    );
  });

  test('size caps per file and per run', async () => {
    const f = await fixture({ ...DEFAULT_LIMITS, maxFileBytes: 1000, maxTotalWriteBytes: 2500 });
    assert.equal(
      guardError(() => f.workspace.resolve('docs/a.mdx', { write: true, bytes: 1001 })),
      'Cannot write "docs/a.mdx": the file would be 1001 bytes, over the limit of 1000 bytes per file.',
    );
    f.workspace.writeFile('docs/a.mdx', 'a'.repeat(1000));
    f.workspace.writeFile('docs/b.mdx', 'b'.repeat(1000));
    assert.equal(f.workspace.bytesWritten, 2000);
    const before = f.snapshot();
    assert.equal(
      await refused(f, 'write_file', { path: 'docs/c.mdx', content: 'c'.repeat(501) }),
      'Cannot write "docs/c.mdx": this run has written 2,000 bytes; 501 bytes more would exceed the limit of 2.4 KiB per run.',
    );
    assert.deepEqual(f.snapshot(), before);
  });
});

describe('path guard: the tools refuse and change nothing', () => {
  let f: Fixture;
  let before: Map<string, string>;
  beforeEach(async () => {
    f = await fixture();
    before = f.snapshot();
  });
  const unchanged = () => assert.deepEqual(f.snapshot(), before);

  test('reading through a planted symlink', async () => {
    assert.match(await refused(f, 'read_file', { path: 'docs/evil.mdx' }), /is a symbolic link/);
    assert.match(
      await refused(f, 'read_file', { path: 'docs/link/secret.txt' }),
      /goes through a symbolic link/,
    );
    assert.match(await refused(f, 'list_files', { path: 'docs/link' }), /is a symbolic link/);
    assert.match(await refused(f, 'search', { pattern: 'secret', path: 'docs/link' }), /is a symbolic link/);
    // Listing and searching the parent do not follow the links either.
    const listing = await runTool(tool('list_files'), { path: 'docs' }, f.context);
    assert.equal(listing, 'docs/guide.md\ndocs/index.mdx');
    assert.equal(
      await runTool(tool('search'), { pattern: 'secret|Outside' }, f.context),
      'No matches for /secret|Outside/.',
    );
    unchanged();
  });

  test('writing, editing, deleting and moving through a planted symlink', async () => {
    assert.match(
      await refused(f, 'write_file', { path: 'docs/link/page.mdx', content: 'pwned' }),
      /goes through a symbolic link \(docs\/link\)/,
    );
    assert.match(
      await refused(f, 'write_file', { path: 'docs/link/new.mdx', content: 'pwned' }),
      /symbolic link/,
    );
    assert.match(
      await refused(f, 'write_file', { path: 'docs/evil.mdx', content: 'pwned' }),
      /is a symbolic link/,
    );
    assert.match(
      await refused(f, 'edit_file', { path: 'docs/evil.mdx', old_string: 'top', new_string: 'pwned' }),
      /is a symbolic link/,
    );
    assert.match(await refused(f, 'delete_file', { path: 'docs/evil.mdx' }), /is a symbolic link/);
    assert.match(await refused(f, 'delete_file', { path: 'docs/link/page.mdx' }), /symbolic link/);
    assert.match(await refused(f, 'move_file', { from: 'docs/evil.mdx', to: 'docs/x.mdx' }), /symbolic link/);
    assert.match(
      await refused(f, 'move_file', { from: 'docs/index.mdx', to: 'docs/link/index.mdx' }),
      /symbolic link/,
    );
    unchanged();
    assert.equal(readFileSync(path.join(f.outside, 'secret.txt'), 'utf8'), 'top secret\n');
    assert.equal(readFileSync(path.join(f.outside, 'page.mdx'), 'utf8'), '# Outside\n');
  });

  test('traversal, absolute paths, NUL and backslashes', async () => {
    for (const p of [
      '../x.mdx',
      'docs/../../x.mdx',
      '/tmp/x.mdx',
      `${f.outside}/page.mdx`,
      'docs/a\0.mdx',
      'docs\\a.mdx',
    ]) {
      await refused(f, 'write_file', { path: p, content: 'pwned' });
      await refused(f, 'read_file', { path: p });
      await refused(f, 'edit_file', { path: p, old_string: 'a', new_string: 'b' });
      await refused(f, 'delete_file', { path: p });
      await refused(f, 'move_file', { from: 'docs/index.mdx', to: p });
      await refused(f, 'move_file', { from: p, to: 'docs/x.mdx' });
    }
    await refused(f, 'list_files', { path: '..' });
    await refused(f, 'search', { pattern: 'x', path: '../' });
    unchanged();
  });

  test('.git and .github', async () => {
    assert.equal(
      await refused(f, 'write_file', { path: '.git/config', content: '[core]\n' }),
      'Path ".git/config" is inside .git/, which the agent may not access.',
    );
    assert.equal(
      await refused(f, 'write_file', { path: '.github/workflows/x.yml', content: 'on: push\n' }),
      'Path ".github/workflows/x.yml" is inside .github/, which the agent may not access.',
    );
    await refused(f, 'write_file', { path: 'docs/.github/workflows/x.md', content: 'x' });
    await refused(f, 'read_file', { path: '.git/config' });
    await refused(f, 'read_file', { path: '.github/workflows/ci.yml' });
    await refused(f, 'delete_file', { path: '.github/workflows/ci.yml' });
    await refused(f, 'move_file', { from: 'docs/guide.md', to: '.github/guide.md' });
    await refused(f, 'list_files', { path: '.git' });
    const listing = await runTool(tool('list_files'), {}, f.context);
    assert.ok(!listing.includes('.git/') && !listing.includes('.github/'), listing);
    unchanged();
  });

  test('outside docsDir, not writable, too large', async () => {
    await runTool(tool('read_file'), { path: 'README.md' }, f.context);
    assert.equal(
      await refused(f, 'write_file', { path: 'README.md', content: 'x' }),
      'Cannot write "README.md": writes are limited to the documentation directory "docs/".',
    );
    await refused(f, 'write_file', { path: 'src/new.md', content: 'x' });
    await refused(f, 'edit_file', { path: 'README.md', old_string: 'Project', new_string: 'x' });
    await refused(f, 'delete_file', { path: 'src/app.ts' });
    await refused(f, 'move_file', { from: 'README.md', to: 'docs/README.md' });
    assert.equal(
      await refused(f, 'write_file', { path: 'docs/run.sh', content: 'rm -rf /' }),
      'Cannot write "docs/run.sh": it matches none of the writable patterns (**/*.md, **/*.mdx, docs.json).',
    );
    await refused(f, 'move_file', { from: 'docs/guide.md', to: 'docs/guide.js' });
    assert.equal(
      await refused(f, 'write_file', {
        path: 'docs/huge.mdx',
        content: 'x'.repeat(DEFAULT_LIMITS.maxFileBytes + 1),
      }),
      'Cannot write "docs/huge.mdx": the file would be 1,048,577 bytes, over the limit of 1 MiB per file.',
    );
    unchanged();
  });

  test('a symlink planted after the file was read is still refused', async () => {
    await runTool(tool('read_file'), { path: 'docs/index.mdx' }, f.context);
    const moved = path.join(f.outside, 'docs-real');
    renameSync(path.join(f.root, 'docs'), moved);
    symlinkSync(moved, path.join(f.root, 'docs'));
    const planted = f.snapshot();
    assert.match(
      await refused(f, 'write_file', { path: 'docs/index.mdx', content: 'pwned' }),
      /goes through a symbolic link \(docs\)/,
    );
    assert.match(
      await refused(f, 'edit_file', { path: 'docs/index.mdx', old_string: 'Welcome', new_string: 'pwned' }),
      /symbolic link/,
    );
    assert.deepEqual(f.snapshot(), planted);
    assert.equal(readFileSync(path.join(moved, 'index.mdx'), 'utf8'), '# Welcome\n');
  });
});

describe('path guard: edit_file correcting the case of a path', () => {
  let f: Fixture;
  let before: Map<string, string>;
  beforeEach(async () => {
    f = await fixture();
    for (const page of ['docs/index.mdx', 'README.md']) {
      await runTool(tool('read_file'), { path: page }, f.context);
    }
    before = f.snapshot();
  });
  const edit = (p: string, old_string = 'Welcome') =>
    refused(f, 'edit_file', { path: p, old_string, new_string: 'pwned' });

  test('never through a symbolic link, whatever the case', async () => {
    assert.match(await edit('docs/Link/page.mdx', 'Outside'), /^File not found: docs\/Link\/page\.mdx\./);
    assert.match(await edit('DOCS/LINK/secret.txt', 'top'), /^Cannot write "DOCS\/LINK\/secret\.txt"/);
    assert.match(await edit('docs/EVIL.mdx', 'top'), /^File not found: docs\/EVIL\.mdx\./);
    assert.match(await edit('docs/evil.mdx', 'top'), /is a symbolic link/);
    assert.deepEqual(f.snapshot(), before);
  });

  test('never into .git or .github, and never outside docsDir or the writable globs', async () => {
    assert.match(await edit('.GIT/config', 'core'), /inside \.GIT\/, which the agent may not access/);
    assert.match(await edit('.Github/workflows/ci.yml', 'push'), /inside \.Github\//);
    assert.equal(
      await edit('readme.md', 'Project'),
      'Cannot write "README.md": writes are limited to the documentation directory "docs/".',
    );
    assert.match(await edit('SRC/app.ts', 'export'), /^Cannot write "src\/app\.ts": writes are limited/);
    assert.deepEqual(f.snapshot(), before);
  });

  test('the one file that matches is edited, under the guard like any path', async () => {
    const output = await runTool(
      tool('edit_file'),
      { path: 'Docs/Index.MDX', old_string: 'Welcome', new_string: 'Hello' },
      f.context,
    );
    assert.match(
      output,
      /^Edited docs\/index\.mdx: replaced 1 occurrence \(the path was given as Docs\/Index\.MDX\)/,
    );
    assert.equal(readFileSync(path.join(f.root, 'docs/index.mdx'), 'utf8'), '# Hello\n');
    assert.deepEqual(f.workspace.verifyChanges(), []);
  });
});

describe('Workspace.verifyChanges: the second check before committing', () => {
  test('passes for the tools’ own writes, moves and deletions', async () => {
    const f = await fixture();
    await runTool(tool('write_file'), { path: 'docs/new/page.mdx', content: '# New\n' }, f.context);
    await runTool(tool('move_file'), { from: 'docs/guide.md', to: 'docs/guides/guide.md' }, f.context);
    await runTool(tool('delete_file'), { path: 'docs/index.mdx' }, f.context);
    assert.deepEqual(f.workspace.changedFiles(), [
      'docs/guide.md',
      'docs/guides/guide.md',
      'docs/index.mdx',
      'docs/new/page.mdx',
    ]);
    assert.deepEqual(f.workspace.verifyChanges(), []);
    assert.deepEqual(f.workspace.verifyChanges(['docs/guides/guide.md', 'docs/index.mdx']), []);
  });

  test('reports a changed path that no longer passes the write guard', async () => {
    const f = await fixture();
    await runTool(tool('write_file'), { path: 'docs/new/page.mdx', content: '# New\n' }, f.context);
    // Something swaps the new directory for a link after the write.
    const moved = path.join(f.outside, 'new');
    renameSync(path.join(f.root, 'docs', 'new'), moved);
    symlinkSync(moved, path.join(f.root, 'docs', 'new'));
    assert.deepEqual(f.workspace.verifyChanges(['docs/new/page.mdx']), [
      'docs/new/page.mdx: Path "docs/new/page.mdx" goes through a symbolic link (docs/new); symbolic links are not followed.',
    ]);
  });

  test('reports files changed other than through the tools and outside the allowed set', async () => {
    const f = await fixture();
    writeFileSync(path.join(f.root, 'docs', 'sneaky.mdx'), 'x');
    writeFileSync(path.join(f.root, 'src', 'app.ts'), 'x');
    assert.deepEqual(
      f.workspace.verifyChanges(['.github/workflows/ci.yml', 'docs/sneaky.mdx', 'src/app.ts']),
      [
        '.github/workflows/ci.yml: Path ".github/workflows/ci.yml" is inside .github/, which the agent may not access.',
        "docs/sneaky.mdx: changed, but not by the agent's tools",
        'src/app.ts: Cannot write "src/app.ts": writes are limited to the documentation directory "docs/".',
      ],
    );
  });

  test('a file changed back to its original content is not a change', async () => {
    const f = await fixture();
    await runTool(tool('read_file'), { path: 'docs/index.mdx' }, f.context);
    await runTool(tool('write_file'), { path: 'docs/index.mdx', content: '# Changed\n' }, f.context);
    assert.deepEqual(f.workspace.changedFiles(), ['docs/index.mdx']);
    await runTool(tool('write_file'), { path: 'docs/index.mdx', content: '# Welcome\n' }, f.context);
    await runTool(tool('write_file'), { path: 'docs/tmp.mdx', content: 'x' }, f.context);
    await runTool(tool('delete_file'), { path: 'docs/tmp.mdx' }, f.context);
    assert.deepEqual(f.workspace.changedFiles(), []);
    assert.ok(!existsSync(path.join(f.root, 'docs', 'tmp.mdx')));
    assert.ok(lstatSync(path.join(f.root, 'docs', 'evil.mdx')).isSymbolicLink());
  });
});
