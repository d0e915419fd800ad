// The answer tool of an ask run (docs/questions.mdx): its citations are checked against exactly
// what read_file can read — the documentation on disk (a sparse checkout), the project's code
// outside docsDir and a context repository under _context/<name>/, served by the worker's real
// git code reader — and its input is bounded. Only the reading tools and answer are offered.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { askSystemPrompt, questionMessage } from '../../src/agent/ask-prompt.ts';
import { MAX_ANSWER_CHARS, MAX_CITATIONS } from '../../src/agent/tools/answer.ts';
import { ASK_TOOLS, answer, runTool, unknownToolError } from '../../src/agent/tools/index.ts';
import type { ToolContext } from '../../src/agent/tools/tool.ts';
import { DEFAULT_LIMITS, ToolError } from '../../src/agent/types.ts';
import { Workspace } from '../../src/agent/workspace.ts';
import { GitCodeReader } from '../../src/git/code-reader.ts';
import { gitCodeContext } from '../../src/pipeline/code-context.ts';
import { createGitRepository, type GitRepository } from '../doubles/git-repository.ts';
import { temporaryDirectory } from '../helpers/temp.ts';

const project = { docsDir: 'docs', writable: ['**/*.mdx'] };

let own: GitRepository;
let api: GitRepository;
let readers: GitCodeReader[];
let workspace: Workspace;
let context: ToolContext;

before(async () => {
  own = createGitRepository({
    'docs/limits.mdx': '# Limits\n\n100 jobs per hour.\n',
    'src/limits.ts': 'export const JOBS = 100;\nexport const KEYS = 10;\n',
  });
  api = createGitRepository({ 'lib/rate.ts': 'export const RATE = 100;\n' });
  readers = [
    new GitCodeReader({ cwd: own.dir, commit: own.head('main') }),
    new GitCodeReader({ cwd: api.dir, commit: api.head('main') }),
  ];
  const root = temporaryDirectory('docwright-answer-tool-');
  mkdirSync(path.join(root, 'docs'));
  writeFileSync(path.join(root, 'docs/limits.mdx'), '# Limits\n\n100 jobs per hour.\n');
  writeFileSync(path.join(root, 'docs/logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1]));
  workspace = await Workspace.open(root, project, DEFAULT_LIMITS);
  workspace.code = {
    reader: gitCodeContext({
      readers: new Map([
        ['docs', readers[0]!],
        ['api', readers[1]!],
      ]),
      maxFileBytes: DEFAULT_LIMITS.maxFileBytes,
    }),
    repositories: ['docs', 'api'],
  };
  context = { root: workspace.root, signal: new AbortController().signal, workspace };
});
after(() => {
  for (const reader of readers) reader.close();
  own.close();
  api.close();
});

const call = (input: unknown) => runTool(answer, input, context);
async function refused(input: unknown): Promise<string> {
  try {
    const output = await call(input);
    assert.fail(`answer should be refused, got: ${output}`);
  } catch (error) {
    assert.ok(error instanceof ToolError, `expected a ToolError, got ${String(error)}`);
    return error.message;
  }
}
const cite = (path: string, startLine: number, endLine: number) => ({ path, startLine, endLine });

describe('answer', () => {
  test('citations of the docs on disk, the code outside docsDir and a context repository are taken, paths normalised', async () => {
    workspace.answered = null;
    const output = await call({
      text: '  100 jobs per hour, set in the code.  ',
      citations: [
        cite('./docs/limits.mdx', 3, 3),
        cite('src/limits.ts', 1, 2),
        cite('_context/api/lib/rate.ts', 1, 1),
      ],
    });
    assert.equal(output, 'Answered, with 3 citations.');
    assert.deepEqual(workspace.answered, {
      text: '100 jobs per hour, set in the code.',
      citations: [
        cite('docs/limits.mdx', 3, 3),
        cite('src/limits.ts', 1, 2),
        cite('_context/api/lib/rate.ts', 1, 1),
      ],
    });
  });

  test('every wrong citation is named with what is wrong, and nothing is taken', async () => {
    workspace.answered = null;
    const message = await refused({
      text: 'x',
      citations: [
        cite('docs/limits.mdx', 1, 1),
        cite('docs/quotas.mdx', 1, 1),
        cite('src/limits.ts', 2, 3),
        cite('docs/limits.mdx', 0, 1),
        cite('docs/limits.mdx', 3, 2),
        cite('_context/api/lib/none.ts', 1, 1),
        cite('_context/web/x.ts', 1, 1),
        cite('docs', 1, 1),
        cite('docs/logo.png', 1, 1),
        cite('../outside.mdx', 1, 1),
      ],
    });
    assert.equal(workspace.answered, null);
    // One problem a bullet (a message may go on over lines: "Did you mean…").
    const lines = message.split(/\n(?=- )/).slice(1);
    assert.equal(lines.length, 9, message);
    assert.match(message, /^The answer was not accepted; correct these citations/);
    assert.match(
      lines[0]!,
      /^- citations\[1\] \(docs\/quotas\.mdx:1-1\): File not found.*\n\s+docs\/limits\.mdx/,
    );
    assert.match(
      lines[1]!,
      /^- citations\[2\] \(src\/limits\.ts:2-3\): the file has 2 lines, so endLine 3 is past its end$/,
    );
    assert.match(lines[2]!, /^- citations\[3\] .*: startLine must be at least 1, not 0$/);
    assert.match(lines[3]!, /^- citations\[4\] .*: endLine 2 is before startLine 3$/);
    assert.match(lines[4]!, /^- citations\[5\] .*File not found: _context\/api\/lib\/none\.ts/);
    assert.match(lines[5]!, /^- citations\[6\] .*no context repository named "web"/);
    assert.match(lines[6]!, /^- citations\[7\] .*is a directory/);
    assert.match(lines[7]!, /^- citations\[8\] .*binary file/);
    assert.match(lines[8]!, /^- citations\[9\] \(\.\.\/outside\.mdx:1-1\): /);
  });

  test('bounds: the text, the number of citations, a path; an empty answer without citations is allowed', async () => {
    assert.match(
      await refused({ text: 'x'.repeat(MAX_ANSWER_CHARS + 1), citations: [] }),
      /text must be at most/,
    );
    assert.match(await refused({ text: ' ', citations: [] }), /text must not be empty/);
    const many = Array.from({ length: MAX_CITATIONS + 1 }, () => cite('docs/limits.mdx', 1, 1));
    assert.match(await refused({ text: 'x', citations: many }), /at most 20 citations/);
    assert.match(
      await refused({ text: 'x', citations: [cite('a'.repeat(1001), 1, 1)] }),
      /path must be at most/,
    );
    assert.match(
      await refused({ text: 'x', citations: [{ path: 'docs/limits.mdx', startLine: '1', endLine: 1 }] }),
      /startLine/,
    );
    assert.match(await refused({ text: 'x' }), /citations/);
    assert.equal(
      await call({ text: 'Nothing in the docs covers it.', citations: [] }),
      'Answered, with 0 citations.',
    );
  });
});

describe('an ask run is offered', () => {
  test('the reading tools and answer; a write or finish is a tool error that says why', () => {
    assert.deepEqual(
      ASK_TOOLS.map((t) => t.name),
      ['list_files', 'read_file', 'search', 'read_change', 'answer'],
    );
    assert.match(
      unknownToolError('edit_file', 'ask').message,
      /^edit_file is not available: this run answers a question and changes nothing\. The tools are: list_files, read_file, search, read_change, answer/,
    );
    assert.match(unknownToolError('shell', 'ask').message, /^There is no tool named "shell"/);
    assert.match(unknownToolError('answer', 'edit').message, /^There is no tool named "answer".*finish/);
  });

  test('a prompt that says to answer and cite, with where the code is; follow-ups carry the earlier answers', () => {
    const prompt = askSystemPrompt({
      project,
      siteMap: 'docs/limits.mdx',
      repositories: ['docs', 'api'],
    });
    assert.match(prompt, /Call answer once, last, with the answer .* and its citations/);
    assert.match(prompt, /You cannot change any file/);
    assert.match(prompt, /outside `docs` can be read at its real paths/);
    assert.match(prompt, /`_context\/api\/`/);
    assert.doesNotMatch(prompt, /finish/);
    assert.equal(questionMessage('Why?', []), 'Why?');
    const followUp = questionMessage('And per key?', [
      { prompt: 'How many jobs?', summary: '100 per hour.', error: null },
      { prompt: 'Which file?', summary: null, error: { code: 'no-answer', message: 'none' } },
    ]);
    assert.match(followUp, /1\. Question: How many jobs\?\n {3}Answer: 100 per hour\./);
    assert.match(followUp, /2\. Question: Which file\?\n {3}Answer: no answer \(no-answer: none\)/);
    assert.match(followUp, /Now answer this question:\nAnd per key\?$/);
  });
});
