import type { FastifyRequest } from 'fastify';
import { DocwrightError } from '../errors.ts';
import { isProjectId } from '../ids.ts';
import type { ApiKeyRow, KeyService, Principal } from '../keys/keys.ts';

/** The key of the request's `Authorization: Bearer <key>`, or 401 when there is none. */
export function bearerKey(request: FastifyRequest): string {
  const header = request.headers.authorization;
  if (!header)
    throw new DocwrightError(
      'unauthorized',
      'missing Authorization header: send Authorization: Bearer <API key>',
    );
  const match = /^Bearer +(\S+) *$/i.exec(header);
  if (!match) throw new DocwrightError('unauthorized', 'the Authorization header must be Bearer <API key>');
  return match[1]!;
}

/**
 * Checks the bearer key against the project in the path (docs/api/authentication.mdx):
 * 401 for a missing, malformed, unknown, revoked or expired key; 403 for a
 * valid key on another project's path; 404 when that project does not exist.
 */
export async function authorizeProject(
  request: FastifyRequest,
  projectId: string,
  deps: {
    keys: KeyService;
    projectExists: (id: string) => Promise<boolean>;
    /** Reads the key's row with the request's own query (see `KeyService.authenticate`). */
    lookUp?: (hash: string) => Promise<ApiKeyRow | undefined>;
  },
): Promise<Principal> {
  const principal = await deps.keys.authenticate(bearerKey(request), deps.lookUp);
  if (principal.projectId !== projectId) {
    // Only an id of the project shape can exist; anything else (a NUL byte,
    // which PostgreSQL refuses outright) is answered without a query.
    if (!isProjectId(projectId) || !(await deps.projectExists(projectId))) {
      throw new DocwrightError('project-not-found', `project ${projectId} does not exist`);
    }
    throw new DocwrightError('forbidden', 'this API key belongs to another project');
  }
  return principal;
}
