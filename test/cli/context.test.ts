// `docwright context add|list|remove` (docs/code-context.mdx) as a user runs them (real CLI processes on the
// test database), and `project create|update --comment-on-source`.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { ContextRepositoryView } from '../../src/projects/context-repositories.ts';
import type { ProjectView } from '../../src/projects/projects.ts';
import {
  createGitRepository,
  type SeededProject,
  seedProject,
  startTestApp,
  type TestApp,
} from '../helpers/app.ts';
import { runCli } from '../helpers/process.ts';
import { temporaryDirectory } from '../helpers/temp.ts';

const TOKEN = 'ghp_cli_context_token_789';

describe('docwright context', () => {
  let t: TestApp;
  let p: SeededProject;
  const cli = (args: string[], input = '', env: Record<string, string> = {}) =>
    runCli(args, { ...t.database.env, ...env }, input);
  const cliJson = async <T>(args: string[], input = '', env: Record<string, string> = {}): Promise<T> => {
    const run = await cli([...args, '--json'], input, env);
    assert.equal(run.code, 0, run.stderr);
    return JSON.parse(run.stdout) as T;
  };

  before(async () => {
    t = await startTestApp();
    p = await seedProject(t.app);
  });
  after(() => t?.close());

  test('add prints the entry with its webhook URL and secret once; list and remove', async () => {
    const publicUrl = { DOCWRIGHT_PUBLIC_URL: 'https://docwright.acme.dev' };
    const added = await cliJson<ContextRepositoryView & { webhookSecret: string }>(
      [
        'context',
        'add',
        '--project',
        p.projectId,
        '--name',
        'api',
        '--repository',
        'https://github.com/acme/api',
        '--ref',
        'main',
        '--token-file',
        '-',
      ],
      `${TOKEN}\n`,
      publicUrl,
    );
    assert.equal(added.name, 'api');
    assert.equal(added.host, 'github');
    assert.equal(added.hasToken, true);
    assert.equal(added.webhookUrl, `https://docwright.acme.dev/hooks/${p.projectId}/api`);
    assert.equal(await t.app.contextRepositories.webhookSecretFor(p.projectId, 'api'), added.webhookSecret);
    const [access] = await t.app.contextRepositories.accessFor(p.projectId);
    assert.equal(access?.secrets.token, TOKEN, 'stdin read, trimmed and stored');

    // A token file, a self-hosted host; the human form shows the secret with a warning, and
    // without DOCWRIGHT_PUBLIC_URL a note says what the webhook URL starts with.
    const tokenFile = path.join(temporaryDirectory('docwright-token-'), 'token');
    writeFileSync(tokenFile, 'glpat-file-token\n');
    const human = await cli([
      'context',
      'add',
      '--project',
      p.projectId,
      '--name',
      'sdk',
      '--repository',
      'https://git.acme.dev/acme/sdk',
      '--host',
      'gitlab',
      '--api-url',
      'https://git.acme.dev/api/v4',
      '--token-file',
      tokenFile,
    ]);
    assert.equal(human.code, 0, human.stderr);
    assert.match(
      human.stdout,
      /^context repository sdk for project prj_\w+: https:\/\/git\.acme\.dev\/acme\/sdk$/m,
    );
    assert.match(
      human.stdout,
      new RegExp(`^webhook URL: http://localhost:8080/hooks/${p.projectId}/sdk$`, 'm'),
    );
    const secret = await t.app.contextRepositories.webhookSecretFor(p.projectId, 'sdk');
    assert.ok(human.stdout.includes(`webhook secret: ${secret}`));
    assert.match(human.stdout, /shown only now/);
    assert.match(
      human.stderr,
      /note: webhookUrl starts with http:\/\/localhost:8080 because DOCWRIGHT_PUBLIC_URL is not set/,
    );
    assert.ok(!human.stdout.includes('glpat-file-token'));

    const listed = await cliJson<{ contextRepositories: ContextRepositoryView[] }>(
      ['context', 'list', '--project', p.projectId],
      '',
      publicUrl,
    );
    assert.deepEqual(
      listed.contextRepositories.map((r) => [r.name, r.host, r.apiUrl, r.hasToken]),
      [
        ['api', 'github', null, true],
        ['sdk', 'gitlab', 'https://git.acme.dev/api/v4', true],
      ],
    );
    const listedText = JSON.stringify(listed);
    assert.ok(!listedText.includes(TOKEN) && !listedText.includes(added.webhookSecret), 'no secrets listed');
    const table = await cli(['context', 'list', '--project', p.projectId]);
    assert.match(table.stdout, /^NAME\s+HOST\s+REPOSITORY\s+REF\s+TOKEN$/m);
    assert.match(table.stdout, /^api\s+github\s+https:\/\/github\.com\/acme\/api\s+main\s+set$/m);
    assert.ok(!table.stdout.includes(added.webhookSecret));

    const removed = await cliJson<ContextRepositoryView>([
      'context',
      'remove',
      '--project',
      p.projectId,
      '--name',
      'api',
    ]);
    assert.equal(removed.name, 'api');
    assert.deepEqual(
      (await t.app.contextRepositories.list(p.projectId)).map((r) => r.name),
      ['sdk'],
    );
    const again = await cli(['context', 'remove', '--project', p.projectId, '--name', 'api']);
    assert.equal(again.code, 2);
    assert.match(
      again.stderr,
      new RegExp(
        `has no context repository named api; see its context repositories with: docwright context list --project ${p.projectId}`,
      ),
    );
  });

  test('remove in one project leaves another project’s context repository of the same name', async () => {
    const [a, b] = [await seedProject(t.app), await seedProject(t.app)];
    for (const project of [a, b]) {
      await t.app.contextRepositories.add(project.projectId, {
        name: 'shared',
        repository: 'https://github.com/acme/shared',
      });
    }
    const secretOfB = await t.app.contextRepositories.webhookSecretFor(b.projectId, 'shared');
    const removed = await cliJson<ContextRepositoryView>([
      'context',
      'remove',
      '--project',
      a.projectId,
      '--name',
      'shared',
    ]);
    assert.equal(removed.name, 'shared');
    assert.deepEqual(await t.app.contextRepositories.list(a.projectId), []);
    assert.deepEqual(
      (await t.app.contextRepositories.list(b.projectId)).map((r) => r.name),
      ['shared'],
    );
    assert.equal(await t.app.contextRepositories.webhookSecretFor(b.projectId, 'shared'), secretOfB);
  });

  test('errors name the flag and say what to do next', async () => {
    const add = (...args: string[]) =>
      cli(['context', 'add', '--project', p.projectId, '--repository', 'https://github.com/acme/x', ...args]);
    const reserved = await add('--name', 'docs');
    assert.equal(reserved.code, 2);
    assert.match(
      reserved.stderr,
      /--name: docs is reserved for the project’s own repository; choose another name/,
    );
    const slug = await add('--name', 'My Repo');
    assert.match(slug.stderr, /--name: must be a slug/);
    const url = await cli([
      'context',
      'add',
      '--project',
      p.projectId,
      '--name',
      'x',
      '--repository',
      'http://github.com/acme/x',
    ]);
    assert.equal(url.code, 2);
    assert.match(
      url.stderr,
      /--repository: http is allowed only for hosts on loopback or a private network; use https/,
    );
    await add('--name', 'dup');
    const dup = await add('--name', 'dup');
    assert.equal(dup.code, 2);
    assert.match(
      dup.stderr,
      /already has a context repository named dup; choose another name, or remove it first/,
    );
    const noProject = await cli(['context', 'list', '--project', 'prj_00000000000000000000000000']);
    assert.equal(noProject.code, 2);
    assert.match(noProject.stderr, /does not exist; list projects with: docwright project list/);
    const missingFlag = await cli(['context', 'add', '--project', p.projectId, '--name', 'y']);
    assert.equal(missingFlag.code, 2);
    assert.match(missingFlag.stderr, /required option '--repository <url-or-path>' not specified/);
    const empty = await cli(['context', 'list', '--project', (await seedProject(t.app)).projectId]);
    assert.match(empty.stdout, /has no context repositories; add one with: docwright context add/);
  });

  test('project hook-secret prints the docs hook URL and a new secret once, which replaces the earlier one', async () => {
    const { projectId } = await seedProject(t.app);
    const made = await cliJson<{
      name: string;
      webhookUrl: string;
      webhookSecret: string;
      hasSecret: boolean;
    }>(['project', 'hook-secret', projectId], '', { DOCWRIGHT_PUBLIC_URL: 'https://docwright.acme.dev' });
    assert.equal(made.webhookUrl, `https://docwright.acme.dev/hooks/${projectId}/docs`);
    assert.equal(made.hasSecret, true);
    assert.equal(await t.app.contextRepositories.webhookSecretFor(projectId, 'docs'), made.webhookSecret);
    const again = await cli(['project', 'hook-secret', projectId]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^webhook secret: (\S+)$/m);
    const replacement = /^webhook secret: (\S+)$/m.exec(again.stdout)![1];
    assert.notEqual(replacement, made.webhookSecret);
    assert.equal(await t.app.contextRepositories.webhookSecretFor(projectId, 'docs'), replacement);
    assert.match(
      again.stderr,
      /note: webhookUrl starts with http:\/\/localhost:8080 because DOCWRIGHT_PUBLIC_URL is not set/,
    );
    const missing = await cli(['project', 'hook-secret', 'prj_00000000000000000000000000']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /project prj_00000000000000000000000000 does not exist/);
  });

  test('project create and update take --comment-on-source and --no-comment-on-source', async () => {
    const repository = createGitRepository();
    const created = await cliJson<ProjectView>([
      'project',
      'create',
      '--name',
      'Docs',
      '--repository',
      repository,
      '--comment-on-source',
    ]);
    assert.equal(created.settings.commentOnSource, true);
    const off = await cliJson<ProjectView>(['project', 'update', created.id, '--no-comment-on-source']);
    assert.equal(off.settings.commentOnSource, false);
    const kept = await cliJson<ProjectView>(['project', 'update', created.id, '--labels', 'docs']);
    assert.equal(kept.settings.commentOnSource, false, 'not given: unchanged');
    const on = await cliJson<ProjectView>(['project', 'update', created.id, '--comment-on-source']);
    assert.equal(on.settings.commentOnSource, true);
    const plain = await cliJson<ProjectView>([
      'project',
      'create',
      '--name',
      'P',
      '--repository',
      repository,
    ]);
    assert.equal(plain.settings.commentOnSource, false);
  });
  test('a repository on a link-local or metadata address is refused by project create and context add, unless DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL=1', async () => {
    const metadata = 'http://169.254.169.254/acme/docs';
    const create = [
      'project',
      'create',
      '--name',
      'M',
      '--repository',
      metadata,
      '--host',
      'gitlab',
      '--ref',
      'main',
    ];
    const refused = await cli([...create, '--json']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /169\.254\.169\.254 is a link-local or cloud metadata address/);
    assert.match(refused.stderr, /DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL=1/);
    const add = [
      'context',
      'add',
      '--project',
      p.projectId,
      '--name',
      'meta',
      '--repository',
      'http://[fd00:ec2::254]/acme/api',
      '--host',
      'gitea',
    ];
    const addRefused = await cli([...add, '--json']);
    assert.notEqual(addRefused.code, 0);
    assert.match(addRefused.stderr, /link-local or cloud metadata address/);
    const allow = { DOCWRIGHT_REPOSITORY_ALLOW_LINK_LOCAL: '1' };
    assert.equal((await cliJson<ProjectView>(create, '', allow)).repository, metadata);
    assert.equal((await cliJson<ContextRepositoryView>(add, '', allow)).name, 'meta');
  });
});
