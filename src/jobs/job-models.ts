import { DocwrightError } from '../errors.ts';
import type { ProjectRow } from '../store/schema.ts';

/**
 * The model a job runs with: the one it asks for, if the project allows it (its own model or
 * one of `allowedModels`), else the project's, else the server's default (`''` when there is
 * none: the job then fails `model-not-configured`). Throws `invalid-request` for a model the
 * project does not allow.
 */
export function chooseModel(
  project: Pick<ProjectRow, 'model' | 'settings'>,
  requested: string | undefined,
  defaultModel: string | undefined,
): string {
  const settings = JSON.parse(project.settings) as { allowedModels?: string[] };
  const fallback = project.model ?? defaultModel ?? '';
  if (requested === undefined) return fallback;
  const allowed = new Set([fallback, ...(settings.allowedModels ?? [])].filter(Boolean));
  if (!allowed.has(requested)) {
    const message =
      allowed.size > 0
        ? `is not one of this project's models: ${[...allowed].join(', ')}`
        : 'this project allows no model choice';
    throw new DocwrightError('invalid-request', `model ${message}`, {
      fields: [{ field: 'model', message }],
    });
  }
  return requested;
}
