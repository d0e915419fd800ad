/**
 * Git's rules for branch names (`git check-ref-format --branch`, see git-check-ref-format(1)),
 * checked in code so that no name a client or project sets reaches git unchecked. Stricter
 * than git in three ways that only refuse confusing names: no leading `refs/` (it would
 * name `refs/heads/refs/…`), no `HEAD` component first, and at most 200 bytes (each component
 * of a loose ref is a file name, which most file systems cap at 255 bytes).
 */

/** Longest branch name, in UTF-8 bytes. */
export const MAX_BRANCH_NAME_BYTES = 200;

/** Why `name` is not a usable branch name, or undefined when it is. */
export function branchNameProblem(name: string): string | undefined {
  if (name === '') return 'is empty';
  if (Buffer.byteLength(name) > MAX_BRANCH_NAME_BYTES) return `is longer than ${MAX_BRANCH_NAME_BYTES} bytes`;
  if (name.startsWith('-')) return 'starts with "-"';
  if (name === '@') return 'is "@"';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what git forbids
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(name)) {
    return 'contains a space, a control character or one of ~ ^ : ? * [ \\';
  }
  if (name.includes('..')) return 'contains ".."';
  if (name.includes('@{')) return 'contains "@{"';
  if (name.startsWith('/') || name.endsWith('/') || name.includes('//'))
    return 'starts or ends with "/" or contains "//"';
  if (name.endsWith('.')) return 'ends with "."';
  const components = name.split('/');
  if (components.some((c) => c.startsWith('.'))) return 'has a part that starts with "."';
  if (components.some((c) => c.endsWith('.lock'))) return 'has a part that ends with ".lock"';
  if (components[0] === 'refs') return 'starts with "refs/" (give the branch name alone)';
  if (components[0] === 'HEAD') return 'is or starts with "HEAD"';
  return undefined;
}

export const isValidBranchName = (name: string): boolean => branchNameProblem(name) === undefined;

/**
 * Why a branch prefix is unusable, or undefined. A prefix is valid when every branch it starts
 * (prefix + a job's short id) is; the empty prefix is allowed.
 */
export function branchPrefixProblem(prefix: string): string | undefined {
  if (prefix === '') return undefined;
  const problem = branchNameProblem(`${prefix}0123abcd`);
  if (problem) return problem;
  if (Buffer.byteLength(prefix) > 100) return 'is longer than 100 bytes';
  return undefined;
}

/**
 * A branch name made from free text the way clients expect names to come out: each character
 * git forbids becomes "-", and the shapes git refuses (`..`, `//`, `@{`, a part starting with
 * "." or ending with ".lock", a leading "-" or a trailing "." or "/") are smoothed away. Mintlify
 * v1 clients send e.g. `docs-update-2026-11-23T10:00:00.000Z`, which has ":" in it. The result
 * may still be unusable (empty, too long); check it with `branchNameProblem`.
 */
export function toBranchName(text: string): string {
  return (
    text
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what git forbids
      .replace(/[\x00-\x20\x7f~^:?*[\\]+/g, '-')
      .replace(/@\{/g, '-')
      .replace(/\.{2,}/g, '.')
      .replace(/\/{2,}/g, '/')
      .split('/')
      .map((part) => part.replace(/^\.+/, '').replace(/\.lock$/, '-lock'))
      .filter((part) => part !== '')
      .join('/')
      .replace(/^-+/, '')
      .replace(/[./]+$/, '')
  );
}
