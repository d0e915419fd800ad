import type { Transaction } from 'kysely';
import type { Database, ProjectRow } from '../store/schema.ts';
import {
  type ChangeInput,
  type ChangeRequest,
  DOCS_REPOSITORY,
  type JobChange,
  type NamedRepository,
  pendingJobChanges,
  requestedChanges,
} from './changes.ts';

/** Whether a request may name code changes: it names some, or its prompt holds a URL. */
export const mayNameChanges = (body: { prompt: string; changes?: ChangeInput[] | undefined }) =>
  (body.changes?.length ?? 0) > 0 || /https?:\/\//i.test(body.prompt);

/**
 * The changes a request names (src/jobs/changes.ts), with the repositories they may name: the
 * project's own and its context repositories. Those are read only when the request names a
 * change or its prompt holds a URL: most creates do neither, and pay no query for it.
 * `listed` is what the AgentJob shows of them until a run resolves them (pendingJobChanges),
 * undefined when the request adds none.
 */
export async function changesOfRequest(
  trx: Transaction<Database>,
  project: ProjectRow,
  body: { prompt: string; changes?: ChangeInput[] | undefined },
  earlier: readonly ChangeRequest[] = [],
  known: readonly JobChange[] = [],
): Promise<{ changes: ChangeRequest[]; listed?: JobChange[] }> {
  if (!mayNameChanges(body)) return { changes: [...earlier] };
  const own: NamedRepository = {
    name: DOCS_REPOSITORY,
    repository: project.repository,
    host: project.host,
  };
  const contexts = await trx
    .selectFrom('context_repositories')
    .select(['name', 'repository', 'host'])
    .where('project_id', '=', project.id)
    .orderBy('name')
    .execute();
  const repositories = [own, ...contexts];
  const changes = requestedChanges(body.prompt, body.changes, repositories, earlier);
  if (changes.length === earlier.length) return { changes };
  return { changes, listed: pendingJobChanges(changes, repositories, known) };
}
