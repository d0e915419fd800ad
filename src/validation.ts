import { z } from 'zod';
import { DocwrightError, type FieldError } from './errors.ts';
import { compileGlob } from './glob.ts';
import { branchNameProblem, branchPrefixProblem } from './ref-name.ts';

/** Field errors of a failed zod parse, with paths joined by dots under `prefix`. */
export function fieldErrors(error: z.ZodError, prefix = ''): FieldError[] {
  return error.issues.map((issue) => {
    const field = [prefix, ...issue.path.map(String)].filter(Boolean).join('.');
    if (issue.code === 'unrecognized_keys') {
      return { field: [field, ...issue.keys].filter(Boolean).join('.'), message: 'is not a known field' };
    }
    return { field: field || '(root)', message: issue.message };
  });
}

/** Every offending field of a failed zod parse on one line: `field message; field message`. */
export const fieldSummary = (fields: FieldError[]): string =>
  fields.map((f) => `${f.field} ${f.message}`).join('; ');

/**
 * Parses `value` with `schema` or throws one `invalid-request` error naming
 * every offending field.
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, prefix = ''): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const fields = fieldErrors(result.error, prefix);
  const summary = fieldSummary(fields);
  throw new DocwrightError('invalid-request', `invalid request: ${summary}`, { fields });
}

/** A branch (or tag) name by git's rules (src/ref-name.ts). */
export const branchName = () =>
  z.string().superRefine((value, ctx) => {
    const problem = branchNameProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: `must be a valid branch name (it ${problem})` });
  });

/** A prefix that makes valid branch names when a job's short id is appended. */
export const branchPrefix = () =>
  z.string().superRefine((value, ctx) => {
    const problem = branchPrefixProblem(value);
    if (problem)
      ctx.addIssue({
        code: 'custom',
        message: `must be a branch-name prefix such as docwright/ (it ${problem})`,
      });
  });

/**
 * A commit author's email as git takes it: `name@host` without spaces, control characters, or
 * `<` and `>` (which would end git's author field). Wider than a mailbox address: GitHub's own
 * `docwright[bot]@users.noreply.github.com` is one.
 */
export const commitEmail = () =>
  z
    .string()
    .max(254)
    .regex(/^[^\s<>@\p{Cc}]+@[^\s<>@\p{Cc}]+$/u, 'must be an address such as docs-bot@example.com');

/** `provider/model-id` for the providers of docs/agent.mdx. */
export const MODEL_PATTERN = /^(anthropic|openai|openai-compatible)\/[A-Za-z0-9._:@/-]{1,200}$/;

/** A path inside a repository: relative, POSIX, never through `..`. */
export const relativePath = () =>
  z
    .string()
    .min(1)
    .max(500)
    .refine(
      (p) => !p.startsWith('/') && !p.split('/').includes('..') && !p.includes('\\') && !p.includes('\0'),
      { message: 'must be a relative POSIX path inside the repository' },
    );

/** A glob the agent's matcher accepts (src/glob.ts). */
export const globPattern = () =>
  z
    .string()
    .min(1)
    .max(500)
    .superRefine((value, ctx) => {
      try {
        compileGlob(value);
      } catch (error) {
        ctx.addIssue({
          code: 'custom',
          message: `must be a glob such as **/*.mdx (${(error as Error).message})`,
        });
      }
    });
