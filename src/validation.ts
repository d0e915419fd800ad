import type { z } from 'zod';
import { DocwrightError, type FieldError } from './errors.ts';

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

/**
 * Parses `value` with `schema` or throws one `invalid-request` error naming
 * every offending field.
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, prefix = ''): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const fields = fieldErrors(result.error, prefix);
  const summary = fields.map((f) => `${f.field} ${f.message}`).join('; ');
  throw new DocwrightError('invalid-request', `invalid request: ${summary}`, { fields });
}

/** Git branch names, as `git check-ref-format --branch` would accept them (the common subset). */
export const REF_PATTERN =
  /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*@\{)(?!\/)(?!.*\/$)(?!.*\.lock$)(?!.*\.$)[A-Za-z0-9._/+-]{1,200}$/;

/** `provider/model-id` for the providers of SPEC §7. */
export const MODEL_PATTERN = /^(anthropic|openai|openai-compatible)\/[A-Za-z0-9._:@/-]{1,200}$/;
