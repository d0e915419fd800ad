/**
 * The thread that checkpoints a SQLite database's write-ahead log (src/store/sqlite-dialect.ts
 * starts it). With SQLite's automatic checkpoints, the connection whose commit crosses the
 * threshold copies the log into the database and syncs it before its statement returns: on the
 * server's one connection that stalls the event loop for as long as the copy takes (hundreds of
 * milliseconds after a long transcript). Here a connection of its own does it, passively: it
 * never waits for, nor blocks, the connections that read and write, but for a short hold of the
 * server's writes once the log is past its limit (`catchUp`).
 */
import { fdatasyncSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

/** What the thread and the connection's driver say to each other (see `catchUp`). */
export type CheckpointMessage =
  | { type: 'hold-writes' }
  | { type: 'writes-held' }
  | { type: 'release-writes' };

/** Longest the thread waits for the server's connection to hold its writes. */
const HOLD_WAIT_MS = 1_000;

if (parentPort) run(workerData);

function run({
  file,
  intervalMs,
  walLimitBytes,
  flushFd,
}: {
  file: string;
  intervalMs: number;
  walLimitBytes: number;
  /** The database file, to flush it through (sqlite-flush-descriptor.ts); none: not flushed first. */
  flushFd: number | undefined;
}) {
  const port = parentPort!;
  const db = new DatabaseSync(file, { timeout: 0 });
  const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  const frameBytes = 24 + Number((db.prepare('PRAGMA page_size').get() as { page_size: number }).page_size);
  /** Copies what it can; returns the size of what the log holds (its file may be larger: it is reused). */
  const passive = () => Number((checkpoint.get() as { log: number }).log) * frameBytes;
  let held: (() => void) | undefined;
  port.on('message', (message: CheckpointMessage) => {
    if (message.type === 'writes-held') held?.();
  });

  /**
   * The log is started over only by a write that finds all of it copied into the database, which
   * under writes that never pause no passive checkpoint achieves: the log grew by every page
   * written for as long as they went on (1.4 GB in 35 s of creating jobs). So once it is past
   * its limit, the server's connection holds new write transactions while one more passive
   * checkpoint copies what the last one left (what was written while it ran); the next write
   * then starts the log over, writing its file again from the start. Reads go on meanwhile.
   *
   * Only a checkpoint that copies the whole log syncs the database file (a partial one need not:
   * the log still holds what it copied), so the held one would flush every page the unheld ones
   * copied since the last catch-up: 45–57 ms of held writes at a steady 1,000 creates/s. The file
   * is flushed before, unheld, and the held pass syncs only the pages it copies itself.
   */
  async function catchUp(): Promise<void> {
    flushDatabaseFile();
    const writesHeld = new Promise<boolean>((resolve) => {
      held = () => resolve(true);
      setTimeout(() => resolve(false), HOLD_WAIT_MS);
    });
    port.postMessage({ type: 'hold-writes' } satisfies CheckpointMessage);
    try {
      if (await writesHeld) passive();
    } finally {
      held = undefined;
      port.postMessage({ type: 'release-writes' } satisfies CheckpointMessage);
    }
  }

  function flushDatabaseFile(): void {
    if (flushFd === undefined) return;
    try {
      fdatasyncSync(flushFd);
    } catch {
      // Only sooner than the held pass would: that pass syncs the file in any case.
    }
  }

  let busy = false;
  setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      // Never waits for, nor blocks, a reader or a writer.
      if (passive() > walLimitBytes) {
        // What was written while the first one and its flush ran, so that the held one has
        // little left to copy.
        flushDatabaseFile();
        passive();
        await catchUp();
      }
    } catch {
      // Busy (another process is checkpointing) or the file is going away: the next tick tries again.
    } finally {
      busy = false;
    }
  }, intervalMs);
}
