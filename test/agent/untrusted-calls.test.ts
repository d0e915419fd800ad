/**
 * What a model may send and what it gets back: every call below ended a job or stalled the
 * process before (issue 9, findings 1, 2, 5 and 8). Each now gets a tool error or a budget
 * failure with a clear message, and nothing else.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { MockLanguageModelV4 } from 'ai/test';
import { runAgent } from '../../src/agent/loop.ts';
import { AGENT_TOOLS, runTool } from '../../src/agent/tools/index.ts';
import {
  type AgentEvent,
  AgentFailure,
  DEFAULT_BUDGETS,
  DEFAULT_LIMITS,
  ToolError,
} from '../../src/agent/types.ts';
import { Workspace } from '../../src/agent/workspace.ts';

type GenerateResult = Awaited<ReturnType<MockLanguageModelV4['doGenerate']>>;

const temporary: string[] = [];
after(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

function tempRepo(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'docwright-untrusted-'));
  temporary.push(root);
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), content);
  }
  return root;
}

async function tools(root: string, limits = DEFAULT_LIMITS) {
  const workspace = await Workspace.open(root, { docsDir: '.', writable: ['**/*.md'] }, limits);
  const context = { root: workspace.root, signal: new AbortController().signal, workspace };
  const byName = (name: string) => AGENT_TOOLS.find((t) => t.name === name)!;
  return {
    workspace,
    run: (name: string, input: unknown) => runTool(byName(name), input, context),
    async fail(name: string, input: unknown): Promise<string> {
      try {
        await runTool(byName(name), input, context);
      } catch (error) {
        assert.ok(error instanceof ToolError, `expected a ToolError, got ${String(error)}`);
        return error.message;
      }
      return assert.fail(`${name} should have failed`);
    },
  };
}

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
let callId = 0;
/** One model turn calling each of `calls` (an input given as a string is sent as that JSON text). */
const turn = (...calls: [string, unknown][]): GenerateResult => ({
  content: calls.map(([toolName, input]) => ({
    type: 'tool-call' as const,
    toolCallId: `c${++callId}`,
    toolName,
    input: typeof input === 'string' ? input : JSON.stringify(input),
  })),
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage,
  warnings: [],
});

describe('untrusted tool calls', () => {
  test('a name over 255 bytes, or a path over 4 KiB, is a tool error (it ended jobs with ENAMETOOLONG)', async () => {
    const t = await tools(tempRepo({ 'a.md': 'x\n' }));
    const long = `${'n'.repeat(300)}.md`;
    assert.match(await t.fail('write_file', { path: long, content: 'x' }), /names may be at most 255 bytes/);
    assert.match(await t.fail('read_file', { path: `docs/${long}` }), /names may be at most 255 bytes/);
    assert.match(
      await t.fail('list_files', { path: `${'d/'.repeat(2100)}x` }),
      /paths may be at most 4096 bytes/,
    );
  });

  test('a write inside a submodule (checked out or not) is a tool error; an emptied folder is not', async () => {
    const root = tempRepo({ 'docs/a.md': 'a\n', 'vendored/.git': 'gitdir: ../.git/modules/vendored\n' });
    mkdirSync(path.join(root, 'empty-submodule'));
    const t = await tools(root);
    assert.equal(
      await t.fail('write_file', { path: 'empty-submodule/page.md', content: 'x' }),
      'Cannot write "empty-submodule/page.md": empty-submodule is a git submodule (another repository); its files cannot be changed here.',
    );
    assert.match(
      await t.fail('write_file', { path: 'vendored/deep/page.md', content: 'x' }),
      /vendored is a git submodule/,
    );
    // docs/ becomes empty when its only page moves away; writing there again is fine.
    await t.run('read_file', { path: 'docs/a.md' });
    await t.run('move_file', { from: 'docs/a.md', to: 'b.md' });
    assert.match(await t.run('write_file', { path: 'docs/c.md', content: 'c\n' }), /^Created docs\/c\.md/);
    assert.equal(existsSync(path.join(root, 'empty-submodule/page.md')), false);
  });

  test('a real gitlink from git: the run refuses to write under it', async () => {
    const root = tempRepo({ 'index.md': '# Home\n' });
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'protocol.file.allow=always', ...args], { cwd: root, stdio: 'pipe' });
    git('init', '-q', '-b', 'main');
    git('update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},sub`);
    git('add', 'index.md');
    git('-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-qm', 'init');
    const clone = mkdtempSync(path.join(tmpdir(), 'docwright-untrusted-'));
    temporary.push(clone);
    execFileSync('git', ['clone', '-q', root, clone], { stdio: 'pipe' });
    const t = await tools(clone);
    assert.match(await t.fail('write_file', { path: 'sub/page.md', content: 'x' }), /sub is a git submodule/);
  });

  test('edit_file replace_all that would grow a file past its cap is refused before the text is built', async () => {
    const t = await tools(tempRepo({ 'big.md': 'a'.repeat(400_000) }));
    await t.run('read_file', { path: 'big.md', limit: 1 });
    const before = process.memoryUsage().heapUsed;
    assert.equal(
      await t.fail('edit_file', {
        path: 'big.md',
        old_string: 'a',
        new_string: 'b'.repeat(2_000),
        replace_all: true,
      }),
      'Cannot write "big.md": the file would be 762.9 MiB, over the limit of 1 MiB per file.',
    );
    // 800 MB were never allocated (the old code built the string first; a bigger one threw RangeError).
    assert.ok(process.memoryUsage().heapUsed - before < 200 * 1024 * 1024);
    assert.equal(readFileSync(path.join(t.workspace.root, 'big.md'), 'utf8').length, 400_000);
  });

  test('many occurrences are listed without re-scanning the file for each (it was quadratic)', async () => {
    const t = await tools(tempRepo({ 'many.md': 'x\n'.repeat(300_000) }));
    await t.run('read_file', { path: 'many.md', limit: 1 });
    const message = await t.fail('edit_file', { path: 'many.md', old_string: 'x', new_string: 'y' });
    assert.match(message, /^old_string occurs 300000 times in many\.md:\n {5}1\tx\n/);
    assert.match(message, /\n…and 299990 more, at lines 11, 12, .*, 50 and 299950 others\.\n/);
  });

  test('old_string of like lines in a file of like lines: the comparisons are bounded, the call refused', async () => {
    // Each of the ~1,600 places matches all but the indentation of the last line: 400 lines to
    // compare at each, past the bound of 500,000 line comparisons.
    const t = await tools(tempRepo({ 'like.md': '  a\n'.repeat(2_000) }));
    await t.run('read_file', { path: 'like.md', limit: 1 });
    const message = await t.fail('edit_file', {
      path: 'like.md',
      old_string: `${' a\n'.repeat(399)}   a`,
      new_string: 'x',
    });
    assert.match(
      message,
      /old_string may match too many places in like\.md to tell which one is meant\. Copy old_string exactly/,
    );
  });

  test('the number of files one run changes is capped', async () => {
    const t = await tools(tempRepo({}), { ...DEFAULT_LIMITS, maxChangedFiles: 3 });
    for (const name of ['a', 'b', 'c']) await t.run('write_file', { path: `${name}.md`, content: name });
    assert.equal(
      await t.fail('write_file', { path: 'd.md', content: 'd' }),
      'Cannot change "d.md": this run has already changed 3 files, the most one run may change. Finish with what is done, or change fewer files.',
    );
    // Files already changed can still be changed again.
    await t.run('write_file', { path: 'a.md', content: 'a2' });
  });

  test('any other failure of a tool comes back as a tool error naming it', async () => {
    const root = tempRepo({ 'locked/page.md': 'x\n' });
    const t = await tools(root);
    // A directory where a file should be: EISDIR from the file system, not a crash.
    mkdirSync(path.join(root, 'dir.md'));
    assert.match(await t.fail('write_file', { path: 'dir.md', content: 'x' }), /is a directory/);
  });
});

describe('untrusted model turns', () => {
  const input = (root: string, emit: (e: AgentEvent) => void, budgets = {}) => ({
    root,
    project: { docsDir: '.', writable: ['**/*.md'] },
    instruction: 'Edit.',
    history: [],
    budgets: { ...DEFAULT_BUDGETS, ...budgets },
    limits: DEFAULT_LIMITS,
    signal: new AbortController().signal,
    emit,
  });

  test('a turn with 2,000 tool calls runs the first 50; the rest are answered "not run", one event says so', async () => {
    const root = tempRepo({});
    const writes: [string, unknown][] = Array.from({ length: 2_000 }, (_, i) => [
      'write_file',
      { path: `p${i}.md`, content: 'x' },
    ]);
    const model = new MockLanguageModelV4({
      doGenerate: [turn(...writes), turn(['finish', { title: 'T', summary: 'S' }])],
    });
    const events: AgentEvent[] = [];
    const result = await runAgent(
      input(root, (e) => void events.push(e)),
      model,
    );
    assert.equal(result.changedFiles.length, 50);
    assert.equal(events.filter((e) => e.type === 'agent.tool_call').length, 51);
    assert.deepEqual(events.find((e) => e.type === 'agent.tool_calls_skipped')?.data, {
      step: 1,
      count: 1_950,
      limit: 50,
    });
    // Every call got an answer (the provider APIs require one per call), in call order.
    const answers = model.doGenerateCalls[1]!.prompt.filter((m) => m.role === 'tool').flatMap(
      (m) => m.content,
    );
    assert.equal(answers.length, 2_000);
    assert.match(
      String((answers[50] as { output: { value: unknown } }).output.value),
      /^Error: not run\. At most 50/,
    );
  });

  test('a run that records its budget of events fails with budget-exceeded', async () => {
    const root = tempRepo({ 'a.md': 'a\n' });
    const reads = Array.from({ length: 30 }, () => turn(['read_file', { path: 'a.md' }]));
    const model = new MockLanguageModelV4({ doGenerate: reads });
    const events: AgentEvent[] = [];
    await assert.rejects(
      runAgent(
        input(root, (e) => void events.push(e), { maxEvents: 25 }),
        model,
      ),
      (error: unknown) =>
        error instanceof AgentFailure &&
        error.code === 'budget-exceeded' &&
        error.message === 'the run recorded 25 transcript events without finishing',
    );
    assert.equal(events.length, 25);
  });

  test('huge or nested tool inputs are recorded as bounded text', async () => {
    const root = tempRepo({});
    const nested = `${'['.repeat(1_000)}"x"${']'.repeat(1_000)}`;
    const model = new MockLanguageModelV4({
      doGenerate: [
        turn(['write_file', `{"path":{"deep":${nested}},"content":"${'y'.repeat(50_000)}"}`]),
        turn(['finish', { title: 'T', summary: 'S' }]),
      ],
    });
    const events: AgentEvent[] = [];
    await runAgent(
      input(root, (e) => void events.push(e)),
      model,
    );
    const recorded = events.find((e) => e.type === 'agent.tool_call')!;
    assert.ok(JSON.stringify(recorded.data).length < 6_000);
    const answer = events.find((e) => e.type === 'agent.tool_result')!.data as {
      ok: boolean;
      output: string;
    };
    assert.deepEqual(answer.ok, false);
    assert.match(answer.output, /^Error: Invalid input for write_file: path:/);
  });

  test('a response too deep for the model SDK itself fails the run with a model code, not a crash', async () => {
    const root = tempRepo({});
    const nested = `${'['.repeat(20_000)}"x"${']'.repeat(20_000)}`;
    const model = new MockLanguageModelV4({ doGenerate: [turn(['write_file', `{"path":${nested}}`])] });
    await assert.rejects(
      runAgent(
        input(root, () => {}),
        model,
      ),
      (error: unknown) => error instanceof AgentFailure && error.code === 'model-unavailable',
    );
  });
});
