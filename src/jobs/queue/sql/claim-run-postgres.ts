import { CompiledQuery } from 'kysely';

/** PostgreSQL's claim: one call of `claim_run` (../claim_run.sql), answering the run and its job. */
export const claimRunOnPostgres = (p: {
  workerId: string;
  now: string;
  leaseUntil: string;
  projectConcurrency: number;
}) =>
  CompiledQuery.raw('select run, job from claim_run($1, $2, $3, $4)', [
    p.workerId,
    p.now,
    p.leaseUntil,
    p.projectConcurrency,
  ]);
