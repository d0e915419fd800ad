/**
 * File access that never follows a symbolic link and never leaves half a file: what the
 * workspace reads, writes and hashes goes through here.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  opendirSync,
  openSync,
  readSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';

export function isEmptyDirectory(absolute: string): boolean {
  try {
    const dir = opendirSync(absolute);
    try {
      return dir.readSync() === null;
    } finally {
      dir.closeSync();
    }
  } catch {
    return false;
  }
}

export function readNoFollow(absolute: string): Buffer {
  const fd = openSync(absolute, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const size = fstatSync(fd).size;
    const buffer = Buffer.alloc(size);
    let offset = 0;
    while (offset < size) {
      const n = readSync(fd, buffer, offset, size - offset, offset);
      if (n === 0) break;
      offset += n;
    }
    return offset === size ? buffer : buffer.subarray(0, offset);
  } finally {
    closeSync(fd);
  }
}

/** Writes through a temporary file and a rename: never through a link, never half a file. */
export function atomicWrite(absolute: string, data: Buffer, mode: number | undefined): void {
  const temporary = path.join(
    path.dirname(absolute),
    `.${path.basename(absolute)}.docwright-${randomBytes(6).toString('hex')}.tmp`,
  );
  try {
    writeFileSync(temporary, data, { flag: 'wx', mode: mode === undefined ? 0o644 : mode & 0o777 });
    renameSync(temporary, absolute);
  } catch (error) {
    try {
      unlinkSync(temporary);
    } catch {}
    throw error;
  }
}

export function contentHash(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('base64');
}

/** Hash of a regular file's content, or null when there is none. */
export function readHash(absolute: string): string | null {
  try {
    if (!lstatSync(absolute).isFile()) return null;
    return contentHash(readNoFollow(absolute));
  } catch (error) {
    if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR') || isCode(error, 'ELOOP')) return null;
    throw error;
  }
}

export function isCode(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === code;
}
