// A DogBench dataset folder is someone else's (SPEC §18): a clone whose own git configuration
// sets a checkout filter, textconv, an external diff, core.fsmonitor and hooks, and whose partial
// clone's promisor remote listens on a port, is read without any of them running or anything
// connecting — and its item still runs. A missing object is an error naming it; links are refused.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ScriptedServer, startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { taskModel } from '../doubles/task-model.ts';
import { repository } from '../helpers/git-history.ts';
import { runCli } from '../helpers/process.ts';
import { temporaryDirectory } from '../helpers/temp.ts';

describe('eval --dogbench on a hostile dataset', () => {
  let dir: string;
  let markers: string;
  let model: ScriptedServer;
  let promisor: Server;
  let connections = 0;

  before(async () => {
    dir = temporaryDirectory('docwright-dogbench-hostile-');
    markers = path.join(dir, 'markers');
    mkdirSync(markers);
    promisor = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => promisor.listen(0, '127.0.0.1', resolve));
    const port = (promisor.address() as { port: number }).port;

    const clone = path.join(dir, 'repos', 'evil', 'docs');
    const [base, head] = repository(clone, [
      {
        files: {
          'docs/index.md': '# Docs\n\nHello.\n',
          'docs/guide.md': '# Guide\n',
          '.gitattributes': '* filter=evil diff=evil\n',
        },
      },
      { files: { 'docs/guide.md': '# Guide\n\nChanged.\n' } },
    ]) as [string, string];
    // Every way a clone's own configuration could run a command or reach out.
    const script = (name: string) => {
      const file = path.join(dir, `${name}.sh`);
      writeFileSync(file, `#!/bin/sh\ntouch "${path.join(markers, name)}"\ncat\n`);
      chmodSync(file, 0o755);
      return file;
    };
    const hooks = path.join(clone, '.git', 'hooks');
    for (const hook of ['post-checkout', 'pre-commit', 'post-index-change', 'reference-transaction'])
      writeFileSync(path.join(hooks, hook), `#!/bin/sh\ntouch "${path.join(markers, hook)}"\n`, {
        mode: 0o755,
      });
    const config = (...args: string[]) => execFileSync('git', ['config', ...args], { cwd: clone });
    config('filter.evil.smudge', script('smudge'));
    config('filter.evil.clean', script('clean'));
    config('filter.evil.required', 'true');
    config('diff.evil.textconv', script('textconv'));
    config('diff.external', script('external-diff'));
    config('core.fsmonitor', script('fsmonitor'));
    config('core.hooksPath', hooks);
    config('core.repositoryformatversion', '1');
    config('remote.origin.url', `http://127.0.0.1:${port}/evil.git`);
    config('remote.origin.promisor', 'true');
    config('extensions.partialClone', 'origin');
    // The second commit's new blob is missing, as in a partial clone that never fetched it.
    const blob = execFileSync('git', ['rev-parse', `${head}:docs/guide.md`], {
      cwd: clone,
      encoding: 'utf8',
    }).trim();
    rmSync(path.join(clone, '.git', 'objects', blob.slice(0, 2), blob.slice(2)));

    const docs = { repo_url: 'https://github.com/evil/docs', head_sha: null, paths: [] };
    const items = [
      {
        instance_id: 'evil-abstain',
        source_url: 'x',
        context: 'Nothing here needs docs.',
        docs: { ...docs, base_sha: base },
        code: null,
      },
      {
        instance_id: 'evil-missing',
        source_url: 'x',
        context: 'The guide changed.',
        docs: { ...docs, base_sha: head },
        code: null,
      },
    ];
    writeFileSync(path.join(dir, 'items.jsonl'), `${items.map((i) => JSON.stringify(i)).join('\n')}\n`);
    const rubrics = items.map((i) => ({
      instance_id: i.instance_id,
      expected_decision: 'abstain',
      rubric: null,
    }));
    writeFileSync(path.join(dir, 'rubrics.jsonl'), `${rubrics.map((r) => JSON.stringify(r)).join('\n')}\n`);
    model = await startOpenAIServer({
      fallback: taskModel([
        {
          match: 'Nothing here needs docs',
          steps: [
            toolCall('read_file', { path: 'docs/index.md' }),
            toolCall('finish', { title: 'Nothing', summary: 'No change needed.' }),
          ],
        },
      ]),
    });
  });
  after(async () => {
    await model.close();
    await new Promise((resolve) => promisor.close(resolve));
  });

  test('nothing of the clone runs, nothing connects, a missing object is named, and the item runs', async () => {
    const run = await runCli(
      [
        'eval',
        '--dogbench',
        dir,
        '--model',
        'openai-compatible/agent',
        '--judge',
        'openai-compatible/judge',
        '--json',
      ],
      { DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: model.url },
      '',
      { timeoutMs: 120_000 },
    );
    const doc = JSON.parse(run.stdout) as {
      tasks: { instance_id: string; overall: number; decision: string | null; error: string | null }[];
    };
    const byId = new Map(doc.tasks.map((t) => [t.instance_id, t]));
    assert.deepEqual(
      [byId.get('evil-abstain')!.decision, byId.get('evil-abstain')!.overall],
      ['abstain', 100],
    );
    const missing = byId.get('evil-missing')!;
    assert.equal(missing.overall, 0);
    assert.match(
      missing.error ?? '',
      /object [0-9a-f]{40} \(docs\/guide\.md at [0-9a-f]{40}\) is missing from .*evil\/docs/,
    );
    assert.deepEqual(
      readdirSync(markers),
      [],
      'no filter, textconv, diff, fsmonitor or hook of the clone ran',
    );
    assert.equal(connections, 0, 'the promisor remote was never contacted');
    assert.equal(run.code, 1, 'an item that could not run: exit 1');
  });

  test('symbolic links are refused: items.jsonl, and a clone that is a link', async () => {
    const linked = temporaryDirectory('docwright-dogbench-links-');
    symlinkSync(path.join(dir, 'items.jsonl'), path.join(linked, 'items.jsonl'));
    writeFileSync(path.join(linked, 'rubrics.jsonl'), '');
    const flags = ['--model', 'openai-compatible/x', '--judge', 'openai-compatible/j'];
    const env = { DOCWRIGHT_OPENAI_COMPATIBLE_BASE_URL: model.url };
    const refused = await runCli(['eval', '--dogbench', linked, ...flags], env, '');
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /items\.jsonl is a symbolic link/);

    const clones = temporaryDirectory('docwright-dogbench-links-');
    mkdirSync(path.join(clones, 'repos', 'evil'), { recursive: true });
    symlinkSync(path.join(dir, 'repos', 'evil', 'docs'), path.join(clones, 'repos', 'evil', 'docs'));
    writeFileSync(
      path.join(clones, 'items.jsonl'),
      `${(await import('node:fs')).readFileSync(path.join(dir, 'items.jsonl'), 'utf8').split('\n')[0]}\n`,
    );
    writeFileSync(
      path.join(clones, 'rubrics.jsonl'),
      '{"instance_id":"evil-abstain","expected_decision":"abstain","rubric":null}\n',
    );
    const run = await runCli(['eval', '--dogbench', clones, ...flags, '--json'], env, '');
    const doc = JSON.parse(run.stdout) as { tasks: { instance_id: string; error: string | null }[] };
    assert.match(doc.tasks[0]!.error ?? '', /is a symbolic link, which a dataset may not use/);
    assert.ok(!existsSync(path.join(markers, 'smudge')));
  });
});
