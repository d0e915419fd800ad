/**
 * The pull request's `Checks` section (SPEC §19, docs/verification.mdx): each check of the last
 * verification with what it covered and how it went, then the findings that were already in the
 * base tree, which the job did not introduce and did not block on.
 */
import type { CheckReport } from '../agent/verify/types.ts';

/** Findings listed at most, so that a body stays within what hosts accept. */
const MAX_LISTED = 30;

const STATUS_TEXT: Record<CheckReport['status'], string> = {
  passed: 'passed',
  fixed: 'passed, fixed by the agent',
  failed: 'failed',
  skipped: 'skipped',
};

/** `3 pages, 41 links` from `{pages: 3, links: 41}`. */
const countsText = (counts: Record<string, number> | undefined) =>
  Object.entries(counts ?? {})
    .map(([what, n]) => `${n.toLocaleString('en-US')} ${what}`)
    .join(', ');

/** One line of table cell text, whatever a check or a model put in it. */
const cell = (text: string) =>
  text
    .replace(/[\r\n]+/g, ' ')
    .replace(/\|/g, '\\|')
    .slice(0, 300);

export function checksSection(checks: readonly CheckReport[]): string {
  if (checks.length === 0) return '';
  const rows = checks.map((check) => {
    const covered = countsText(check.counts);
    const why = check.status === 'skipped' && check.skipped ? `: ${check.skipped}` : '';
    const result = `${STATUS_TEXT[check.status]}${why}${covered ? ` (${covered})` : ''}`;
    const name = /\s/.test(check.name) ? `\`${check.name.replace(/`/g, "'")}\`` : check.name;
    return `| ${cell(name)} | ${cell(result)} |`;
  });
  const already = checks.flatMap((c) =>
    c.findings.filter((f) => f.preexisting).map((f) => ({ check: c.name, ...f })),
  );
  const listed = already
    .slice(0, MAX_LISTED)
    .map(
      (f) => `- \`${f.path}${f.line === null ? '' : `:${f.line}`}\` ${cell(f.message)} (${cell(f.check)})`,
    );
  if (already.length > MAX_LISTED) listed.push(`- … and ${already.length - MAX_LISTED} more`);
  const advisory = checks.flatMap((c) =>
    c.findings.filter((f) => !f.preexisting && f.level !== 'error').map((f) => ({ check: c.name, ...f })),
  );
  return [
    '### Checks',
    '',
    '| Check | Result |',
    '|---|---|',
    ...rows,
    ...(advisory.length > 0
      ? [
          '',
          'Warnings and suggestions on lines of this change (they do not block):',
          '',
          ...advisory
            .slice(0, MAX_LISTED)
            .map(
              (f) =>
                `- \`${f.path}${f.line === null ? '' : `:${f.line}`}\` ${cell(f.message)} (${f.level}, ${cell(f.check)})`,
            ),
        ]
      : []),
    ...(already.length > 0
      ? ['', 'Already there before this change (not introduced by it, not blocking):', '', ...listed]
      : []),
  ].join('\n');
}
