/**
 * The thread that checkpoints a SQLite database's write-ahead log (src/store/sqlite-dialect.ts
 * starts it). With SQLite's automatic checkpoints, the connection whose commit crosses the
 * threshold copies the log into the database and syncs it before its statement returns: on the
 * server's one connection that stalls the event loop for as long as the copy takes (hundreds of
 * milliseconds after a long transcript). Here a connection of its own does it, passively: it
 * never waits for, nor blocks, the connections that read and write.
 */
import { DatabaseSync } from 'node:sqlite';
import { workerData } from 'node:worker_threads';

const { file, intervalMs } = workerData as { file: string; intervalMs: number };
const db = new DatabaseSync(file, { timeout: 0 });
setInterval(() => {
  try {
    db.exec('PRAGMA wal_checkpoint(PASSIVE)');
  } catch {
    // Busy (another checkpoint is running) or the file is going away: the next tick tries again.
  }
}, intervalMs);
