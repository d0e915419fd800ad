/**
 * edit_file's tolerance of the slips weaker models make (docs/evaluation.mdx, "Edit robustness"): one test
 * per tolerance, one per refusal. Each runs the real tool on a real workspace; the file on disk
 * is the proof.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { AGENT_TOOLS, runTool } from '../../src/agent/tools/index.ts';
import { DEFAULT_LIMITS, ToolError } from '../../src/agent/types.ts';
import { Workspace } from '../../src/agent/workspace.ts';

const temporary: string[] = [];
after(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

const tool = (name: string) => AGENT_TOOLS.find((t) => t.name === name)!;

/** A workspace holding `files`, each already read (so it may be edited). */
async function repo(
  files: Record<string, string>,
  project = { docsDir: '.', writable: ['**/*.md', '**/*.mdx'] },
) {
  const root = mkdtempSync(path.join(tmpdir(), 'docwright-edit-'));
  temporary.push(root);
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), content);
  }
  const workspace = await Workspace.open(root, project, DEFAULT_LIMITS);
  const context = { root, signal: new AbortController().signal, workspace };
  const run = (name: string, input: unknown) => runTool(tool(name), input, context);
  for (const name of Object.keys(files)) {
    if (/\.mdx?$/.test(name)) await run('read_file', { path: name });
  }
  return {
    root,
    run,
    edit: (input: Record<string, unknown>) => run('edit_file', { path: 'a.md', ...input }),
    async refused(input: Record<string, unknown>): Promise<string> {
      const before = readFileSync(path.join(root, String(input.path ?? 'a.md')), 'utf8');
      try {
        const output = await run('edit_file', { path: 'a.md', ...input });
        assert.fail(`should be refused, got: ${output}`);
      } catch (error) {
        assert.ok(error instanceof ToolError, String(error));
        assert.equal(readFileSync(path.join(root, String(input.path ?? 'a.md')), 'utf8'), before);
        return error.message;
      }
    },
    read: (name = 'a.md') => readFileSync(path.join(root, name), 'utf8'),
  };
}

describe('edit_file tolerates, where the match is unique', () => {
  test('line endings: LF old_string in a CRLF file; the new lines get CRLF too', async () => {
    const r = await repo({ 'a.md': '---\r\ntitle: "A"\r\n---\r\n\r\nOne.\r\nTwo.\r\n' });
    await r.edit({ old_string: 'One.\nTwo.\n', new_string: 'One.\nTwo and a half.\nThree.\n' });
    assert.equal(r.read(), '---\r\ntitle: "A"\r\n---\r\n\r\nOne.\r\nTwo and a half.\r\nThree.\r\n');
  });

  test('line endings: CRLF old_string and new_string in an LF file', async () => {
    const r = await repo({ 'a.md': 'One.\nTwo.\nThree.\n' });
    await r.edit({ old_string: 'One.\r\nTwo.', new_string: 'One.\r\n2.\r\nMore.' });
    assert.equal(r.read(), 'One.\n2.\nMore.\nThree.\n');
  });

  test('line endings: old_string starting at the line break of a CRLF line replaces the whole CRLF', async () => {
    const r = await repo({ 'a.md': 'One.\r\nTwo.\r\nThree.\r\n' });
    await r.edit({ old_string: '\nTwo.', new_string: '' });
    assert.equal(r.read(), 'One.\r\nThree.\r\n');
  });

  test('Unicode normalisation: NFC old_string on an NFD page; the page stays NFD', async () => {
    const nfd = 'Le café est prêt.\nÀ bientôt.\n'.normalize('NFD');
    const r = await repo({ 'a.md': nfd });
    const output = await r.edit({
      old_string: 'Le café est prêt.',
      new_string: 'Le thé est prêt, comme le café.',
    });
    assert.match(output, /matched ignoring differences in Unicode normalisation/);
    assert.equal(r.read(), 'Le thé est prêt, comme le café.\nÀ bientôt.\n'.normalize('NFD'));
  });

  test("trailing whitespace: the model's is not written, the file's stays (a Markdown line break)", async () => {
    const r = await repo({ 'a.md': 'First line,  \nsecond line.\nThird.\n' });
    await r.edit({
      old_string: 'First line, \nsecond line. \nThird. ',
      new_string: 'First line, \nsecond line, changed. \nAdded. \nThird. ',
    });
    assert.equal(r.read(), 'First line,  \nsecond line, changed.\nAdded.\nThird.\n');
    await r.edit({ old_string: 'First line,\nsecond', new_string: 'The first line,\nsecond' });
    assert.equal(r.read(), 'The first line,  \nsecond line, changed.\nAdded.\nThird.\n');
  });

  test("an exact old_string that stops before a line's trailing spaces: lines added after it do not take them", async () => {
    const r = await repo({ 'a.md': 'Line one,  \nline two.\n' });
    await r.edit({ old_string: 'Line one,', new_string: 'Line one,\nan added line,' });
    assert.equal(r.read(), 'Line one,  \nan added line,\nline two.\n');
  });

  test('indentation drift: every line shifted alike; new_string re-indented by the same shift', async () => {
    const page = '<Steps>\n  <Step title="Install">\n    Run the installer.\n  </Step>\n</Steps>\n';
    const r = await repo({ 'a.md': page });
    const output = await r.edit({
      old_string: '<Step title="Install">\n  Run the installer.\n</Step>',
      new_string:
        '<Step title="Install">\n  Run the installer.\n  Then restart.\n</Step>\n<Step title="Use">\n  Open it.\n</Step>',
    });
    assert.match(output, /matched ignoring differences in indentation/);
    assert.equal(
      r.read(),
      '<Steps>\n  <Step title="Install">\n    Run the installer.\n    Then restart.\n  </Step>\n  <Step title="Use">\n    Open it.\n  </Step>\n</Steps>\n',
    );
  });

  test('tabs for spaces, and spaces for tabs: the file keeps its own', async () => {
    const r = await repo({
      'a.md': '```yaml\nroot:\n  child:\n    leaf: 1\n```\n',
      'b.md': 'list:\n\t- one\n\t\t- two\n',
    });
    await r.edit({
      old_string: 'root:\n\tchild:\n\t\tleaf: 1',
      new_string: 'root:\n\tchild:\n\t\tleaf: 2\n\t\tother: 3',
    });
    assert.equal(r.read(), '```yaml\nroot:\n  child:\n    leaf: 2\n    other: 3\n```\n');
    await r.run('edit_file', {
      path: 'b.md',
      old_string: '    - one\n        - two',
      new_string: '    - one\n        - 2\n    - three',
    });
    assert.equal(r.read('b.md'), 'list:\n\t- one\n\t\t- 2\n\t- three\n');
  });

  test('typographic quotes: straight quotes for curly ones; what was copied keeps its curly quotes', async () => {
    const r = await repo({ 'a.md': 'It’s “quick” to set up.\nNext.\n' });
    await r.edit({ old_string: `It's "quick" to set up.`, new_string: `It's "quick" to set up and run.` });
    assert.equal(r.read(), 'It’s “quick” to set up and run.\nNext.\n');
  });

  test('path case, when exactly one file matches; and a leading ./', async () => {
    const r = await repo(
      { 'docs/Guides/Setup.mdx': 'Install it.\n' },
      { docsDir: 'docs', writable: ['**/*.mdx'] },
    );
    const output = await r.run('edit_file', {
      path: 'Docs/guides/setup.MDX',
      old_string: 'Install it.',
      new_string: 'Install it now.',
    });
    assert.match(
      output,
      /^Edited docs\/Guides\/Setup\.mdx: replaced 1 occurrence \(the path was given as Docs\/guides\/setup\.MDX\)\./,
    );
    assert.equal(r.read('docs/Guides/Setup.mdx'), 'Install it now.\n');
    await r.run('edit_file', { path: './docs/Guides/Setup.mdx', old_string: 'now', new_string: 'today' });
    assert.equal(r.read('docs/Guides/Setup.mdx'), 'Install it today.\n');
  });

  test('several slips at once', async () => {
    const page = '<Note>\r\n    It’s  \r\n    done.\r\n</Note>\r\n';
    const r = await repo({ 'a.md': page });
    await r.edit({ old_string: "  It's\n  done. ", new_string: "  It's\n  done, and tested. " });
    assert.equal(r.read(), '<Note>\r\n    It’s  \r\n    done, and tested.\r\n</Note>\r\n');
  });
});

describe('edit_file refuses, and says how to go on', () => {
  test('several exact matches: each with its line and text', async () => {
    const r = await repo({ 'a.md': 'Intro.\n\n## Limits\nSee below.\n\n## Quotas\nSee below.\n' });
    assert.equal(
      await r.refused({ old_string: 'See below.', new_string: 'See the table.' }),
      [
        'old_string occurs 2 times in a.md:',
        '     4\tSee below.',
        '     7\tSee below.',
        'Include more surrounding lines in old_string, copied exactly as read_file shows them, so that it matches only one of these; or set replace_all to true to replace every one.',
      ].join('\n'),
    );
  });

  test('several matches once a slip is tolerated: the places, and what was ignored', async () => {
    const r = await repo({ 'a.md': '- a\n  - item\n  - more\n- b\n    - item\n    - more\n' });
    assert.equal(
      await r.refused({ old_string: '- item\n- more', new_string: '- item\n- less' }),
      [
        'old_string is not in a.md exactly; ignoring differences in line endings, Unicode normalisation, trailing whitespace and indentation, it matches 2 places:',
        '     2\t  - item   (lines 2-3)',
        '     5\t    - item   (lines 5-6)',
        'Include more surrounding lines in old_string, copied exactly as read_file shows them, so that it matches only one of these; or set replace_all to true to replace every one.',
      ].join('\n'),
    );
  });

  test('an exact match is not taken when a drifted copy reads the same elsewhere (an example and its code)', async () => {
    const page = [
      '<Card title="Setup">',
      '  Install it.',
      '</Card>',
      '',
      '```mdx',
      '  <Card title="Setup">',
      '    Install it.',
      '  </Card>',
      '```',
      '',
    ].join('\n');
    const r = await repo({ 'a.md': page });
    const message = await r.refused({
      old_string: '<Card title="Setup">\n  Install it.\n</Card>',
      new_string: '<Card title="Setup">\n  Install it now.\n</Card>',
    });
    assert.match(
      message,
      /it matches 2 places:\n {5}1\t<Card title="Setup"> {3}\(lines 1-3\)\n {5}6\t {2}<Card/,
    );
    // With a line of context it is unique, and applied.
    await r.edit({
      old_string: '<Card title="Setup">\n  Install it.\n</Card>\n\n```',
      new_string: '<Card title="Setup">\n  Install it now.\n</Card>\n\n```',
    });
    assert.equal(r.read(), page.replace('  Install it.', '  Install it now.'));
  });

  test('indentation that differs by a different amount on each line', async () => {
    const r = await repo({ 'a.md': 'x\n  one\n    two\n' });
    assert.equal(
      await r.refused({ old_string: 'one\n  three', new_string: 'x' }),
      'old_string was not found in a.md.\nThe lines closest to its first line ("one") are:\n     2\t  one\nRead the file again and copy the text exactly, including indentation.',
    );
    assert.equal(
      await r.refused({ old_string: '   one\n    two', new_string: 'x' }),
      'old_string was not found in a.md.\nIt matches line 2 but for its indentation, which differs by a different amount from line to line. Copy the indentation exactly as read_file shows it.',
    );
  });

  test('new_string indented less than the shift allows', async () => {
    const r = await repo({ 'a.md': 'top\n  a\n  b\n' });
    assert.equal(
      await r.refused({ old_string: '    a\n    b', new_string: '    a\nb' }),
      'old_string matches a.md at line 2 with a different indentation, but new_string has a line indented by "", which cannot be shifted the same way.\nCopy old_string with its indentation exactly as read_file shows it, and indent new_string to match.',
    );
  });

  test('a stale old_string, copied before an earlier edit, is refused: read the file again', async () => {
    const r = await repo({ 'a.md': '# Title\n\nThe quick fox.\nJumps over.\n' });
    await r.edit({ old_string: 'The quick fox.', new_string: 'The slow fox.' });
    assert.equal(
      await r.refused({
        old_string: 'The quick fox.\nJumps over.',
        new_string: 'The quick fox.\nJumps high.',
      }),
      'old_string is not in a.md as it is now: it is text from before your earlier edit of this file (line 3 then). Read the file again with read_file and copy old_string from its current content.',
    );
  });

  test('a stale old_string is refused even where a tolerated match remains elsewhere', async () => {
    const page = 'Install:\nrun it\n\n```\n    Install:\n    run it\n```\n';
    const r = await repo({ 'a.md': page });
    await r.edit({ old_string: 'Install:\nrun it\n\n', new_string: 'Setup:\nrun it\n\n' });
    assert.match(
      await r.refused({ old_string: 'Install:\nrun it', new_string: 'Install:\nrun it twice' }),
      /^old_string is not in a\.md as it is now: it is text from before your earlier edit .*Read the file again with read_file/,
    );
  });

  test('a path whose case matches several files', async () => {
    const r = await repo({ 'Readme.md': 'a\n', 'README.md': 'b\n' });
    await assert.rejects(r.run('edit_file', { path: 'readme.md', old_string: 'a', new_string: 'c' }), {
      name: 'ToolError',
      message:
        'File not found: readme.md. These files match it but for upper and lower case:\n  README.md\n  Readme.md\nGive the path exactly as list_files shows it.',
    });
    assert.equal(r.read('Readme.md'), 'a\n');
    assert.equal(r.read('README.md'), 'b\n');
  });
});
