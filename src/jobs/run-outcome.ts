import type { RunDiff } from '../git/diff.ts';
import type { JobChange } from './changes.ts';
import type { JobCheck } from './job-checks.ts';
import type { Citation } from './job-mode.ts';

/** What a run ends with (the runner's answer). */
export type RunOutcome =
  | {
      status: 'completed';
      /** Pull request URL; null when nothing changed (an earlier run's link is kept). */
      prLink: string | null;
      branch: string | null;
      summary: string | null;
      /** The head branch against the job's base, when this run committed. */
      diff?: RunDiff;
      /** The code changes the run resolved (they replace the job's); absent: the job's stay. */
      changes?: JobChange[];
      /** The run's verification report (absent: the job's stays). */
      checks?: JobCheck[];
      /** An ask run's answer (docs/questions.mdx): it replaces the job's; absent for edit runs. */
      answer?: { text: string; citations: Citation[] };
    }
  | {
      status: 'failed';
      error: { code: string; message: string };
      changes?: JobChange[];
      checks?: JobCheck[];
    };
