import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { AgentProcess } from '../../src/pipeline/agent-process.ts';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import { SpareAgentProcess } from '../../src/pipeline/spare-agent.ts';
import { Worker } from '../../src/worker/worker.ts';
import { seedProject, startTestApp } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';
import { createJob, jobRow, waitFor } from '../helpers/worker.ts';

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
const alive = (pid: number | undefined) => pid !== undefined && existsSync(`/proc/${pid}`);
/** The one agent child not among `known`, once there is exactly one. */
const newChild = (known: (number | undefined)[] = []) =>
  waitFor(() => {
    const fresh = agentChildren().filter((pid) => !known.includes(pid));
    return fresh.length === 1 ? fresh[0] : undefined;
  });
const HOUR = 3_600_000;

describe('the spare agent process', () => {
  test('a spare left unused is stopped after its idle time; close stops it and starts no other', async () => {
    const spares = new SpareAgentProcess(undefined, 1_000);
    try {
      spares.replenish();
      spares.replenish();
      const [spare] = await waitFor(() => (agentChildren().length === 1 ? agentChildren() : undefined));
      await waitFor(() => !alive(spare), { timeoutMs: 5_000, message: 'the idle spare to stop' });
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

  test('take() hands the spare over once and forgets it: the next take gets another process, and the idle timer never stops a taken one', async () => {
    const spares = new SpareAgentProcess(undefined, 1_000);
    const taken: AgentProcess[] = [];
    try {
      spares.replenish();
      const spare = await newChild();
      taken.push(spares.take());
      assert.equal(taken[0]!.pid, spare);
      taken.push(spares.take());
      assert.notEqual(taken[1]!.pid, spare, 'two runs never share one process');
      // A new spare's idle timer is set after the taken one's was: once it has stopped the new
      // spare, the taken one's would have fired too, had take() left it armed.
      spares.replenish();
      const next = await newChild(taken.map((a) => a.pid));
      await waitFor(() => !alive(next), { timeoutMs: 5_000, message: 'the new spare to stop when idle' });
      assert.ok(alive(taken[0]!.pid) && taken[0]!.alive, 'the taken process still runs');
    } finally {
      for (const agent of taken) agent.kill();
      spares.close();
    }
  });

  test('close() stops the waiting spare at once', async () => {
    // Idle for an hour: only close() can stop it within the test.
    const spares = new SpareAgentProcess(undefined, HOUR);
    try {
      spares.replenish();
      const spare = await newChild();
      spares.close();
      await waitFor(() => !alive(spare), { timeoutMs: 5_000, message: 'close() to stop the spare' });
    } finally {
      spares.close();
    }
  });

  test(`worker.stop() stops the spare its runner started after a run (${testDialect})`, async () => {
    const t = await startTestApp();
    const worker = new Worker(t.app, { runner: createPipeline(t.app), pollMs: 50 });
    try {
      const { projectId, repository } = await seedProject(t.app, {
        model: 'openai-compatible/scripted',
        openaiCompatibleBaseUrl: 'http://127.0.0.1:9/v1',
      });
      // The run fails at its checkout, after it took an agent process: a spare is started after it.
      rmSync(repository, { recursive: true, force: true });
      worker.start();
      const jobId = await createJob(t.app, projectId);
      await waitFor(async () => (await jobRow(t.app, jobId)).status === 'failed' && worker.running === 0);
      assert.equal((await jobRow(t.app, jobId)).error_code, 'repository-not-found');
      const spare = await newChild();
      await worker.stop(0);
      await waitFor(() => !alive(spare), { timeoutMs: 5_000, message: 'worker.stop() to stop the spare' });
    } finally {
      await worker.stop(0);
      await t.close();
    }
  });
});
