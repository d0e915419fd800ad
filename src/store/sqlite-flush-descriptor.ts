import { fstatSync, openSync, statSync } from 'node:fs';

/** By database file: a descriptor of this process's own, open for as long as the process. */
const descriptors = new Map<string, number>();

/**
 * A descriptor of the database file that the checkpoint thread syncs the file through
 * (sqlite-checkpointer.ts), or undefined when the file cannot be opened.
 *
 * Never closed: closing any descriptor of a file releases every POSIX lock this process holds on
 * it, SQLite's included (SQLite's "How To Corrupt An SQLite Database File", §2.2), which would let
 * another process take the database's exclusive lock under this one's connections. So there is
 * one per file and process, opened once and reused; a file replaced at the same path (a new
 * inode) gets one of its own.
 */
export function flushDescriptor(file: string): number | undefined {
  try {
    const known = descriptors.get(file);
    if (known !== undefined && fstatSync(known).ino === statSync(file).ino) return known;
    const fd = openSync(file, 'r');
    descriptors.set(file, fd);
    return fd;
  } catch {
    return undefined;
  }
}
