/**
 * A server killed while its push waits on the host (issue 9, finding 6): that push may still
 * land — before the retried attempt clones, while it works, or after it pushed. Whichever, the
 * job ends with exactly one pull request holding exactly one attempt's change. Real processes:
 * two `docwright serve`, a smart-HTTP git server whose pre-receive hook holds the first push,
 * the GitHub API double, and a scripted model that writes a different page on each attempt.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import {
  type RecordedRequest,
  type ScriptedServer,
  startOpenAIServer,
  toolCall,
} from '../doubles/openai-server.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { testDialect } from '../helpers/database.ts';
import { type HostedRepository, startHostedRepository } from '../helpers/hosts.ts';
import { type ServerProcess, startServerProcess } from '../helpers/process.ts';
import { runCheckouts, waitFor } from '../helpers/worker.ts';

describe(`a server killed mid-push, on ${testDialect}`, () => {
  let t: TestApp;
  let model: ScriptedServer;
  let hosted: HostedRepository;
  let control: string;
  const servers: ServerProcess[] = [];

  before(async () => {
    t = await startTestApp();
  });
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.stop('SIGKILL');
    await model?.close();
    await hosted?.close();
    if (control) rmSync(control, { recursive: true, force: true });
  });
  after(() => t.close());

  /**
   * A hosted repository whose pre-receive hook holds the first push until `release()`, and a
   * model that writes `attempt-<n>.md` on the n-th conversation it sees start.
   */
  async function setUp() {
    control = mkdtempSync(path.join(tmpdir(), 'docwright-push-crash-'));
    hosted = await startHostedRepository('github', { 'index.md': '# Home\n' });
    const hook = path.join(hosted.git.root, `${hosted.name}.git`, 'hooks', 'pre-receive');
    const held = path.join(control, 'held');
    const released = path.join(control, 'released');
    writeFileSync(
      hook,
      `#!/bin/sh\ncat >/dev/null\nif [ ! -e '${held}' ]; then\n  touch '${held}'\n  while [ ! -e '${released}' ]; do sleep 0.05; done\nfi\n`,
    );
    chmodSync(hook, 0o755);
    let attempts = 0;
    const respond = (request: RecordedRequest) => {
      const messages = request.body.messages as { role: string }[];
      if (!messages.some((m) => m.role === 'tool')) {
        attempts++;
        return toolCall('write_file', { path: `attempt-${attempts}.md`, content: `# Attempt ${attempts}\n` });
      }
      return toolCall('finish', { title: 'Add a page', summary: 'Adds the page.' });
    };
    model = await startOpenAIServer();
    model.push(...Array.from({ length: 20 }, () => respond));
    const project = await t.app.projects.create({
      name: 'Docs',
      repository: hosted.repository,
      host: 'github',
      apiUrl: hosted.apiUrl,
      token: hosted.token,
      ref: 'main',
      model: 'openai-compatible/scripted',
      openaiCompatibleBaseUrl: model.url,
      rateLimit: 1000,
    });
    // Checkouts go under `control`, so that the test sees what a killed server leaves behind.
    const env = { ...t.database.env, DOCWRIGHT_LEASE_SECONDS: '1', TMPDIR: control };
    return {
      projectId: project.id,
      start: async () => {
        const server = await startServerProcess(env);
        servers.push(server);
        return server;
      },
      heldPush: () => existsSync(held),
      release: () => writeFileSync(released, ''),
      branchTip: (branch: string) => {
        try {
          return hosted.git
            .git(hosted.name, 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}`)
            .trim();
        } catch {
          return '';
        }
      },
    };
  }

  /** Kills the first server while the host holds its push, and starts a second one. */
  async function crashMidPush(setup: Awaited<ReturnType<typeof setUp>>) {
    const first = await setup.start();
    const id = (await t.app.jobs.create(setup.projectId, { prompt: 'Add a page' })).job.id;
    await waitFor(async () => setup.heldPush() || undefined, {
      timeoutMs: 30_000,
      message: () => `the push never reached the hook\n${first.output().slice(-2000)}`,
    });
    await first.stop('SIGKILL');
    return { id, branch: `docwright/${id.slice(-8)}` };
  }

  async function assertOnePullWithOneAttempt(projectId: string, id: string, branch: string) {
    const job = await waitFor(
      async () => {
        const j = await t.app.jobs.get(projectId, id);
        return j.status === 'active' ? undefined : j;
      },
      { timeoutMs: 60_000, message: () => `job still active\n${servers.at(-1)?.output().slice(-3000)}` },
    );
    assert.equal(job.status, 'completed', JSON.stringify(job.error));
    assert.equal(hosted.pulls().length, 1, 'exactly one pull request');
    assert.equal(hosted.pulls()[0]!.head, branch);
    assert.equal(hosted.git.git(hosted.name, 'rev-list', '--count', `main..${branch}`).trim(), '1');
    const changed = hosted.git.git(hosted.name, 'diff', '--name-only', `main..${branch}`).trim().split('\n');
    assert.equal(changed.length, 1, `one attempt's change, got ${changed.join(', ')}`);
    assert.match(changed[0]!, /^attempt-\d\.md$/);
    return changed[0]!;
  }

  test('the held push lands before the retry clones: the retry starts before it and replaces it', async () => {
    const setup = await setUp();
    const { id, branch } = await crashMidPush(setup);
    const [left] = runCheckouts(control);
    assert.ok(left, 'the killed server could not remove its checkout');
    setup.release();
    await waitFor(async () => setup.branchTip(branch) || undefined, { timeoutMs: 10_000 });
    await setup.start();
    assert.equal(await assertOnePullWithOneAttempt(setup.projectId, id, branch), 'attempt-2.md');
    // The next server removed what the killed one left (and its own checkout is gone too).
    await waitFor(async () => runCheckouts(control).length === 0 || undefined, { timeoutMs: 5_000 });
    assert.equal(existsSync(path.join(control, path.dirname(left))), false);
  });

  test('the held push lands while the retry works: the retry’s push replaces it', async () => {
    const setup = await setUp();
    const { id, branch } = await crashMidPush(setup);
    // Hold the retry's push until the first one has landed.
    let retryPushHeld = false;
    const releaseRetryPush = hosted.git.hold({
      match: (request) => request.method === 'POST' && request.url.includes('git-receive-pack'),
      onHeld: () => {
        retryPushHeld = true;
      },
    });
    await setup.start();
    await waitFor(async () => retryPushHeld || undefined, { timeoutMs: 30_000 });
    setup.release();
    await waitFor(async () => setup.branchTip(branch) || undefined, { timeoutMs: 10_000 });
    releaseRetryPush();
    assert.equal(await assertOnePullWithOneAttempt(setup.projectId, id, branch), 'attempt-2.md');
  });

  test('the held push lands after the retry pushed: it is refused, the retry’s change stays', async () => {
    const setup = await setUp();
    const { id, branch } = await crashMidPush(setup);
    await setup.start();
    const change = await assertOnePullWithOneAttempt(setup.projectId, id, branch);
    setup.release();
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(change, 'attempt-2.md');
    assert.equal(hosted.git.git(hosted.name, 'rev-list', '--count', `main..${branch}`).trim(), '1');
    assert.equal(
      hosted.git.git(hosted.name, 'diff', '--name-only', `main..${branch}`).trim(),
      'attempt-2.md',
    );
  });
});
