/**
 * Reading a checkout's files for site detection: repository-relative POSIX paths, and reads that
 * never follow a symbolic link and never read more than asked.
 */
import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import path from 'node:path';

/** Normalises a repository-relative path to POSIX form without './' ('.' for the root). */
export function normalizeRel(p: string): string {
  const n = path.posix
    .normalize(p.replaceAll('\\', '/'))
    .replace(/^\.\/+/, '')
    .replace(/\/+$/, '');
  return n === '' ? '.' : n;
}

export function joinRel(dir: string, rel: string): string {
  return normalizeRel(dir === '.' ? rel : `${dir}/${rel}`);
}

/** Path relative to `dir` when inside it, else null. */
export function relativeTo(dir: string, file: string): string | null {
  if (dir === '.') return file;
  return file.startsWith(`${dir}/`) ? file.slice(dir.length + 1) : null;
}

/** True when `rel` names no symbolic link along its way and exists (as a file or directory). */
export async function safeStat(root: string, rel: string): Promise<'file' | 'dir' | null> {
  const n = normalizeRel(rel);
  if (n === '..' || n.startsWith('../') || path.isAbsolute(n)) return null;
  if (n === '.') return 'dir';
  let current = root;
  const parts = n.split('/');
  for (const [i, part] of parts.entries()) {
    current = path.join(current, part);
    try {
      const st = await lstat(current);
      if (st.isSymbolicLink()) return null;
      if (i === parts.length - 1) return st.isFile() ? 'file' : st.isDirectory() ? 'dir' : null;
      if (!st.isDirectory()) return null;
    } catch {
      return null;
    }
  }
  return null;
}

/** Reads at most `maxBytes` of a regular file (no symbolic links); null when it is not one. */
export async function readRepoFile(
  root: string,
  rel: string,
  maxBytes: number,
): Promise<{ text: string; truncated: boolean } | null> {
  if ((await safeStat(root, rel)) !== 'file') return null;
  const flags = constants.O_RDONLY | constants.O_NOFOLLOW;
  const handle = await open(path.join(root, normalizeRel(rel)), flags).catch(() => null);
  if (!handle) return null;
  try {
    const size = (await handle.stat()).size;
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    let read = 0;
    while (read < length) {
      const { bytesRead } = await handle.read(buffer, read, length - read, read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    let text = new TextDecoder().decode(buffer.subarray(0, read));
    if (size > maxBytes) text = text.replace(/\uFFFD$/, '');
    return { text: text.replace(/^\uFEFF/, ''), truncated: size > maxBytes };
  } finally {
    await handle.close();
  }
}
