// A run reads the code it documents (docs/code-context.mdx), end to end on the configured database: the
// worker fetches a context repository into its mirror at the change's head, the agent's own
// process reads the project's code outside docsDir and the context repository's code through
// IPC, sees the change's brief and diff, has its writes to the code refused, and the job
// completes with only documentation committed. Real git, real agent processes, the scripted
// OpenAI-compatible model.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { AgentChange } from '../../src/agent/change.ts';
import type { CodeReader } from '../../src/agent/code.ts';
import { loadConfig } from '../../src/config.ts';
import { HostError } from '../../src/git/hosts/host.ts';
import { AgentProcess } from '../../src/pipeline/agent-process.ts';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import type { RunCodeContext } from '../../src/pipeline/run-code.ts';
import { Worker } from '../../src/worker/worker.ts';
import { startOpenAIServer, toolCall } from '../doubles/openai-server.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { temporaryDirectory } from '../helpers/temp.ts';
import { waitFor } from '../helpers/worker.ts';

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();

function repository(files: Record<string, string>): string {
  const dir = temporaryDirectory('docwright-code-repo-');
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  }
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'init');
  return dir;
}

interface Result {
  tool: string;
  ok: boolean;
  output: string;
}

describe('a run that documents a change reads the code it documents', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: { DOCWRIGHT_MODEL: 'openai-compatible/scripted' } });
  });
  after(async () => {
    await t.close();
  });

  test('the model reads src/ outside docsDir and _context/api/ at the change head, its code writes are refused, the job completes', async () => {
    const mono = repository({
      'src/index.ts': 'export function start(port = 8080) {\n  return port;\n}\n',
      'docs/docs.json': `${JSON.stringify({ name: 'Docs', navigation: { groups: [{ group: 'Start', pages: ['index'] }] } })}\n`,
      'docs/index.mdx': '---\ntitle: Home\n---\n\nWelcome.\n',
    });
    const api = repository({
      'lib/export.ts': 'export function exportDocs(format: string) {\n  return format;\n}\n',
    });
    // The change: a second commit on the context repository, not on its main branch's tip.
    git(api, 'checkout', '-q', '-b', 'feature/export');
    writeFileSync(
      path.join(api, 'lib/export.ts'),
      'export function exportDocs(format: "md" | "pdf") {\n  return format;\n}\n',
    );
    git(api, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-am', 'Typed formats');
    const head = git(api, 'rev-parse', 'HEAD');
    git(api, 'checkout', '-q', 'main');
    const apiRefs = git(api, 'for-each-ref');
    const change: AgentChange = {
      repository: 'api',
      kind: 'commit',
      number: null,
      url: null,
      title: 'Typed formats',
      description: 'Only md and pdf.',
      author: 't',
      state: null,
      baseRef: null,
      headRef: null,
      baseSha: git(api, 'rev-parse', 'main'),
      headSha: head,
      files: [
        {
          path: 'lib/export.ts',
          previousPath: null,
          status: 'modified',
          additions: 1,
          deletions: 1,
          binary: false,
          diff: '@@ -1,3 +1,3 @@\n-export function exportDocs(format: string) {\n+export function exportDocs(format: "md" | "pdf") {\n',
          truncated: false,
        },
      ],
      totalFiles: 1,
      commits: [{ sha: head, message: 'Typed formats' }],
      totalCommits: 1,
      notes: [],
    };
    const contexts: string[] = [];
    const codeContext = async (job: { id: string }): Promise<RunCodeContext> => {
      contexts.push(job.id);
      return { contextRepositories: [{ name: 'api', url: api, env: {}, commit: head }], changes: [change] };
    };
    const model = await startOpenAIServer();
    const worker = new Worker(t.app, { runner: createPipeline(t.app, { codeContext }), pollMs: 50 });
    worker.start();
    try {
      const project = await t.app.projects.create({
        name: 'Code',
        repository: mono,
        docsDir: 'docs',
        openaiCompatibleBaseUrl: model.url,
        rateLimit: 1000,
      });
      model.push(
        toolCall('read_file', { path: 'src/index.ts' }),
        toolCall('read_file', { path: '_context/api/lib/export.ts' }),
        toolCall('read_change', { path: 'lib/export.ts' }),
        toolCall('search', { pattern: 'exportDocs|start' }),
        toolCall('search', { pattern: 'exportDocs', path: '_context' }),
        toolCall('write_file', { path: '_context/api/lib/export.ts', content: 'hacked\n' }),
        toolCall('edit_file', { path: 'src/index.ts', old_string: '8080', new_string: '1' }),
        toolCall('read_file', { path: '_context/api/lib/missing.ts' }),
        toolCall('write_file', {
          path: 'docs/export.mdx',
          content: '---\ntitle: Export\n---\n\nFormats: `md`, `pdf`. The server listens on 8080.\n',
        }),
        toolCall('read_file', { path: 'docs/docs.json' }),
        toolCall('edit_file', {
          path: 'docs/docs.json',
          old_string: '"index"',
          new_string: '"index","export"',
        }),
        toolCall('finish', { title: 'Document export formats', summary: 'Export takes md or pdf.' }),
      );
      const id = (await t.app.jobs.create(project.id, { prompt: 'Document the change' })).job.id;
      const done = await waitFor(
        async () => {
          const j = await t.app.jobs.get(project.id, id);
          return j.status === 'active' ? undefined : j;
        },
        { timeoutMs: 30_000 },
      );
      const events = await t.app.jobs.events(project.id, id, {});
      assert.equal(done.status, 'completed', JSON.stringify({ error: done.error, events }).slice(0, 3000));
      assert.deepEqual(contexts, [id]);
      const results = events.filter((e) => e.type === 'agent.tool_result').map((e) => e.data as Result);
      const [own, context, diff, searched, searchedContext, contextWrite, codeEdit, missing] = results;
      assert.ok(own!.ok && /export function start\(port = 8080\)/.test(own!.output), own!.output);
      assert.ok(context!.ok, context!.output);
      assert.match(
        context!.output,
        /format: "md" \| "pdf"/,
        'the context repository is read at the change head, not main',
      );
      assert.match(diff!.output, /\+export function exportDocs\(format: "md" \| "pdf"\)/);
      assert.match(searched!.output, /^src\/index\.ts:1: /m);
      assert.match(searched!.output, /Context repositories are searched with path "_context"/);
      assert.match(
        searchedContext!.output,
        /^_context\/api\/lib\/export\.ts:1: export function exportDocs\(format: "md"/m,
      );
      assert.equal(contextWrite!.ok, false);
      assert.match(contextWrite!.output, /read-only/);
      assert.equal(codeEdit!.ok, false);
      assert.match(codeEdit!.output, /The code outside it is read-only/);
      assert.equal(missing!.ok, false);
      assert.match(missing!.output, /File not found: _context\/api\/lib\/missing\.ts/);
      // What the model was told: the change's brief, fenced, and how to read code.
      const system = JSON.stringify(model.requests[0]!.body.messages[0]);
      assert.match(system, /change_data_[0-9a-f]{16}/);
      assert.match(system, /Typed formats/);
      assert.match(system, /_context\/api\//);
      // Only documentation was committed; the code repositories are untouched.
      assert.deepEqual(git(mono, 'diff', '--name-only', `main..${done.branch}`).split('\n'), [
        'docs/docs.json',
        'docs/export.mdx',
      ]);
      assert.equal(git(api, 'for-each-ref'), apiRefs);
      assert.equal(git(api, 'status', '--porcelain'), '');
    } finally {
      await worker.stop(0);
      await model.close();
    }
  });
});

describe('a change that cannot be resolved', () => {
  test("fails the run with the hook's host error before any model call", async () => {
    const t = await startTestApp({ env: { DOCWRIGHT_MODEL: 'openai-compatible/scripted' } });
    const model = await startOpenAIServer();
    const codeContext = async (): Promise<RunCodeContext> => {
      throw new HostError('change-unavailable', 'the host answered 404 for acme/api#42');
    };
    const worker = new Worker(t.app, { runner: createPipeline(t.app, { codeContext }), pollMs: 50 });
    worker.start();
    try {
      const project = await t.app.projects.create({
        name: 'Gone',
        repository: repository({ 'index.mdx': '# Home\n' }),
        openaiCompatibleBaseUrl: model.url,
        rateLimit: 1000,
      });
      const id = (await t.app.jobs.create(project.id, { prompt: 'Document acme/api#42' })).job.id;
      const done = await waitFor(
        async () => {
          const j = await t.app.jobs.get(project.id, id);
          return j.status === 'active' ? undefined : j;
        },
        { timeoutMs: 20_000 },
      );
      assert.equal(done.status, 'failed');
      assert.deepEqual(done.error, {
        code: 'change-unavailable',
        message: 'the host answered 404 for acme/api#42',
      });
      assert.equal(model.requests.length, 0, 'no model call');
    } finally {
      await worker.stop(0);
      await model.close();
      await t.close();
    }
  });
});

describe('code reads cross from the agent process to its parent', () => {
  test('each read is answered by the parent; a failure becomes a tool error without the server paths', async () => {
    const root = temporaryDirectory('docwright-code-ipc-');
    mkdirSync(path.join(root, 'docs'));
    writeFileSync(path.join(root, 'docs/index.md'), '# Home\n');
    const asked: string[] = [];
    const reader: CodeReader = {
      async list() {
        return { files: ['lib/a.ts'], total: 1, exists: true };
      },
      async read(repository, file) {
        asked.push(`${repository}:${file}`);
        if (file === 'lib/broken.ts')
          throw new Error('fatal: bad object in /var/lib/docwright/mirrors/proj-abc.git');
        return { kind: 'file', bytes: new TextEncoder().encode('export const fromParent = 1;\n') };
      },
      async search() {
        return {
          lines: ['lib/a.ts:1: export const fromParent = 1;'],
          total: 1,
          filesMatched: 1,
          tooLarge: 0,
          notes: [],
        };
      },
    };
    const model = await startOpenAIServer();
    model.push(
      toolCall('read_file', { path: '_context/lib/lib/a.ts' }),
      toolCall('read_file', { path: '_context/lib/lib/broken.ts' }),
      toolCall('search', { pattern: 'fromParent', path: '_context/lib' }),
      toolCall('finish', { title: 'Nothing to document', summary: 'Internal change only.' }),
    );
    const config = loadConfig({ DOCWRIGHT_LOG_LEVEL: 'silent' });
    const agent = AgentProcess.spawn();
    const events: { type: string; data: unknown }[] = [];
    try {
      const result = await agent.run(
        {
          root,
          project: { docsDir: 'docs', writable: ['**/*.md'] },
          instruction: 'Document it',
          history: [],
          budgets: config.agent,
          limits: config.agentLimits,
          signal: new AbortController().signal,
          emit: (event) => void events.push(event),
          code: { repositories: ['lib'] },
          codeReader: reader,
        },
        { id: 'openai-compatible/scripted', options: { openaiCompatibleBaseUrl: model.url } },
      );
      assert.deepEqual(result.changedFiles, []);
      assert.equal(result.summary, 'Internal change only.');
    } finally {
      agent.kill();
      await model.close();
    }
    assert.deepEqual(asked, ['lib:lib/a.ts', 'lib:lib/broken.ts']);
    const results = events.filter((e) => e.type === 'agent.tool_result').map((e) => e.data as Result);
    assert.ok(results[0]!.ok && /fromParent/.test(results[0]!.output));
    assert.equal(results[1]!.ok, false);
    assert.match(
      results[1]!.output,
      /Could not read "_context\/lib\/lib\/broken\.ts": the code could not be read \(fatal: bad object in <mirror>\)/,
    );
    assert.equal(results[2]!.output, '_context/lib/lib/a.ts:1: export const fromParent = 1;');
  });
  test("a change's files past the host's listing are computed by the parent, across the process boundary", async () => {
    const root = temporaryDirectory('docwright-code-ipc-change-');
    mkdirSync(path.join(root, 'docs'));
    writeFileSync(path.join(root, 'docs/index.md'), '# Home\n');
    const asked: string[] = [];
    const reader: CodeReader = {
      list: async () => ({ files: [], total: 0, exists: true }),
      read: async () => ({ kind: 'missing' }),
      search: async () => ({ lines: [], total: 0, filesMatched: 0, tooLarge: 0, notes: [] }),
      async changedPaths(repository, base, head, max) {
        asked.push(`paths ${repository} ${base.slice(0, 4)}..${head.slice(0, 4)} ${max}`);
        return {
          files: [
            { path: 'lib/a.ts', status: 'modified' },
            { path: 'lib/b.ts', status: 'added' },
          ],
          total: 2,
        };
      },
      async pathDiff(repository, _base, _head, file, maxChars) {
        asked.push(`diff ${repository} ${file} ${maxChars}`);
        return {
          path: file,
          status: 'added',
          binary: false,
          oldSize: null,
          newSize: 28,
          diff: '@@ -0,0 +1 @@\n+export const fromParent = 2;\n',
          chars: 43,
        };
      },
    };
    const change: AgentChange = {
      repository: 'lib',
      kind: 'pull-request',
      number: 7,
      url: null,
      title: 'Two files',
      description: '',
      author: null,
      state: 'merged',
      baseRef: 'main',
      headRef: 'feature',
      baseSha: 'a'.repeat(40),
      headSha: 'b'.repeat(40),
      files: [
        {
          path: 'lib/a.ts',
          previousPath: null,
          status: 'modified',
          additions: 1,
          deletions: 1,
          binary: false,
          diff: '@@ -1 +1 @@\n-a\n+b\n',
          truncated: false,
        },
      ],
      // The host listed one of the two.
      totalFiles: 2,
      commits: [],
      totalCommits: 0,
      notes: [],
    };
    const model = await startOpenAIServer();
    model.push(
      toolCall('read_change', {}),
      toolCall('read_change', { path: 'lib/b.ts' }),
      toolCall('finish', { title: 'Nothing to document', summary: 'Internal change only.' }),
    );
    const config = loadConfig({ DOCWRIGHT_LOG_LEVEL: 'silent' });
    const agent = AgentProcess.spawn();
    const events: { type: string; data: unknown }[] = [];
    try {
      await agent.run(
        {
          root,
          project: { docsDir: 'docs', writable: ['**/*.md'] },
          instruction: 'Document it',
          history: [],
          budgets: config.agent,
          limits: config.agentLimits,
          signal: new AbortController().signal,
          emit: (event) => void events.push(event),
          code: { repositories: ['lib'] },
          codeReader: reader,
          changes: [change],
        },
        { id: 'openai-compatible/scripted', options: { openaiCompatibleBaseUrl: model.url } },
      );
    } finally {
      agent.kill();
      await model.close();
    }
    assert.deepEqual(asked, ['paths lib aaaa..bbbb 10000', 'diff lib lib/b.ts 30000']);
    const results = events.filter((e) => e.type === 'agent.tool_result').map((e) => e.data as Result);
    assert.match(results[0]!.output, /the host's listing stopped after 1 file [\s\S]*^A lib\/b\.ts$/m);
    assert.match(
      results[1]!.output,
      /^A lib\/b\.ts .*diff computed from the repository\)\n\+?@@[\s\S]*fromParent = 2/m,
    );
  });
});
