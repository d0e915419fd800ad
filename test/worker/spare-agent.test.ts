import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { SpareAgentProcess } from '../../src/worker/spare-agent.ts';
import { waitFor } from '../helpers/worker.ts';

/** This test process's agent children. */
const agentChildren = (): number[] => {
  try {
    return execFileSync('pgrep', ['-P', String(process.pid), '-f', 'agent-process'], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
};

test('a spare left unused is stopped after its idle time; close stops it and starts no other', async () => {
  const spares = new SpareAgentProcess(undefined, 1_000);
  try {
    spares.replenish();
    spares.replenish();
    const [spare] = await waitFor(() => (agentChildren().length === 1 ? agentChildren() : undefined));
    await waitFor(() => !existsSync(`/proc/${spare}`), {
      timeoutMs: 5_000,
      message: 'the idle spare to stop',
    });
    assert.deepEqual(agentChildren(), []);

    spares.replenish();
    const [second] = await waitFor(() => (agentChildren().length === 1 ? agentChildren() : undefined));
    const taken = spares.take();
    assert.equal(taken.pid, second, 'take() hands over the waiting spare');
    taken.kill();
    spares.close();
    spares.replenish();
    await waitFor(() => agentChildren().length === 0, { timeoutMs: 5_000 });
  } finally {
    spares.close();
  }
});
