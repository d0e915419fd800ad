// The pipeline's stages alone (src/pipeline/stage-*.ts), each given a RunContext and what the
// stages before it produced: resolve asks the hosts for the run's changes in order and shows them
// to the AgentJob; verify refuses a change that adds a secret the run knows, and lets one pass
// that only keeps a secret the base already had.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import type { AgentResult } from '../../src/agent/types.ts';
import { git } from '../../src/git/git.ts';
import type { Change, ChangeRef } from '../../src/git/hosts/change.ts';
import type { CodeHost } from '../../src/git/hosts/host.ts';
import { HostError } from '../../src/git/hosts/index.ts';
import type { RunContext } from '../../src/pipeline/run-context.ts';
import { RunSecrets } from '../../src/pipeline/run-secrets.ts';
import type { Workspace } from '../../src/pipeline/stage-checkout.ts';
import { resolveStage } from '../../src/pipeline/stage-resolve.ts';
import { verifyStage } from '../../src/pipeline/stage-verify.ts';
import { temporaryDirectory } from '../helpers/temp.ts';

const SECRET = 'ghp_stageSecret0123456789abcdefABCDEF';

/** A context with only what the stages under test read; the rest is never touched. */
function stageContext(parts: Partial<RunContext>): RunContext {
  const runSecrets = parts.runSecrets ?? new RunSecrets([SECRET]);
  const events: { type: string; data: unknown }[] = [];
  return {
    run: { id: 'run_1', seq: 1, prompt: 'p', attempt: 1, history: [], spent: {} as never, changes: [] },
    tools: { signal: new AbortController().signal } as RunContext['tools'],
    contexts: [],
    runSecrets,
    redact: runSecrets.redact,
    record: async (type, data) => void events.push({ type, data }),
    hostOf: () => undefined,
    gitOptions: { allowLinkLocal: false },
    ...parts,
  } as RunContext;
}

const change = (number: number): Change => ({
  kind: 'pull-request',
  number,
  url: `https://code.test/api/pull/${number}`,
  title: `Change ${number}`,
  description: '',
  author: 'ada',
  state: 'merged',
  baseRef: 'main',
  headRef: `topic-${number}`,
  baseSha: null,
  headSha: String(number).repeat(40).slice(0, 40),
  files: [],
  totalFiles: 0,
  commits: [],
  totalCommits: 0,
  notes: [],
});

test('resolve: each change from its repository’s host, in order; a missing one ends the run', async () => {
  const asked: ChangeRef[] = [];
  const api = {
    getChange: async (ref: ChangeRef) => {
      asked.push(ref);
      if (ref.kind === 'pull-request' && ref.number === 404)
        throw new HostError('ref-not-found', 'no such pull request');
      return change(ref.kind === 'pull-request' ? ref.number : 0);
    },
  } as unknown as CodeHost;
  const recorded: string[] = [];
  const ctx = stageContext({
    run: {
      ...stageContext({}).run,
      changes: [
        { repository: 'api', kind: 'pull-request', number: 7 },
        { repository: 'api', kind: 'pull-request', number: 3 },
      ],
    },
    hostOf: (name) => (name === 'api' ? api : undefined),
    record: async (type) => void recorded.push(type),
  });
  const resolved = await resolveStage(ctx, async () => ({ contextRepositories: [], changes: [] }));
  assert.deepEqual(
    resolved.changes.map((c) => [c.repository, c.number]),
    [
      ['api', 7],
      ['api', 3],
    ],
  );
  assert.deepEqual(resolved.jobChanges[0], {
    repository: 'api',
    kind: 'pull-request',
    number: 7,
    sha: '7'.repeat(40),
    url: 'https://code.test/api/pull/7',
    title: 'Change 7',
  });
  assert.deepEqual(recorded, ['changes.resolved']);

  const missing = stageContext({
    run: { ...ctx.run, changes: [{ repository: 'api', kind: 'pull-request', number: 404 }] },
    hostOf: ctx.hostOf,
  });
  await assert.rejects(resolveStage(missing), (error: HostError) => {
    assert.equal(error.code, 'change-unavailable');
    assert.match(error.message, /api#404: no such pull request/);
    return true;
  });
});

test('verify: a change adding a known secret is refused, one keeping the base’s is not', async () => {
  const dir = temporaryDirectory('docwright-stage-verify-');
  await git(['init', '-q', '-b', 'main'], { cwd: dir });
  await writeFile(path.join(dir, 'old.md'), `token: ${SECRET}\n`);
  await git(['add', '.'], { cwd: dir });
  await git(['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'base'], { cwd: dir });
  await writeFile(path.join(dir, 'old.md'), `token: ${SECRET}\nmore\n`);
  await writeFile(path.join(dir, 'new.md'), `Use ${SECRET} to sign in.\n`);
  const workspace = { checkout: { dir }, env: undefined } as unknown as Workspace;
  const result = (files: string[]): AgentResult => ({
    title: 't',
    summary: 's',
    changedFiles: files,
    usage: { inputTokens: 0, outputTokens: 0 },
    checks: [],
  });
  const ctx = stageContext({});

  assert.equal(await verifyStage(ctx, workspace, result(['old.md'])), undefined, 'the base had it');
  const refused = await verifyStage(ctx, workspace, result(['old.md', 'new.md']));
  assert.equal(refused?.status, 'failed');
  assert.equal(refused?.status === 'failed' && refused.error.code, 'secret-in-change');
  assert.match(JSON.stringify(refused), /new\.md/);
  assert.doesNotMatch(JSON.stringify(refused), new RegExp(SECRET), 'the file is named, never the secret');
});
