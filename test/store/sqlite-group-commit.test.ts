/**
 * Group commit on SQLite (src/store/sqlite-group-commit.ts): transactions that wait for the
 * process's one connection join the running one's SQLite transaction as savepoints and share its
 * COMMIT, without any caller seeing a difference — what a caller is told is committed is
 * committed, a rollback undoes only its own work, a failed COMMIT fails everyone it would have
 * saved.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openStore, type Store } from '../../src/store/database.ts';
import { GroupCommit } from '../../src/store/sqlite-group-commit.ts';
import { testDialect } from '../helpers/database.ts';
import { temporaryDirectory } from '../helpers/temp.ts';

const onlySqlite =
  testDialect === 'sqlite' ? false : 'skipped: SQLite group commit (run with DOCWRIGHT_TEST_DB=sqlite)';

describe('SQLite group commit', { skip: onlySqlite }, () => {
  let store: Store;
  /** Another connection to the file: it sees only what is committed. */
  let observer: DatabaseSync;
  beforeEach(async () => {
    const dataDir = temporaryDirectory('docwright-group-commit-');
    // A group stays open however slowly this machine runs the test (10 ms by default).
    store = await openStore({ dataDir, migrate: false, sqlite: { groupCommitMaxOpenMs: 60_000 } });
    await sql`create table parent (id integer primary key)`.execute(store.db);
    await sql`create table item (name text not null, parent integer references parent (id) deferrable initially deferred)`.execute(
      store.db,
    );
    observer = new DatabaseSync(path.join(dataDir, 'docwright.db'), { readOnly: true });
  });
  afterEach(async () => {
    observer.close();
    await store.close();
  });

  /** The item names another connection can read now, sorted. */
  const committed = () =>
    (observer.prepare('select name from item order by name').all() as { name: string }[]).map((r) => r.name);

  /** A transaction that inserts `name`, after `before` if given (holding the connection meanwhile). */
  const insert = (name: string, before?: Promise<void>, parent: number | null = null) =>
    store.db.transaction().execute(async (trx) => {
      await sql`insert into item (name, parent) values (${name}, ${parent})`.execute(trx);
      await before;
    });

  /** A promise, and the function that settles it. */
  function gate() {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    return { opened, open };
  }

  test('transactions that wait for the connection share one COMMIT; each returns once it is committed', async () => {
    const held = gate();
    const seenWhenFirstReturned: string[][] = [];
    const first = insert('a', held.opened).then(() => seenWhenFirstReturned.push(committed()));
    // These two wait for the connection while the first holds it.
    const others = [insert('b'), insert('c')];
    held.open();
    await Promise.all([first, ...others]);
    // Committed one by one, the first would have returned with only its own row visible.
    assert.deepEqual(seenWhenFirstReturned, [['a', 'b', 'c']]);
  });

  test('a transaction alone commits without waiting for anyone', async () => {
    await insert('solo');
    assert.deepEqual(committed(), ['solo']);
  });

  test('a member that rolls back loses only its own work', async () => {
    const held = gate();
    const first = insert('a', held.opened);
    const failing = assert.rejects(
      store.db.transaction().execute(async (trx) => {
        await sql`insert into item (name) values ('b')`.execute(trx);
        throw new Error('changed my mind');
      }),
      /changed my mind/,
    );
    const third = insert('c');
    held.open();
    await Promise.all([first, failing, third]);
    assert.deepEqual(committed(), ['a', 'c']);
  });

  test('a COMMIT that fails fails every member that waits for it, saves nothing of theirs, and the next transaction works', async () => {
    await sql`insert into parent (id) values (1)`.execute(store.db);
    const held = gate();
    const first = insert('a', held.opened);
    // A deferred foreign key is checked at COMMIT only: this member's row fails the group's commit.
    const orphan = insert('orphan', undefined, 999);
    const third = insert('c', undefined, 1);
    held.open();
    const outcomes = await Promise.allSettled([first, orphan, third]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['rejected', 'rejected', 'rejected'],
    );
    for (const o of outcomes) assert.match(String((o as PromiseRejectedResult).reason), /FOREIGN KEY/);
    assert.deepEqual(committed(), []);
    await insert('after');
    assert.deepEqual(committed(), ['after']);
  });

  test('a single statement run while a group is open returns once the group is committed', async () => {
    const held = gate();
    const first = insert('a', held.opened);
    let seenWhenReadReturned: string[] | undefined;
    const read = sql<{ n: number }>`select count(*) as n from item`.execute(store.db).then((result) => {
      seenWhenReadReturned = committed();
      return Number(result.rows[0]!.n);
    });
    held.open();
    await first;
    assert.equal(await read, 1);
    assert.deepEqual(seenWhenReadReturned, ['a']);
  });
});

test('hold: the open group is committed first; writes then wait for the release while reads may run', async () => {
  const statements: string[] = [];
  let inTransaction = false;
  const transactions = new GroupCommit({
    run: async (statement) => {
      statements.push(statement);
      if (statement === 'begin immediate') inTransaction = true;
      if (statement === 'commit' || statement === 'rollback') inTransaction = false;
    },
    inTransaction: () => inTransaction,
  });
  const write = async (name: string, log: string[]) => {
    const lease = await transactions.acquire();
    log.push(`${name} started`);
    await transactions.begin();
    await transactions.commit(lease);
    await transactions.release(lease);
    log.push(`${name} committed`);
  };
  const log: string[] = [];
  const first = write('first', log);
  // Asked for while the first transaction holds the connection: it waits its turn.
  const lease = await transactions.hold();
  assert.equal(statements.filter((s) => s === 'commit').length, 1, 'the open group was committed');
  await first;
  assert.deepEqual(log, ['first started', 'first committed']);
  assert.ok(transactions.idle(), 'reads run at once while the connection is held');

  const second = write('second', log);
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(log, ['first started', 'first committed'], 'no write starts while held');
  await transactions.release(lease);
  await second;
  assert.deepEqual(log.slice(2), ['second started', 'second committed']);
  assert.ok(transactions.idle());
});

test('a group open for its longest time commits instead of taking in the transactions that wait', async () => {
  const statements: string[] = [];
  let inTransaction = false;
  const connection = {
    run: async (statement: string) => {
      statements.push(statement);
      if (statement === 'begin immediate') inTransaction = true;
      if (statement === 'commit') inTransaction = false;
    },
    inTransaction: () => inTransaction,
  };
  const write = async (transactions: GroupCommit) => {
    const lease = await transactions.acquire();
    await transactions.begin();
    await transactions.commit(lease);
    await transactions.release(lease);
  };
  const commits = async (maxOpenMs: number) => {
    statements.length = 0;
    const transactions = new GroupCommit(connection, { maxOpenMs });
    await Promise.all([write(transactions), write(transactions), write(transactions)]);
    return statements.filter((s) => s === 'commit').length;
  };
  assert.equal(await commits(60_000), 1, 'waiting transactions join the open group');
  assert.equal(await commits(0), 3, 'a group past its time commits alone');
});
