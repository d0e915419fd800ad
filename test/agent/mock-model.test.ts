import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { MockLanguageModelV4 } from 'ai/test';
import { runAgent } from '../../src/agent/loop.ts';
import { type AgentEvent, DEFAULT_BUDGETS, DEFAULT_LIMITS } from '../../src/agent/types.ts';

type GenerateResult = Awaited<ReturnType<MockLanguageModelV4['doGenerate']>>;

const usage = {
  inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 10, text: 10, reasoning: 0 },
};
let id = 0;
/** One scripted model turn that calls a tool, in the provider specification's shape. */
const call = (toolName: string, input: unknown): GenerateResult => ({
  content: [{ type: 'tool-call', toolCallId: `call_${++id}`, toolName, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage,
  warnings: [],
});

/** The text of every tool result the model was sent in its last prompt, in order. */
function toolResults(model: MockLanguageModelV4): string[] {
  const prompt = model.doGenerateCalls.at(-1)!.prompt;
  return prompt
    .filter((m) => m.role === 'tool')
    .flatMap((m) => m.content)
    .map((part) => {
      const output = (part as { output: { value: unknown } }).output;
      return String(output.value);
    });
}

test('the AI SDK mock model drives scripted tool calls: numbered reads, exact edits, helpful errors', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'docwright-mock-'));
  try {
    writeFileSync(path.join(root, 'page.md'), '# Title\n\nPrice: $5\nPrice: $5\n');
    const model = new MockLanguageModelV4({
      doGenerate: [
        call('read_file', { path: 'page.md' }),
        call('edit_file', { path: 'page.md', old_string: 'Price: $5', new_string: 'Price: $$6 ($&)' }),
        call('edit_file', { path: 'page.md', old_string: 'Cost: $5', new_string: 'x' }),
        call('edit_file', {
          path: 'page.md',
          old_string: 'Price: $5',
          new_string: 'Price: $$6 ($&)',
          replace_all: true,
        }),
        call('read_file', { path: 'pages.md' }),
        call('finish', { title: 'Raise the price', summary: 'Updates both prices.' }),
      ],
    });
    const events: AgentEvent[] = [];
    const result = await runAgent(
      {
        root,
        project: { docsDir: '.', writable: ['**/*.md'] },
        instruction: 'Raise the price.',
        history: [],
        budgets: DEFAULT_BUDGETS,
        limits: DEFAULT_LIMITS,
        signal: new AbortController().signal,
        emit: (e) => void events.push(e),
      },
      model,
    );
    const results = toolResults(model);
    assert.match(results[0]!, /^ {5}1\t# Title$/m, 'read_file numbers its lines');
    assert.match(
      results[1]!,
      /occurs 2 times in page\.md:\n {5}3\tPrice: \$5\n {5}4\tPrice: \$5\n/,
      'a non-unique match names every line',
    );
    assert.match(
      results[2]!,
      /not found in page\.md\.\nThe lines closest.*\n {5}3\tPrice: \$5/,
      'a missing match names the closest lines',
    );
    assert.match(
      results[4]!,
      /File not found: pages\.md\. Did you mean.*\n {2}page\.md/,
      'a missing file gets close matches',
    );
    assert.equal(
      readFileSync(path.join(root, 'page.md'), 'utf8'),
      '# Title\n\nPrice: $$6 ($&)\nPrice: $$6 ($&)\n',
      '$ patterns are inserted literally',
    );
    assert.deepEqual(result.changedFiles, ['page.md']);
    assert.deepEqual(result.usage, { inputTokens: 600, outputTokens: 60 });
    assert.equal(model.doGenerateCalls[0]!.tools?.length, 9);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('budgets are the job’s: turns and tokens of earlier runs count, and each turn’s tokens are told as they are spent', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'docwright-mock-'));
  try {
    writeFileSync(path.join(root, 'page.md'), '# Title\n');
    const input = (spent: { steps: number; tokens: number; durationMs: number }, told: unknown[]) => ({
      root,
      project: { docsDir: '.', writable: ['**/*.md'] },
      instruction: 'Read the page.',
      history: [],
      budgets: { ...DEFAULT_BUDGETS, maxSteps: 5, maxTokens: 1_000, maxDurationMs: 60_000 },
      spent,
      limits: DEFAULT_LIMITS,
      signal: new AbortController().signal,
      emit: () => {},
      onUsage: (turn: unknown) => void told.push(turn),
    });
    const reads = () =>
      new MockLanguageModelV4({
        doGenerate: Array.from({ length: 5 }, () => call('read_file', { path: 'page.md' })),
      });

    // Earlier runs used four of the job's five turns: this run gets one.
    const told: unknown[] = [];
    const turns = reads();
    await assert.rejects(
      runAgent(input({ steps: 4, tokens: 0, durationMs: 0 }, told), turns),
      (error: Error & { code?: string }) => {
        assert.equal(error.code, 'budget-exceeded');
        assert.match(error.message, /5 model turns \(4 in earlier runs\)/);
        return true;
      },
    );
    assert.equal(turns.doGenerateCalls.length, 1);
    assert.deepEqual(told, [{ inputTokens: 100, outputTokens: 10 }], 'the one turn’s tokens, told at once');

    // Earlier runs used 900 of 1,000 tokens: the first turn (110) passes the budget.
    const tokens = reads();
    await assert.rejects(
      runAgent(input({ steps: 0, tokens: 900, durationMs: 0 }, []), tokens),
      /1000 tokens \(900 in earlier runs\)/,
    );
    assert.equal(tokens.doGenerateCalls.length, 1);

    // Earlier runs used the whole agent time: no model call at all.
    const time = reads();
    await assert.rejects(
      runAgent(input({ steps: 0, tokens: 0, durationMs: 60_000 }, []), time),
      /1 min of agent time/,
    );
    assert.equal(time.doGenerateCalls.length, 0);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
