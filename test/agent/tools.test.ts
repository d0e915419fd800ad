import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { z } from 'zod';
import { AGENT_TOOLS, parseToolInput, runTool } from '../../src/agent/tools/index.ts';
import type { ToolContext } from '../../src/agent/tools/tool.ts';
import { type AgentLimits, DEFAULT_LIMITS, ToolError } from '../../src/agent/types.ts';
import { Workspace } from '../../src/agent/workspace.ts';
import { MATCHING } from '../fixtures/matching.ts';
import { writeMintlifySite } from '../helpers/mintlify-site.ts';
import { offThread } from '../helpers/off-thread.ts';

const temporary: string[] = [];
after(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

interface Repo {
  root: string;
  workspace: Workspace;
  context: ToolContext;
  run(name: string, input: unknown): Promise<string>;
  /** The ToolError message of a call that must fail. */
  fail(name: string, input: unknown): Promise<string>;
  read(file: string): string;
}

async function repo(
  files: Record<string, string | Buffer>,
  project = { docsDir: '.', writable: ['**/*.md', '**/*.mdx', 'docs.json'] },
  limits: AgentLimits = DEFAULT_LIMITS,
): Promise<Repo> {
  const root = mkdtempSync(path.join(tmpdir(), 'docwright-tools-'));
  temporary.push(root);
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), content);
  }
  const workspace = await Workspace.open(root, project, limits);
  const context: ToolContext = { root, signal: new AbortController().signal, workspace };
  const run = (name: string, input: unknown) => runTool(tool(name), input, context);
  return {
    root,
    workspace,
    context,
    run,
    async fail(name, input) {
      try {
        const output = await run(name, input);
        assert.fail(`${name} ${JSON.stringify(input).slice(0, 200)} should fail, got: ${output}`);
      } catch (error) {
        assert.ok(error instanceof ToolError, `expected a ToolError, got ${String(error)}`);
        return error.message;
      }
    },
    read: (file) => readFileSync(path.join(root, file), 'utf8'),
  };
}

function tool(name: string) {
  const found = AGENT_TOOLS.find((t) => t.name === name);
  assert.ok(found, name);
  return found;
}

describe('the tool set', () => {
  test('exactly the nine tools of docs/agent.mdx and docs/code-context.mdx, in order, with their parameters', () => {
    const shape = (name: string) => {
      const schema = tool(name).parameters as unknown as z.ZodObject;
      return Object.keys(schema.shape);
    };
    assert.deepEqual(
      AGENT_TOOLS.map((t) => t.name),
      [
        'list_files',
        'read_file',
        'search',
        'write_file',
        'edit_file',
        'delete_file',
        'move_file',
        'read_change',
        'finish',
      ],
    );
    assert.deepEqual(shape('list_files'), ['path', 'glob']);
    assert.deepEqual(shape('read_file'), ['path', 'offset', 'limit']);
    assert.deepEqual(shape('search'), ['pattern', 'path', 'glob', 'ignore_case']);
    assert.deepEqual(shape('write_file'), ['path', 'content']);
    assert.deepEqual(shape('edit_file'), ['path', 'old_string', 'new_string', 'replace_all']);
    assert.deepEqual(shape('delete_file'), ['path']);
    assert.deepEqual(shape('move_file'), ['from', 'to']);
    assert.deepEqual(shape('read_change'), ['change', 'path']);
    assert.deepEqual(shape('finish'), ['title', 'summary']);
    for (const t of AGENT_TOOLS) {
      assert.ok(t.description.length > 40, t.name);
      const json = z.toJSONSchema(t.parameters) as { properties: Record<string, { description?: string }> };
      for (const [key, property] of Object.entries(json.properties)) {
        assert.ok(property.description, `${t.name}.${key} has a description`);
      }
    }
  });

  test('invalid input is a ToolError naming each field', () => {
    assert.throws(
      () => parseToolInput(tool('read_file'), { path: 3, offset: 0 }),
      (error: unknown) =>
        error instanceof ToolError &&
        error.message ===
          'Invalid input for read_file: path: Invalid input: expected string, received number; offset: Too small: expected number to be >=1.',
    );
    assert.throws(() => parseToolInput(tool('edit_file'), null), ToolError);
  });
});

describe('list_files', () => {
  test('sorted, skipping .git, node_modules and what .gitignore ignores', async () => {
    const r = await repo({
      '.gitignore': 'dist/\n*.log\n!keep.log\n',
      '.git/config': '[core]\n',
      'node_modules/x/index.js': '',
      'dist/out.md': '',
      'debug.log': '',
      'keep.log': '',
      'docs/.gitignore': 'drafts/\n',
      'docs/drafts/wip.mdx': '',
      'docs/b.mdx': '',
      'docs/a.mdx': '',
      'docs/guides/z.md': '',
      'README.md': '',
      'Zeta.md': '',
    });
    assert.equal(
      await r.run('list_files', {}),
      [
        '.gitignore',
        'README.md',
        'Zeta.md',
        'docs/.gitignore',
        'docs/a.mdx',
        'docs/b.mdx',
        'docs/guides/z.md',
        'keep.log',
      ].join('\n'),
    );
    assert.equal(
      await r.run('list_files', { path: 'docs' }),
      'docs/.gitignore\ndocs/a.mdx\ndocs/b.mdx\ndocs/guides/z.md',
    );
    assert.equal(await r.run('list_files', { path: 'docs/', glob: '*.mdx' }), 'docs/a.mdx\ndocs/b.mdx');
    assert.equal(await r.run('list_files', { glob: 'docs/**/*.md' }), 'docs/guides/z.md');
    assert.equal(await r.run('list_files', { path: 'docs', glob: 'guides/*' }), 'docs/guides/z.md');
    assert.equal(await r.run('list_files', { path: 'docs/a.mdx' }), 'docs/a.mdx');
    assert.equal(
      await r.run('list_files', { glob: '*.json' }),
      'No files under the repository match "*.json".',
    );
    assert.equal(await r.run('list_files', { path: 'dist' }), 'No files under "dist".');
    assert.equal(
      await r.fail('list_files', { path: 'nope' }),
      'No such file or directory: "nope". Use list_files to see what exists.',
    );
  });

  test('bounded at 1,000 entries with a hint', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 1005; i++) files[`docs/p${String(i).padStart(4, '0')}.mdx`] = '';
    const r = await repo(files);
    const lines = (await r.run('list_files', {})).split('\n');
    assert.equal(lines.length, 1001);
    assert.equal(lines[0], 'docs/p0000.mdx');
    assert.equal(lines[999], 'docs/p0999.mdx');
    assert.equal(lines[1000], '… 5 more; narrow with path/glob.');
  });
});

describe('read_file', () => {
  test('numbered lines; a CRLF file shows without its CRs; the read is recorded', async () => {
    const r = await repo({ 'a.md': '# Title\n\nBody\n', 'crlf.md': 'one\r\ntwo\r\n', 'empty.md': '' });
    assert.equal(await r.run('read_file', { path: 'a.md' }), '     1\t# Title\n     2\t\n     3\tBody');
    assert.equal(await r.run('read_file', { path: './crlf.md' }), '     1\tone\n     2\ttwo');
    assert.equal(await r.run('read_file', { path: 'empty.md' }), '(empty.md is empty)');
    r.workspace.assertReadAndUnchanged('a.md');
  });

  test('offset and limit, with a hint how to continue', async () => {
    const lines = Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`).join('\n');
    const r = await repo({ 'long.md': `${lines}\n` });
    const first = (await r.run('read_file', { path: 'long.md' })).split('\n');
    assert.equal(first.length, 2002);
    assert.equal(first[1999], '  2000\tline 2000');
    assert.equal(first[2001], '(Showing lines 1-2000 of 2500. Use offset=2001 to continue.)');
    assert.equal(
      await r.run('read_file', { path: 'long.md', offset: 10, limit: 2 }),
      '    10\tline 10\n    11\tline 11\n\n(Showing lines 10-11 of 2500. Use offset=12 to continue.)',
    );
    const last = (await r.run('read_file', { path: 'long.md', offset: 2001 })).split('\n');
    assert.equal(last.length, 500);
    assert.equal(last[499], '  2500\tline 2500');
    assert.equal(
      await r.fail('read_file', { path: 'long.md', offset: 2501 }),
      'offset 2501 is past the end of long.md, which has 2500 lines.',
    );
  });

  test('long lines are cut and the output stays under 50 KB', async () => {
    const long = 'x'.repeat(5000);
    const r = await repo({
      'one.md': `${long}\nshort\n`,
      'wide.md': `${Array(100).fill('y'.repeat(1500)).join('\n')}\n`,
    });
    assert.equal(
      await r.run('read_file', { path: 'one.md' }),
      `     1\t${'x'.repeat(2000)}… [line cut: 3000 more characters]\n     2\tshort`,
    );
    const wide = await r.run('read_file', { path: 'wide.md' });
    assert.ok(Buffer.byteLength(wide) <= 50 * 1024 + 200, String(Buffer.byteLength(wide)));
    assert.match(wide, /\n\(Showing lines 1-33 of 100\. Use offset=34 to continue\.\)$/);
  });

  test('binary files, directories, oversized files and missing files', async () => {
    const r = await repo(
      {
        'logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]),
        'latin1.md': Buffer.from([0x63, 0x61, 0x66, 0xe9]),
        'big.md': 'z'.repeat(2000),
        'docs/quickstart.mdx': '',
        'docs/quick-start-guide.mdx': '',
        'docs/api/quickstart.md': '',
        'docs/unrelated.mdx': '',
      },
      undefined,
      { ...DEFAULT_LIMITS, maxFileBytes: 1024, maxTotalWriteBytes: 10_000 },
    );
    assert.equal(
      await r.fail('read_file', { path: 'logo.png' }),
      '"logo.png" is a binary file (6 bytes); only text files can be read or edited.',
    );
    assert.equal(
      await r.fail('read_file', { path: 'latin1.md' }),
      '"latin1.md" is not UTF-8 text; it cannot be read or edited.',
    );
    assert.equal(
      await r.fail('read_file', { path: 'docs' }),
      '"docs" is a directory; use list_files to see what it holds.',
    );
    assert.equal(
      await r.fail('read_file', { path: 'big.md' }),
      '"big.md" is 2,000 bytes, over the limit of 1 KiB; use search to find the lines you need.',
    );
    assert.equal(
      await r.fail('read_file', { path: 'docs/quickstat.mdx' }),
      'File not found: docs/quickstat.mdx. Did you mean one of these?\n  docs/quickstart.mdx\n  docs/api/quickstart.md\n  docs/quick-start-guide.mdx',
    );
    assert.equal(
      await r.fail('read_file', { path: 'nothing/like/this.txt' }),
      'File not found: nothing/like/this.txt. Use list_files to see which files exist.',
    );
  });
});

describe('search', () => {
  const files = {
    '.gitignore': 'build/\n',
    'build/out.md': 'Token in build output\n',
    'docs/a.mdx': '# Auth\n\nSet the API token.\nThe token expires.\r\n',
    'docs/b.md': 'No secrets here.\nTOKEN rotation\n',
    'img.bin': Buffer.concat([Buffer.from('token'), Buffer.from([0, 1, 2])]),
    'notes.txt': 'token\n',
  };

  test('matching lines as path:line: text, sorted; case, path and glob', async () => {
    const r = await repo(files);
    assert.equal(
      await r.run('search', { pattern: 'token' }),
      'docs/a.mdx:3: Set the API token.\ndocs/a.mdx:4: The token expires.\nnotes.txt:1: token',
    );
    assert.equal(
      await r.run('search', { pattern: 'token', ignore_case: true, path: 'docs' }),
      'docs/a.mdx:3: Set the API token.\ndocs/a.mdx:4: The token expires.\ndocs/b.md:2: TOKEN rotation',
    );
    assert.equal(await r.run('search', { pattern: 'TOKEN', glob: '*.md' }), 'docs/b.md:2: TOKEN rotation');
    assert.equal(await r.run('search', { pattern: 'expires\\.$' }), 'docs/a.mdx:4: The token expires.');
    assert.equal(await r.run('search', { pattern: '^#' }), 'docs/a.mdx:1: # Auth');
    assert.equal(await r.run('search', { pattern: '(?i)^token ROT' }), 'docs/b.md:2: TOKEN rotation');
    assert.equal(await r.run('search', { pattern: '\\u0054OKEN' }), 'docs/b.md:2: TOKEN rotation');
    assert.equal(await r.run('search', { pattern: 'Auth', path: 'docs/a.mdx' }), 'docs/a.mdx:1: # Auth');
    assert.equal(await r.run('search', { pattern: 'Auth\\n\\nSet' }), 'No matches for /Auth\\n\\nSet/.');
    assert.equal(
      await r.run('search', { pattern: 'nothing', path: 'docs', glob: '*.mdx', ignore_case: true }),
      'No matches for /nothing/i under "docs" in files matching "*.mdx".',
    );
  });

  test('an invalid pattern names the problem and the way forward', async () => {
    const r = await repo(files);
    assert.equal(
      await r.fail('search', { pattern: '(unclosed' }),
      'Invalid regular expression /(unclosed/: missing closing ): `(unclosed`. The pattern uses RE2 syntax.',
    );
    assert.equal(
      await r.fail('search', { pattern: 'token(?= exp)' }),
      'Invalid regular expression /token(?= exp)/: invalid or unsupported Perl syntax: `(?=`. Lookarounds are not supported: search for the text itself, or run two searches. The pattern uses RE2 syntax.',
    );
    assert.match(await r.fail('search', { pattern: '(a)\\1' }), /Backreferences are not supported\./);
    assert.match(await r.fail('search', { pattern: 'x'.repeat(1001) }), /at most 1000 are accepted/);
    assert.match(await r.fail('search', { pattern: '' }), /^Invalid input for search: pattern:/);
  });

  test('patterns and globs that backtrack catastrophically elsewhere run in linear time', async () => {
    const r = await repo({ 'a.md': `${'a'.repeat(50_000)}!\n`, [`${'a'.repeat(200)}x.txt`]: 'x\n' });
    // Each of these takes seconds to years with a backtracking engine, here well under one: run on
    // a thread of their own, so that a regression fails this test instead of hanging the file.
    const outputs = await offThread<string[]>(MATCHING, 'toolOutputs', [
      r.root,
      { docsDir: '.', writable: ['**/*.md'] },
      [
        ['search', { pattern: '^(a+)+$' }],
        ['search', { pattern: '(.*a){20}!' }],
        ['list_files', { glob: '**/*(a*)*(a*)*(a*)c' }],
        ['search', { pattern: 'x', glob: '*(a*)*(a*)*(a*)*(a*)x.txt' }],
      ],
    ]);
    assert.deepEqual(outputs, [
      'No matches for /^(a+)+$/.',
      `a.md:1: ${'a'.repeat(500)}…`,
      'No files under the repository match "**/*(a*)*(a*)*(a*)c".',
      `${'a'.repeat(200)}x.txt:1: x`,
    ]);
  });

  test('a call that runs past its deadline stops with a message, not a stall', async () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 400; i++) many[`d${i}/p.md`] = 'text\n';
    const r = await repo(many);
    const message = await (async () => {
      try {
        await runTool(tool('search'), { pattern: 'text' }, { ...r.context, deadline: Date.now() - 1 });
        return 'no error';
      } catch (error) {
        return (error as Error).message;
      }
    })();
    assert.equal(
      message,
      'This tool call ran out of time and was stopped. Narrow it: a smaller path, a glob, or a more specific pattern.',
    );
  });

  test('bounded at 200 matches with a count of the rest', async () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 30; i++) many[`docs/p${String(i).padStart(2, '0')}.md`] = 'hit\n'.repeat(10);
    const r = await repo(many);
    const lines = (await r.run('search', { pattern: 'hit' })).split('\n');
    assert.equal(lines.length, 201);
    assert.equal(lines[0], 'docs/p00.md:1: hit');
    assert.equal(lines[199], 'docs/p19.md:10: hit');
    assert.equal(
      lines[200],
      '… 100 more matches (300 in 30 files); narrow with path, glob or a more specific pattern.',
    );
  });
});

describe('write_file', () => {
  test('creates files and parent directories', async () => {
    const r = await repo({});
    assert.equal(
      await r.run('write_file', { path: 'docs/guides/new.mdx', content: '# New\n\nText\n' }),
      'Created docs/guides/new.mdx (3 lines, 12 bytes).',
    );
    assert.equal(r.read('docs/guides/new.mdx'), '# New\n\nText\n');
    // A file written in this run may be written again without a read.
    assert.equal(
      await r.run('write_file', { path: 'docs/guides/new.mdx', content: 'x' }),
      'Overwrote docs/guides/new.mdx (1 line, 1 byte).',
    );
    assert.deepEqual(r.workspace.changedFiles(), ['docs/guides/new.mdx']);
  });

  test('overwrites only a file read in this run and unchanged since', async () => {
    const r = await repo({ 'a.md': 'old\n' });
    assert.equal(
      await r.fail('write_file', { path: 'a.md', content: 'new\n' }),
      '"a.md" has not been read in this run; read it with read_file before changing it.',
    );
    assert.equal(r.read('a.md'), 'old\n');
    await r.run('read_file', { path: 'a.md' });
    writeFileSync(path.join(r.root, 'a.md'), 'changed by someone else\n');
    assert.equal(
      await r.fail('write_file', { path: 'a.md', content: 'new\n' }),
      '"a.md" has changed since it was last read; read it again with read_file before changing it.',
    );
    await r.run('read_file', { path: 'a.md' });
    assert.equal(
      await r.run('write_file', { path: 'a.md', content: 'new\n' }),
      'Overwrote a.md (1 line, 4 bytes).',
    );
    assert.equal(r.read('a.md'), 'new\n');
    assert.equal(
      await r.fail('write_file', { path: 'a.md/x.md', content: '' }),
      'Path "a.md/x.md": a.md is a file, not a directory.',
    );
  });

  test('no temporary file is left behind', async () => {
    const r = await repo({ 'docs/a.md': 'a' });
    await r.run('read_file', { path: 'docs/a.md' });
    await r.run('write_file', { path: 'docs/a.md', content: 'b' });
    assert.equal(await r.run('list_files', {}), 'docs/a.md');
  });
});

describe('edit_file', () => {
  test('replaces a unique exact match and shows the result', async () => {
    const r = await repo({ 'a.md': '# Title\n\nfirst\nsecond\nthird\n' });
    await r.run('read_file', { path: 'a.md' });
    assert.equal(
      await r.run('edit_file', { path: 'a.md', old_string: 'second', new_string: 'SECOND\nmore' }),
      'Edited a.md: replaced 1 occurrence.\n     2\t\n     3\tfirst\n     4\tSECOND\n     5\tmore\n     6\tthird',
    );
    assert.equal(r.read('a.md'), '# Title\n\nfirst\nSECOND\nmore\nthird\n');
    // Edits follow each other without a new read.
    await r.run('edit_file', { path: 'a.md', old_string: 'more\n', new_string: '' });
    assert.equal(r.read('a.md'), '# Title\n\nfirst\nSECOND\nthird\n');
  });

  test("$&, $1, $$, $` and $' in new_string are inserted literally", async () => {
    const r = await repo({ 'p.md': 'price: X\n' });
    await r.run('read_file', { path: 'p.md' });
    const literal = "costs $& or $1 or $$ or $` or $' or $<name>";
    await r.run('edit_file', { path: 'p.md', old_string: 'X', new_string: literal });
    assert.equal(r.read('p.md'), `price: ${literal}\n`);
    await r.run('edit_file', { path: 'p.md', old_string: '$$', new_string: '$$$', replace_all: true });
    assert.equal(r.read('p.md'), "price: costs $& or $1 or $$$ or $` or $' or $<name>\n");
  });

  test('not unique: every match with its line; replace_all replaces them all', async () => {
    const r = await repo({ 'a.md': 'beta\nalpha\nbeta\ngamma beta\n' });
    await r.run('read_file', { path: 'a.md' });
    assert.equal(
      await r.fail('edit_file', { path: 'a.md', old_string: 'beta', new_string: 'BETA' }),
      [
        'old_string occurs 3 times in a.md:',
        '     1\tbeta',
        '     3\tbeta',
        '     4\tgamma beta',
        'Include more surrounding lines in old_string, copied exactly as read_file shows them, so that it matches only one of these; or set replace_all to true to replace every one.',
      ].join('\n'),
    );
    assert.equal(r.read('a.md'), 'beta\nalpha\nbeta\ngamma beta\n');
    assert.match(
      await r.run('edit_file', { path: 'a.md', old_string: 'beta', new_string: 'BETA', replace_all: true }),
      /^Edited a\.md: replaced 3 occurrences\.\n/,
    );
    assert.equal(r.read('a.md'), 'BETA\nalpha\nBETA\ngamma BETA\n');
  });

  test('not found: the closest lines with their numbers, never a guess', async () => {
    const r = await repo({
      'a.md': '# Setup\n\nRun npm install docwright.\nThen start it.\nUnrelated words.\n',
    });
    await r.run('read_file', { path: 'a.md' });
    assert.equal(
      await r.fail('edit_file', {
        path: 'a.md',
        old_string: 'Run npm install docwrite.\nThen start it.',
        new_string: 'x',
      }),
      [
        'old_string was not found in a.md.',
        'The lines closest to its first line ("Run npm install docwrite.") are:',
        '     3\tRun npm install docwright.',
        'Read the file again and copy the text exactly, including indentation.',
      ].join('\n'),
    );
    assert.equal(
      await r.fail('edit_file', { path: 'a.md', old_string: '     4\tThen start it.', new_string: 'x' }),
      [
        'old_string was not found in a.md.',
        'It seems to include the line-number prefixes of read_file: copy only the text after the tab.',
        'The lines closest to its first line ("Then start it.") are:',
        '     4\tThen start it.',
        'Read the file again and copy the text exactly, including indentation.',
      ].join('\n'),
    );
    assert.equal(
      await r.fail('edit_file', { path: 'a.md', old_string: 'qqq', new_string: 'x' }),
      'old_string was not found in a.md.\nNo line of the file resembles its first line ("qqq").\nRead the file again and copy the text exactly, including indentation.',
    );
    assert.equal(r.read('a.md'), '# Setup\n\nRun npm install docwright.\nThen start it.\nUnrelated words.\n');
  });

  test('CRLF files: LF old_string matches, and the file keeps CRLF throughout', async () => {
    const r = await repo({ 'w.md': '# Title\r\n\r\nline one\r\nline two\r\n' });
    await r.run('read_file', { path: 'w.md' });
    assert.equal(
      await r.run('edit_file', {
        path: 'w.md',
        old_string: 'line one\nline two',
        new_string: 'line 1\nline 2\nline 3',
      }),
      'Edited w.md: replaced 1 occurrence (matched ignoring differences in line endings).\n     1\t# Title\n     2\t\n     3\tline 1\n     4\tline 2\n     5\tline 3',
    );
    assert.equal(r.read('w.md'), '# Title\r\n\r\nline 1\r\nline 2\r\nline 3\r\n');
    // An exact single-line match takes the file's line endings for new lines too.
    await r.run('edit_file', { path: 'w.md', old_string: 'line 3', new_string: 'line 3\nline 4' });
    assert.equal(r.read('w.md'), '# Title\r\n\r\nline 1\r\nline 2\r\nline 3\r\nline 4\r\n');
    // A match starting at a line break replaces the whole CRLF.
    await r.run('edit_file', { path: 'w.md', old_string: '\nline 4', new_string: '\nline four' });
    assert.equal(r.read('w.md'), '# Title\r\n\r\nline 1\r\nline 2\r\nline 3\r\nline four\r\n');
  });

  test('CRLF in old_string matches an LF file', async () => {
    const r = await repo({ 'u.md': 'a\nb\n' });
    await r.run('read_file', { path: 'u.md' });
    await r.run('edit_file', { path: 'u.md', old_string: 'a\r\nb', new_string: 'A\r\nB' });
    assert.equal(r.read('u.md'), 'A\nB\n');
  });

  test('trailing whitespace is tolerated, and the file keeps its own', async () => {
    const r = await repo({ 't.md': 'keep\nitem one   \nitem two\t\nend\n' });
    await r.run('read_file', { path: 't.md' });
    assert.match(
      await r.run('edit_file', {
        path: 't.md',
        old_string: 'item one\nitem two\n',
        new_string: 'item 1\nitem 2\n',
      }),
      /^Edited t\.md: replaced 1 occurrence \(matched ignoring differences in trailing whitespace\)\./,
    );
    assert.equal(r.read('t.md'), 'keep\nitem 1   \nitem 2\t\nend\n');
  });

  test('mistakes: identical strings, empty old_string, unread file, missing file, not writable', async () => {
    const r = await repo({ 'a.md': 'x\n', 'docs/quickstart.mdx': 'q\n', 'src/app.ts': 'x\n' });
    assert.equal(
      await r.fail('edit_file', { path: 'a.md', old_string: 'x', new_string: 'x' }),
      'old_string and new_string are identical; there is nothing to change.',
    );
    assert.equal(
      await r.fail('edit_file', { path: 'a.md', old_string: '', new_string: 'x' }),
      'old_string is empty; to create a file or replace all of its content, use write_file.',
    );
    assert.equal(
      await r.fail('edit_file', { path: 'a.md', old_string: 'x', new_string: 'y' }),
      '"a.md" has not been read in this run; read it with read_file before changing it.',
    );
    assert.equal(
      await r.fail('edit_file', { path: 'docs/quickstrat.mdx', old_string: 'x', new_string: 'y' }),
      'File not found: docs/quickstrat.mdx. Did you mean one of these?\n  docs/quickstart.mdx\nTo create a new file, use write_file.',
    );
    assert.equal(
      await r.fail('edit_file', { path: 'src/app.ts', old_string: 'x', new_string: 'y' }),
      'Cannot write "src/app.ts": it matches none of the writable patterns (**/*.md, **/*.mdx, docs.json).',
    );
    assert.equal(r.read('a.md'), 'x\n');
  });
});

describe('delete_file and move_file', () => {
  test('delete a writable file; changed files include it', async () => {
    const r = await repo({ 'docs/a.mdx': 'a', 'src/app.ts': 'x' });
    assert.equal(await r.run('delete_file', { path: 'docs/a.mdx' }), 'Deleted docs/a.mdx.');
    assert.ok(!existsSync(path.join(r.root, 'docs/a.mdx')));
    assert.equal(
      await r.fail('delete_file', { path: 'src/app.ts' }),
      'Cannot write "src/app.ts": it matches none of the writable patterns (**/*.md, **/*.mdx, docs.json).',
    );
    assert.equal(
      await r.fail('delete_file', { path: 'docs/a.mdx' }),
      'File not found: docs/a.mdx. Use list_files to see which files exist.',
    );
    assert.deepEqual(r.workspace.changedFiles(), ['docs/a.mdx']);
  });

  test('move a writable file to a new writable path; both ends are changed files', async () => {
    const r = await repo({ 'docs/a.mdx': 'a', 'docs/b.mdx': 'b' });
    assert.equal(
      await r.fail('move_file', { from: 'docs/a.mdx', to: 'docs/b.mdx' }),
      '"docs/b.mdx" already exists; choose another destination or delete it first.',
    );
    assert.equal(
      await r.fail('move_file', { from: 'docs/a.mdx', to: 'docs/a.txt' }),
      'Cannot write "docs/a.txt": it matches none of the writable patterns (**/*.md, **/*.mdx, docs.json).',
    );
    assert.equal(
      await r.run('move_file', { from: 'docs/a.mdx', to: 'docs/guides/a.mdx' }),
      'Moved docs/a.mdx to docs/guides/a.mdx.',
    );
    assert.equal(r.read('docs/guides/a.mdx'), 'a');
    assert.ok(!existsSync(path.join(r.root, 'docs/a.mdx')));
    assert.deepEqual(r.workspace.changedFiles(), ['docs/a.mdx', 'docs/guides/a.mdx']);
  });
});

describe('finish', () => {
  test('records the title and summary', async () => {
    const r = await repo({ 'a.md': 'a' });
    assert.equal(
      await r.run('finish', { title: '  Nothing to do  ', summary: 'Already documented.' }),
      'Finished. No files were changed.',
    );
    assert.deepEqual(r.workspace.finished, { title: 'Nothing to do', summary: 'Already documented.' });
    await r.run('write_file', { path: 'b.md', content: 'b' });
    assert.equal(
      await r.run('finish', { title: 'Add b', summary: 'Adds b.' }),
      'Finished. Changed files:\n  b.md',
    );
    assert.deepEqual(r.workspace.finished, { title: 'Add b', summary: 'Adds b.' });
  });

  test('a title is one line of at most 100 characters', async () => {
    const r = await repo({});
    assert.equal(
      await r.fail('finish', { title: 'one\ntwo', summary: 's' }),
      'Invalid input for finish: title: title must be a single line.',
    );
    assert.equal(
      await r.fail('finish', { title: 'x'.repeat(101), summary: 's' }),
      'Invalid input for finish: title: title must be at most 100 characters.',
    );
    assert.equal(
      await r.fail('finish', { title: 'ok', summary: ' ' }),
      'Invalid input for finish: summary: summary must not be empty.',
    );
    assert.equal(r.workspace.finished, null);
  });
});

describe('on a Mintlify documentation site (test/helpers/mintlify-site.ts)', () => {
  test('list_files, search and read_file', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'docwright-mintlify-'));
    temporary.push(root);
    writeMintlifySite(root);
    const workspace = await Workspace.open(
      root,
      { docsDir: '.', writable: ['**/*.mdx', 'docs.json'] },
      DEFAULT_LIMITS,
    );
    const context: ToolContext = { root, signal: new AbortController().signal, workspace };
    const run = (name: string, input: unknown) => runTool(tool(name), input, context);

    const pages = (await run('list_files', { glob: '*.mdx' })).split('\n');
    assert.ok(pages.length > 100, `${pages.length} pages`);
    assert.ok(pages.every((p) => p.endsWith('.mdx')));
    assert.deepEqual([...pages].sort(), pages);
    assert.ok(pages.includes('editor/agent.mdx'));

    const hits = (await run('search', { pattern: 'docs\\.json', glob: '*.mdx' })).split('\n');
    assert.ok(hits.length > 5, hits.join('\n'));
    for (const hit of hits.filter((h) => !h.startsWith('…')))
      assert.match(hit, /^[^:]+\.mdx:\d+: .*docs\.json/);

    const config = await run('read_file', { path: 'docs.json', limit: 5 });
    assert.match(config, /^ {5}1\t\{/);
    assert.match(config, /Use offset=6 to continue\.\)$/);
    const page = await run('read_file', { path: 'editor/agent.mdx' });
    assert.match(page, /^ {5}1\t---$/m);
    workspace.assertReadAndUnchanged('editor/agent.mdx');
  });
});
