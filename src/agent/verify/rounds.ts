/**
 * Verification across a run's repair rounds (SPEC §19): which findings go back to the model,
 * whether the run may finish, and the report the job and the pull request show.
 */

import type { CheckReport } from './types.ts';
import type { VerifiedCheck, VerifiedFinding } from './verify-tree.ts';

/** What one verification means for the run. */
export interface RoundVerdict {
  /** Findings the run introduced at level `error`: the run may not finish with them. */
  blocking: VerifiedFinding[];
  /** Warnings and suggestions the run introduced that the model has not been shown yet (shown once). */
  advisory: VerifiedFinding[];
}

const keyOf = (check: string, f: VerifiedFinding) => JSON.stringify([check, f.rule, f.path, f.message]);

export class VerificationRounds {
  /** Checks that found something the run introduced in an earlier round. */
  readonly #troubled = new Set<string>();
  /** Advisory findings already shown to the model. */
  readonly #shown = new Set<string>();
  #last: VerifiedCheck[] = [];

  /** Takes one verification's results and says what the model must hear. */
  record(results: VerifiedCheck[]): RoundVerdict {
    this.#last = results;
    const blocking: VerifiedFinding[] = [];
    const advisory: VerifiedFinding[] = [];
    for (const check of results) {
      for (const finding of check.findings) {
        if (finding.preexisting) continue;
        if (finding.level === 'error') {
          blocking.push(finding);
          this.#troubled.add(check.name);
          continue;
        }
        const key = keyOf(check.name, finding);
        if (this.#shown.has(key)) continue;
        this.#shown.add(key);
        advisory.push(finding);
      }
    }
    return { blocking, advisory };
  }

  /** AgentJob `checks`: the last verification, each check with how it went over the rounds. */
  report(): CheckReport[] {
    return this.#last.map((check) => {
      const introducedError = check.findings.some((f) => !f.preexisting && f.level === 'error');
      const status: CheckReport['status'] =
        check.skipped !== undefined
          ? 'skipped'
          : introducedError
            ? 'failed'
            : this.#troubled.has(check.name)
              ? 'fixed'
              : 'passed';
      return {
        name: check.name,
        status,
        findings: check.findings.map((f) => ({
          path: f.path,
          line: f.line,
          message: f.message,
          level: f.level,
          preexisting: f.preexisting,
        })),
        ...(check.counts && { counts: check.counts }),
        ...(check.skipped !== undefined && { skipped: check.skipped }),
      };
    });
  }
}

/** `path:line: message` — the form every finding takes in a repair prompt and a failure. */
export function describeFinding(f: Pick<VerifiedFinding, 'path' | 'line' | 'message' | 'rule'>): string {
  return `${f.path}${f.line === null ? '' : `:${f.line}`}: ${f.message} (${f.rule})`;
}
