// `docwright slack link|unlink|links` as a user runs them (real CLI processes on the test database).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type SeededProject, seedProject, startTestApp, type TestApp } from '../helpers/app.ts';
import { runCli } from '../helpers/process.ts';

describe('docwright slack', () => {
  let t: TestApp;
  let p: SeededProject;
  let q: SeededProject;
  const cli = (args: string[]) => runCli(args, { ...t.database.env });

  before(async () => {
    t = await startTestApp();
    [p, q] = [await seedProject(t.app), await seedProject(t.app)];
  });
  after(() => t?.close());

  test('link, links and unlink', async () => {
    const linked = await cli(['slack', 'link', '--project', p.projectId, '--channel', 'c0docs']);
    assert.equal(linked.code, 0, linked.stderr);
    assert.match(linked.stdout, new RegExp(`linked Slack channel C0DOCS to project ${p.projectId}`));
    assert.match(linked.stdout, /DOCWRIGHT_SLACK_SIGNING_SECRET is not set/);

    const json = await cli(['slack', 'link', '--project', q.projectId, '--channel', 'C0API', '--json']);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(
      (({ channelId, projectId, linkedBy, previousProjectId }) => ({
        channelId,
        projectId,
        linkedBy,
        previousProjectId,
      }))(JSON.parse(json.stdout)),
      { channelId: 'C0API', projectId: q.projectId, linkedBy: 'cli', previousProjectId: null },
    );

    const all = await cli(['slack', 'links']);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, /^CHANNEL\s+PROJECT\s+LINKED BY\s+SINCE$/m);
    assert.match(all.stdout, new RegExp(`^C0API\\s+${q.projectId}\\s+cli`, 'm'));
    assert.match(all.stdout, new RegExp(`^C0DOCS\\s+${p.projectId}\\s+cli`, 'm'));
    const mine = await cli(['slack', 'links', '--project', p.projectId, '--json']);
    assert.deepEqual(
      (JSON.parse(mine.stdout) as { links: { channelId: string }[] }).links.map((l) => l.channelId),
      ['C0DOCS'],
    );

    // A channel links to one project: linking it elsewhere moves it.
    const moved = await cli(['slack', 'link', '--project', q.projectId, '--channel', 'C0DOCS']);
    assert.match(moved.stdout, new RegExp(`moved from project ${p.projectId}`));

    const unlinked = await cli(['slack', 'unlink', '--channel', 'C0DOCS']);
    assert.equal(unlinked.code, 0, unlinked.stderr);
    assert.match(unlinked.stdout, new RegExp(`unlinked Slack channel C0DOCS from project ${q.projectId}`));
    const none = await cli(['slack', 'links', '--project', p.projectId]);
    assert.match(
      none.stdout,
      /no Slack channel is linked to project .*; link one with: docwright slack link --project ID --channel CHANNEL_ID/,
    );
  });

  test('mistakes are explained', async () => {
    const missing = await cli([
      'slack',
      'link',
      '--project',
      'prj_00000000000000000000000000',
      '--channel',
      'C0X1',
    ]);
    assert.notEqual(missing.code, 0);
    assert.match(
      missing.stderr,
      /project prj_00000000000000000000000000 does not exist; list projects with: docwright project list/,
    );
    const badChannel = await cli(['slack', 'link', '--project', p.projectId, '--channel', '#docs']);
    assert.notEqual(badChannel.code, 0);
    assert.match(badChannel.stderr, /--channel must be a Slack channel ID such as C0123ABCD/);
    const notLinked = await cli(['slack', 'unlink', '--channel', 'C0NOPE']);
    assert.notEqual(notLinked.code, 0);
    assert.match(notLinked.stderr, /channel C0NOPE is not linked; see the links with: docwright slack links/);
  });
});
