import { compiledQuery } from '../../../store/compiled-query.ts';
import type { JobRow } from '../../../store/schema.ts';

/** The claimed run's job (SQLite, in the claim's transaction): every claim reads it, so compiled once. */
export const jobById = compiledQuery<{ id: string }, JobRow>(['id'], (db, p) =>
  db.selectFrom('jobs').selectAll().where('id', '=', p.id).compile(),
);
