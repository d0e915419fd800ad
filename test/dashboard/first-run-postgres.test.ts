// A first start on PostgreSQL says how to create the first dashboard account (issue 35: the
// one-time link is the embedded default's only, and PostgreSQL said nothing at all). A real
// `docwright serve` on a fresh PostgreSQL schema; on SQLite the link is tested in first-run.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase, testDialect } from '../helpers/database.ts';
import { type ServerProcess, startServerProcess } from '../helpers/process.ts';
import { waitFor } from '../helpers/worker.ts';

describe('a first start on PostgreSQL', {
  skip: testDialect === 'postgres' ? false : 'PostgreSQL only (DOCWRIGHT_TEST_DB=postgres)',
}, () => {
  let database: TestDatabase;
  let server: ServerProcess | undefined;

  before(async () => {
    database = await createTestDatabase();
  });
  after(async () => {
    await server?.stop();
    await database?.drop();
  });

  test('tells how to create the first account, and says nothing once one exists', async () => {
    server = await startServerProcess(database.env);
    const said = await waitFor(async () =>
      server!.output().includes('docwright user create') ? server!.output() : undefined,
    );
    assert.match(
      said,
      /docwright has no dashboard account yet\. Create the first one with\s+docwright user create --email you@example\.com --password-stdin/,
    );
    assert.match(
      said,
      /DOCWRIGHT_ADMIN_EMAIL and DOCWRIGHT_ADMIN_PASSWORD\. Then sign in at http:\/\/127\.0\.0\.1:\d+\/login/,
    );
    await server.stop();

    server = await startServerProcess({
      ...database.env,
      DOCWRIGHT_ADMIN_PASSWORD: 'correct horse battery staple',
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.doesNotMatch(server.output(), /no dashboard account yet/);
  });
});
