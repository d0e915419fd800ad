// The two bounds on a run's memory, each on its own: V8's heap cap (--max-old-space-size) and the
// watchdog on resident memory. Either alone stops a run that grows; with only one tested, the
// other could go missing unnoticed. Real agent processes, the scripted OpenAI-compatible model.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { AgentProcessLimits } from '../../src/config.ts';
import { loadConfig } from '../../src/config.ts';
import { AgentProcess } from '../../src/pipeline/agent-process.ts';
import { startOpenAIServer, toolCalls } from '../doubles/openai-server.ts';
import { temporaryDirectory } from '../helpers/temp.ts';

/** Far more than any run here grows to: a bound that can never be what stops it. */
const UNREACHABLE_MB = 100_000;

describe('the memory bounds of a run’s process, each alone', () => {
  /** Runs an agent whose model sends turn after turn of 50 MiB of file content, under `limits`. */
  async function grow(limits: Omit<AgentProcessLimits, 'unresponsiveMs'>): Promise<string> {
    const root = temporaryDirectory('docwright-agent-memory-');
    writeFileSync(path.join(root, 'index.md'), '# Home\n');
    const big = 'x'.repeat(2 * 1024 * 1024);
    const heavyTurn = () =>
      toolCalls(
        ...Array.from({ length: 25 }, (_, i) => ({
          name: 'write_file',
          input: { path: `b${i}.md`, content: big },
        })),
      );
    const model = await startOpenAIServer();
    // More than any bound lets through: only a memory bound can end the run (the token budget,
    // which counts this content, is out of reach too).
    model.push(...Array.from({ length: 12 }, heavyTurn));
    const config = loadConfig({ DOCWRIGHT_LOG_LEVEL: 'silent' });
    const agent = AgentProcess.spawn({ unresponsiveMs: 60_000, ...limits });
    try {
      await agent.run(
        {
          root,
          project: { docsDir: '.', writable: ['**/*.md'] },
          instruction: 'Grow',
          history: [],
          budgets: { ...config.agent, maxTokens: Number.MAX_SAFE_INTEGER, maxSteps: 1_000 },
          limits: config.agentLimits,
          signal: new AbortController().signal,
          emit: () => {},
        },
        { id: 'openai-compatible/scripted', options: { openaiCompatibleBaseUrl: model.url } },
      );
      return 'completed';
    } catch (error) {
      return (error as { code?: string }).code ?? String(error);
    } finally {
      agent.kill();
      await model.close();
    }
  }

  test('the heap cap alone stops a run that grows (the resident memory watchdog out of reach)', async () => {
    assert.equal(await grow({ memoryMb: 64, residentMb: UNREACHABLE_MB }), 'memory-limit-exceeded');
  });

  test('the resident memory watchdog alone stops a run that grows (the heap cap out of reach)', async () => {
    assert.equal(await grow({ memoryMb: 4_096, residentMb: 160 }), 'memory-limit-exceeded');
  });
});
