import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runAgent } from '../../src/agent/loop.ts';
import { resolveModel } from '../../src/agent/model-resolution.ts';
import {
  type AgentEvent,
  AgentFailure,
  type AgentInput,
  DEFAULT_BUDGETS,
  DEFAULT_LIMITS,
} from '../../src/agent/types.ts';
import {
  httpError,
  rateLimited,
  reply,
  type ScriptEntry,
  type ScriptedServer,
  startOpenAIServer,
  toolCall,
  toolCalls,
} from '../doubles/openai-server.ts';
import { mintlifySiteFiles, writeMintlifySite } from '../helpers/mintlify-site.ts';

/** A Mintlify site of more than a hundred pages (test/helpers/mintlify-site.ts) as a git repository. */
function site(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'docwright-agent-'));
  writeMintlifySite(dir);
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
  execFileSync('git', ['add', '-A'], { cwd: dir });
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'init'], {
    cwd: dir,
  });
  return dir;
}

/** Files that differ from the commit (git's view, independent of the agent's bookkeeping). */
const gitChanges = (dir: string) =>
  execFileSync('git', ['status', '--porcelain', '-uall'], { cwd: dir, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((l) => l.slice(3))
    .sort();

describe('the docs agent, driven by a scripted OpenAI-compatible server', () => {
  let server: ScriptedServer;
  const dirs: string[] = [];
  before(async () => {
    server = await startOpenAIServer();
  });
  after(async () => {
    await server.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function run(script: ScriptEntry[], overrides: Partial<AgentInput> = {}) {
    const root = site();
    dirs.push(root);
    server.push(...script);
    const events: AgentEvent[] = [];
    const model = resolveModel('openai-compatible/test-model', {
      openaiCompatibleBaseUrl: server.url,
      env: {},
    });
    const input: AgentInput = {
      root,
      project: { docsDir: '.', writable: ['**/*.md', '**/*.mdx', 'docs.json'] },
      instruction: 'Do the documentation change.',
      history: [],
      budgets: { ...DEFAULT_BUDGETS, maxDurationMs: 30_000 },
      limits: DEFAULT_LIMITS,
      signal: new AbortController().signal,
      emit: (e) => void events.push(e),
      ...overrides,
    };
    try {
      const result = await runAgent({ ...input, root }, model);
      return { root, events, result, error: undefined };
    } catch (error) {
      return { root, events, result: undefined, error: error as AgentFailure };
    } finally {
      assert.equal(server.remaining(), 0, 'the script was played to the end');
    }
  }

  test('adds a page and registers it in docs.json', async () => {
    const docs = JSON.parse(mintlifySiteFiles()['docs.json']!);
    const nav = JSON.stringify(docs.navigation);
    const anchor = '"quickstart"';
    assert.ok(nav.includes(anchor));
    const { root, result, events } = await run([
      toolCall('write_file', {
        path: 'guides/rate-limits.mdx',
        content: '---\ntitle: "Rate limits"\n---\n\nRequests are limited to 100 per hour.\n',
      }),
      toolCall('read_file', { path: 'docs.json' }),
      toolCall('edit_file', {
        path: 'docs.json',
        old_string: '"quickstart",',
        new_string: '"quickstart",\n              "guides/rate-limits",',
      }),
      toolCall('finish', {
        title: 'Document rate limits',
        summary: 'Adds a rate limits page and links it from Get started.',
      }),
    ]);
    assert.ok(result);
    assert.deepEqual(result.changedFiles, ['docs.json', 'guides/rate-limits.mdx']);
    assert.deepEqual(gitChanges(root), ['docs.json', 'guides/rate-limits.mdx']);
    assert.equal(result.title, 'Document rate limits');
    assert.ok(result.usage.inputTokens > 0);
    const validation = events.filter((e) => e.type === 'agent.validation');
    assert.deepEqual(
      validation.map((e) => e.data.ok),
      [true],
    );
    // What the model was told: the tools of docs/agent.mdx and the site map.
    const first = server.requests.at(-4)!.body;
    assert.deepEqual(
      first.tools.map((t: { function: { name: string } }) => t.function.name),
      [
        'list_files',
        'read_file',
        'search',
        'write_file',
        'edit_file',
        'delete_file',
        'move_file',
        'read_change',
        'finish',
      ],
    );
    assert.match(JSON.stringify(first.messages[0]), /site_map/);
  });

  test('an edit that breaks MDX is caught and repaired', async () => {
    const { root, result, events } = await run([
      toolCall('read_file', { path: 'index.mdx' }),
      (req) => {
        const page = readFileSync(path.join(dirs.at(-1)!, 'index.mdx'), 'utf8');
        const line = page
          .split('\n')
          .find(
            (l) => l.trim().length > 0 && !l.startsWith('---') && !l.includes(':') && !l.startsWith('import'),
          )!;
        void req;
        return toolCall('edit_file', {
          path: 'index.mdx',
          old_string: line,
          new_string: `${line}\n\n<Note>\nUnclosed note.\n`,
        });
      },
      toolCall('finish', { title: 'Add a note', summary: 'Adds a note.' }),
      toolCall('edit_file', {
        path: 'index.mdx',
        old_string: 'Unclosed note.\n',
        new_string: 'Unclosed note.\n</Note>\n',
      }),
      toolCall('finish', { title: 'Add a note', summary: 'Adds a note.' }),
    ]);
    assert.ok(result, 'the run succeeds after the repair');
    const validation = events.filter((e) => e.type === 'agent.validation');
    assert.deepEqual(
      validation.map((e) => e.data.ok),
      [false, true],
    );
    assert.match((validation[0]!.data as { errors: string[] }).errors.join('\n'), /index\.mdx:\d+/);
    assert.match(readFileSync(path.join(root, 'index.mdx'), 'utf8'), /<\/Note>/);
  });

  test('docs.json naming a missing page is caught; still failing after the repair rounds → validation-failed', async () => {
    const edit = toolCall('edit_file', {
      path: 'docs.json',
      old_string: '"index"',
      new_string: '"index",\n"does/not-exist"',
    });
    const finish = toolCall('finish', { title: 'x', summary: 'y' });
    const { error, events } = await run(
      [toolCall('read_file', { path: 'docs.json' }), edit, finish, finish, finish],
      {
        budgets: { ...DEFAULT_BUDGETS, maxRepairRounds: 2, maxDurationMs: 30_000 },
      },
    );
    assert.ok(error instanceof AgentFailure);
    assert.equal(error.code, 'validation-failed');
    assert.match(error.message, /does\/not-exist/);
    assert.equal(events.filter((e) => e.type === 'agent.validation').length, 3);
  });

  test('adversarial calls are refused as tool errors; the run continues; nothing outside the allowed set changes', async () => {
    const outside = mkdtempSync(path.join(tmpdir(), 'docwright-outside-'));
    dirs.push(outside);
    writeFileSync(path.join(outside, 'secret.txt'), 'untouched\n');
    const { root, result, events } = await run(
      [
        (req) => {
          // Plant a symlink inside the repository pointing outside it.
          symlinkSync(outside, path.join(dirs.at(-1)!, 'linked'));
          void req;
          return toolCalls(
            { name: 'read_file', input: { path: '../../etc/passwd' } },
            { name: 'write_file', input: { path: '/tmp/evil.md', content: 'x' } },
            { name: 'write_file', input: { path: 'linked/secret.md', content: 'x' } },
            { name: 'read_file', input: { path: 'linked/secret.txt' } },
            { name: 'write_file', input: { path: '.git/hooks/pre-commit.md', content: 'x' } },
            { name: 'write_file', input: { path: '.github/workflows/x.md', content: 'x' } },
            { name: 'write_file', input: { path: 'big.md', content: 'x'.repeat(2 * 1024 * 1024) } },
            { name: 'run_shell', input: { command: 'rm -rf /' } },
            { name: 'edit_file', input: { path: 42 } },
          );
        },
        toolCall('finish', { title: 'Nothing', summary: 'Nothing to change.' }),
      ],
      { budgets: { ...DEFAULT_BUDGETS, maxTokens: 50_000_000, maxDurationMs: 30_000 } },
    );
    assert.ok(result, 'the run continued to finish');
    const results = events
      .filter((e) => e.type === 'agent.tool_result')
      .map((e) => e.data as { tool: string; ok: boolean; output: string });
    assert.equal(results.length, 10);
    assert.deepEqual(
      results.slice(0, 9).map((r) => r.ok),
      Array(9).fill(false),
    );
    assert.match(results[7]!.output, /no tool named "run_shell"/);
    assert.equal(readFileSync(path.join(outside, 'secret.txt'), 'utf8'), 'untouched\n');
    assert.ok(!existsSync(path.join(outside, 'secret.md')));
    assert.ok(!existsSync('/tmp/evil.md'));
    assert.deepEqual(gitChanges(root), ['linked'], 'only the planted link itself');
    assert.deepEqual(result.changedFiles, []);
  });

  test('budgets: a run that never finishes ends with budget-exceeded', async () => {
    const { error } = await run([toolCall('list_files', {}), toolCall('list_files', {})], {
      budgets: { ...DEFAULT_BUDGETS, maxSteps: 2, maxDurationMs: 30_000 },
    });
    assert.ok(error instanceof AgentFailure);
    assert.equal(error.code, 'budget-exceeded');
  });

  test('429 with Retry-After and 500 from the model are retried inside the budget; 401 fails at once', async () => {
    const { result, events } = await run([
      rateLimited(0),
      httpError(500),
      toolCall('finish', { title: 'Nothing', summary: 'Nothing to change.' }),
    ]);
    assert.ok(result);
    assert.deepEqual(
      events.filter((e) => e.type === 'agent.retry').map((e) => (e.data as { attempt: number }).attempt),
      [1, 2],
    );
    const { error } = await run([httpError(401)]);
    assert.equal(error?.code, 'model-auth-failed');
  });

  test('moving a page: verification asks for the redirect the links need, and the checks say the agent fixed it', async () => {
    const { root, result, events } = await run([
      toolCall('move_file', { from: 'quickstart.mdx', to: 'guides/quickstart.mdx' }),
      toolCall('read_file', { path: 'docs.json' }),
      toolCall('edit_file', {
        path: 'docs.json',
        old_string: '"quickstart"',
        new_string: '"guides/quickstart"',
      }),
      toolCall('finish', { title: 'Move the quickstart under guides', summary: 'Moves the page.' }),
      toolCall('edit_file', {
        path: 'docs.json',
        old_string: '"navigation": {',
        new_string:
          '"redirects": [{ "source": "/quickstart", "destination": "/guides/quickstart" }],\n  "navigation": {',
      }),
      toolCall('finish', {
        title: 'Move the quickstart under guides',
        summary: 'Moves the page and its navigation entry; its old address redirects.',
      }),
    ]);
    assert.ok(result, 'verified');
    assert.deepEqual(result.changedFiles, ['docs.json', 'guides/quickstart.mdx', 'quickstart.mdx']);
    assert.deepEqual(gitChanges(root), ['docs.json', 'guides/quickstart.mdx', 'quickstart.mdx']);
    // The first finish was answered with the findings, as a tool error naming file, line and fix.
    const firstFinish = server.requests.at(-2)!.rawBody;
    assert.match(firstFinish, /the run cannot finish yet/);
    assert.match(
      firstFinish,
      /docs\.json: quickstart\.mdx was moved to guides\/quickstart\.mdx but no redirect/,
    );
    assert.match(firstFinish, /index\.mdx:\d+: link to \\"\/quickstart\\" reaches no page/);
    const rounds = events.filter((e) => e.type === 'agent.verification');
    assert.equal(rounds.length, 2);
    const byName = new Map(result.checks.map((c) => [c.name, c]));
    assert.equal(byName.get('redirects')?.status, 'fixed');
    assert.equal(byName.get('links')?.status, 'fixed');
    assert.equal(byName.get('pages')?.status, 'passed');
    assert.equal(byName.get('style')?.status, 'skipped');
  });

  test('a model that stops using tools gives up with agent-gave-up', async () => {
    const { error } = await run([reply('I think it is fine.'), reply('Really.'), reply('Done.')]);
    assert.equal(error?.code, 'agent-gave-up');
  });
});
