/**
 * Group commit for the process's one SQLite connection.
 *
 * A commit costs two writes per page it changed (about 90 µs for a job's creation here), while
 * the statements before it cost less. Transactions that wait for the connection while another
 * runs therefore join its SQLite transaction, each inside a savepoint of its own, and one COMMIT
 * ends them all: the pages they share (the right edge of every index) are written once.
 *
 * What each caller sees is unchanged: a transaction that rolls back loses only its own work (its
 * savepoint); a commit returns only once its work is committed, and fails if the shared COMMIT
 * fails; a single statement run while a group is open runs inside it and returns once the group
 * is committed. The group is committed as soon as nobody waits for the connection, or once it
 * holds `MAX_MEMBERS` transactions or has been open `MAX_OPEN_MS`, so that other processes get
 * the database's write lock in turn.
 */

/** Most transactions one COMMIT ends. */
const MAX_MEMBERS = 64;
/** Longest a group keeps the write lock (and its first member waits) before committing. */
const MAX_OPEN_MS = 10;

const SAVEPOINT = 'docwright_work';

/** What the group commit needs of the connection. */
export interface GroupCommitConnection {
  /** Runs one statement (retrying while another process holds the lock). */
  run(sql: string): Promise<void>;
  /** Whether SQLite has a transaction open (an I/O error or a full disk can end one). */
  inTransaction(): boolean;
}

export interface GroupCommitOptions {
  /** Longest a group keeps the write lock before committing (default `MAX_OPEN_MS`). */
  maxOpenMs?: number;
}

/** One holder of the connection, from acquire to release. */
export class Lease {
  /** The holder passed the connection on before its caller released it. */
  handedOver = false;
  /** The holder's transaction or statement ended; what is left is to release the connection. */
  finished = false;
}

class Group {
  readonly closesAt: number;
  members = 0;
  /** A COMMIT waits for the event loop's turn. */
  scheduled = false;
  readonly committed: Promise<void>;
  resolve!: () => void;
  reject!: (error: unknown) => void;

  constructor(maxOpenMs: number) {
    this.closesAt = performance.now() + maxOpenMs;
    this.committed = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // Members that rolled back do not wait for the group: a failed COMMIT must not go unhandled.
    this.committed.catch(() => {});
  }

  full(): boolean {
    return this.members >= MAX_MEMBERS || performance.now() >= this.closesAt;
  }
}

export class GroupCommit {
  readonly #connection: GroupCommitConnection;
  readonly #maxOpenMs: number;
  #held = false;
  readonly #waiting: (() => void)[] = [];
  #group: Group | undefined;
  /** The lease of `hold`, while it holds the connection. */
  #holding: Lease | undefined;

  constructor(connection: GroupCommitConnection, options: GroupCommitOptions = {}) {
    this.#connection = connection;
    this.#maxOpenMs = options.maxOpenMs ?? MAX_OPEN_MS;
  }

  /**
   * Whether a statement may run on the connection right now, outside any transaction: nobody
   * holds it (but `hold`) and no group waits for its COMMIT (a read then would see uncommitted work).
   */
  idle(): boolean {
    return (!this.#held || this.#holding !== undefined) && this.#group === undefined;
  }

  /**
   * Takes the connection in turn, commits the open group, and keeps the connection with no
   * transaction open until `release`: no write of this process starts meanwhile, while reads
   * that run at once (`idle`) go on.
   */
  async hold(): Promise<Lease> {
    const lease = await this.acquire();
    const group = this.#group;
    if (group) await this.#commit(group).catch(() => {});
    this.#holding = lease;
    return lease;
  }

  /** Waits for the connection; one holder at a time, in order of arrival. */
  async acquire(): Promise<Lease> {
    if (this.#held) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#held = true;
    return new Lease();
  }

  /** Opens the group's transaction if none is open, and the caller's savepoint in it. */
  async begin(): Promise<void> {
    if (!this.#group) {
      await this.#connection.run('begin immediate');
      this.#group = new Group(this.#maxOpenMs);
    }
    await this.#connection.run(`savepoint ${SAVEPOINT}`);
    this.#group.members++;
  }

  /** Keeps the transaction's work; resolves once it is committed. */
  async commit(lease: Lease): Promise<void> {
    if (lease.finished) return;
    await this.#connection.run(`release ${SAVEPOINT}`);
    await this.#finish(lease, true);
  }

  /** Undoes the transaction's own work; the group's other members keep theirs. */
  async rollback(lease: Lease): Promise<void> {
    // A member whose commit failed has nothing left to undo, and may no longer hold the connection.
    if (lease.finished) return;
    if (this.#connection.inTransaction()) {
      await this.#connection.run(`rollback to ${SAVEPOINT}`);
      await this.#connection.run(`release ${SAVEPOINT}`);
    }
    await this.#finish(lease, false);
  }

  async release(lease: Lease): Promise<void> {
    if (lease === this.#holding) this.#holding = undefined;
    if (lease.handedOver) return;
    // A single statement that ran inside an open group is done when the group is committed.
    if (this.#group && !lease.finished) await this.#finish(lease, true);
    if (!lease.handedOver) this.#handOver();
  }

  /**
   * Ends a member. The next waiter, if any, takes the connection and joins the group; with nobody
   * waiting the group stays open until the event loop has handled what else arrived with this
   * request (`setImmediate`), so that requests answered in the same turn share one COMMIT.
   */
  async #finish(lease: Lease, waitForCommit: boolean): Promise<void> {
    lease.finished = true;
    const group = this.#group;
    if (!group) return;
    if (!this.#connection.inTransaction()) {
      // SQLite ended the transaction itself (an I/O error, a full disk): every member's work is gone.
      this.#group = undefined;
      const error = new Error('SQLite rolled the transaction back; the work was not saved');
      group.reject(error);
      if (waitForCommit) throw error;
      return;
    }
    if (group.full()) {
      try {
        await this.#commit(group);
      } catch (error) {
        // A member that rolled back lost nothing; the members that wait are told.
        if (waitForCommit) throw error;
      }
      return;
    }
    lease.handedOver = true;
    if (this.#waiting.length === 0 && !group.scheduled) {
      group.scheduled = true;
      setImmediate(() => void this.#commitWhenFree(group));
    }
    this.#handOver();
    if (waitForCommit) await group.committed;
  }

  /** Commits the group unless a member holds the connection (its end commits or reschedules). */
  async #commitWhenFree(group: Group): Promise<void> {
    group.scheduled = false;
    if (this.#group !== group || this.#held) return;
    this.#held = true;
    await this.#commit(group).catch(() => {});
    this.#handOver();
  }

  /** COMMIT by the connection's holder; settles every member's wait. */
  async #commit(group: Group): Promise<void> {
    this.#group = undefined;
    try {
      await this.#connection.run('commit');
    } catch (error) {
      if (this.#connection.inTransaction()) await this.#connection.run('rollback').catch(() => {});
      group.reject(error);
      throw error;
    }
    group.resolve();
  }

  /** Commits an open group (before the connection closes). */
  async flush(): Promise<void> {
    const group = this.#group;
    if (!group) return;
    const lease = await this.acquire();
    if (this.#group === group) await this.#commit(group).catch(() => {});
    await this.release(lease);
  }

  #handOver(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#held = false;
  }
}
