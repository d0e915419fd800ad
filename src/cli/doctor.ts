/**
 * `docwright doctor` (docs/cli.mdx): checks the configuration — database, git, model endpoints,
 * code-host credentials — and prints one line per check (or, with `--json`, one document).
 * Exit code 0 when no check failed (warnings do not), 1 otherwise. The checks live in
 * doctor-checks.ts; this file only renders.
 */
import type { Command } from 'commander';
import { type CheckResult, type CheckStatus, type DoctorProgress, runDoctor } from './doctor-checks.ts';
import { positiveInt } from './parsers.ts';
import { spinner } from './spinner.ts';

const SYMBOL: Record<CheckStatus, string> = { ok: '✓', warn: '!', fail: '✗' };
const COLOR: Record<CheckStatus, number> = { ok: 32, warn: 33, fail: 31 };

interface DoctorCommandOptions {
  json?: boolean;
  project?: string;
  skipModel?: boolean;
  timeout: number;
}

/** The spinner's text for the checks' progress. */
function progressLine(progress: DoctorProgress): string {
  const running = progress.running.length > 0 ? ` · ${progress.running.join(', ')}` : '';
  const count = progress.total > 0 ? ` ${progress.done}/${progress.total}` : '…';
  return `checking${count}${running}`;
}

function render(checks: CheckResult[], projectNames: Map<string, string>, color: boolean): string {
  const paint = (status: CheckStatus, text: string) =>
    color ? `\x1b[${COLOR[status]}m${text}\x1b[0m` : text;
  const width = Math.max(...checks.map((c) => c.name.length));
  const lines: string[] = [];
  let group: string | undefined;
  for (const check of checks) {
    if (check.project !== group) {
      group = check.project;
      lines.push('', `project ${projectNames.get(group!)} (${group})`);
    }
    lines.push(`${paint(check.status, SYMBOL[check.status])} ${check.name.padEnd(width)}  ${check.detail}`);
  }
  const count = (status: CheckStatus) => checks.filter((c) => c.status === status).length;
  const [failed, warned] = [count('fail'), count('warn')];
  const summary =
    failed + warned === 0
      ? `all ${checks.length} checks passed`
      : [
          failed > 0 ? `${failed} failed` : '',
          warned > 0 ? `${warned} warning${warned === 1 ? '' : 's'}` : '',
          `${count('ok')} ok`,
        ]
          .filter(Boolean)
          .join(', ');
  lines.push('', summary);
  return lines.join('\n');
}

export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description('check the configuration: database, git, model endpoints, code-host credentials')
    .option('--project <id>', 'check only this project')
    .option('--skip-model', 'resolve models without sending them a request')
    .option('--timeout <seconds>', 'longest one check may take', positiveInt, 20)
    .option('--json', 'print { ok, checks: [{ name, status, detail, project? }] } as JSON')
    .action(async (options: DoctorCommandOptions) => {
      const interactive = !options.json && process.stdout.isTTY === true;
      const progress = interactive ? spinner(process.stdout, 'checking…') : undefined;
      let report: Awaited<ReturnType<typeof runDoctor>>;
      try {
        report = await runDoctor({
          projectId: options.project,
          skipModel: options.skipModel,
          timeoutMs: options.timeout * 1000,
          onProgress: progress ? (next) => progress.update(progressLine(next)) : undefined,
        });
      } finally {
        progress?.stop();
      }
      const ok = report.checks.every((c) => c.status !== 'fail');
      if (options.json) {
        const checks = report.checks.map(({ name, status, detail, project }) => ({
          name,
          status,
          detail,
          ...(project !== undefined && { project }),
        }));
        process.stdout.write(`${JSON.stringify({ ok, checks }, null, 2)}\n`);
      } else {
        const color = interactive && !process.env.NO_COLOR;
        process.stdout.write(`${render(report.checks, report.projectNames, color)}\n`);
      }
      process.exitCode = ok ? 0 : 1;
      // A check that timed out may leave a socket or child process behind: it must not keep
      // the command from ending once the report is out.
      setTimeout(() => process.exit(), 2_000).unref();
    });
}
