/**
 * The automation model of docs/automations.mdx and its validation: what the API, the dashboard's form and
 * the CLI accept, with an error naming each offending field (`trigger.cron`, `instruction`, …).
 *
 * An automation `{id: "aut_…", name, trigger, instruction, draft, enabled, createdAt}` belongs to
 * a project. Its trigger is one of:
 * - `code-change`: a pull/merge request merged into a context repository's ref, or a direct push
 *   to it; filtered by `repositories` (context names; empty: all), `paths` (globs the change must
 *   touch; empty: any) and `skipLabels` (default `["no-docs"]`);
 * - `schedule`: `cron` (5 fields) in `timeZone` (IANA, default UTC); with `batch`, the job
 *   carries every change merged since the previous run;
 * - `docs-push`: a push to the project's own ref, optionally filtered by `paths`;
 * - `manual`: only when triggered.
 */
import { z } from 'zod';
import type { FieldError } from '../errors.ts';
import { globPattern, parseOrThrow } from '../validation.ts';
import { DEFAULT_TIME_ZONE, scheduleProblem } from './schedule.ts';

export const TRIGGER_TYPES = ['code-change', 'schedule', 'docs-push', 'manual'] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];

export const RUN_OUTCOMES = [
  'running',
  'pull-request',
  'branch-pushed',
  'no-changes-needed',
  'failed',
  'skipped',
] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];

/** Why a run was skipped (its `reason`), so that a user sees why nothing happened. */
export const SKIP_REASONS = ['paths', 'label', 'own-change', 'disabled', 'missed', 'rate-limited'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/** The name of the project's own repository among the context repositories' names (docs/code-context.mdx). */
import { DOCS_REPOSITORY } from '../repository-names.ts';

export { DOCS_REPOSITORY };
export const DEFAULT_SKIP_LABELS: readonly string[] = ['no-docs'];

export const MAX_NAME_LENGTH = 200;
export const MAX_INSTRUCTION_LENGTH = 100_000;
/** A project has at most 10 context repositories, and its own. */
export const MAX_REPOSITORIES = 11;
export const MAX_PATHS = 50;
export const MAX_SKIP_LABELS = 50;

/** A context repository's name (a slug), or `docs`. */
const repositoryName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be the name of a context repository, or docs');

const distinct = <T extends z.ZodType<string>>(item: T, max: number) =>
  z
    .array(item)
    .max(max)
    .refine((list) => new Set(list).size === list.length, 'must not name one twice');

const paths = distinct(globPattern(), MAX_PATHS).default([]);

const codeChangeTrigger = z
  .object({
    type: z.literal('code-change'),
    /** Context repositories watched; empty: all of them (not the project's own, unless named). */
    repositories: distinct(repositoryName, MAX_REPOSITORIES).default([]),
    /** Globs of which a change must touch at least one file; empty: any change. */
    paths,
    /** A change carrying any of these labels (in any case) is skipped. */
    skipLabels: distinct(z.string().trim().min(1).max(200), MAX_SKIP_LABELS).default([
      ...DEFAULT_SKIP_LABELS,
    ]),
  })
  .strict();

const scheduleTrigger = z
  .object({
    type: z.literal('schedule'),
    cron: z.string().trim(),
    timeZone: z.string().trim().default(DEFAULT_TIME_ZONE),
    /** The job carries every change merged into the context repositories since the previous run. */
    batch: z.boolean().default(false),
  })
  .strict()
  .superRefine((trigger, ctx) => {
    const problem = scheduleProblem(trigger.cron, trigger.timeZone);
    if (problem) ctx.addIssue({ code: 'custom', path: [problem.field], message: problem.message });
  });

const docsPushTrigger = z.object({ type: z.literal('docs-push'), paths }).strict();

const manualTrigger = z.object({ type: z.literal('manual') }).strict();

export const triggerSchema = z.discriminatedUnion(
  'type',
  [codeChangeTrigger, scheduleTrigger, docsPushTrigger, manualTrigger],
  {
    error: (issue) =>
      issue.code === 'invalid_union'
        ? `must be one of ${TRIGGER_TYPES.join(', ')}`
        : 'must be an object with a type, such as {"type": "code-change"}',
  },
);

export type TriggerInput = z.input<typeof triggerSchema>;
export type Trigger = z.output<typeof triggerSchema>;
export type CodeChangeTrigger = Extract<Trigger, { type: 'code-change' }>;
export type ScheduleTrigger = Extract<Trigger, { type: 'schedule' }>;
export type DocsPushTrigger = Extract<Trigger, { type: 'docs-push' }>;

const fields = {
  name: z.string().trim().min(1, 'must not be empty').max(MAX_NAME_LENGTH),
  trigger: triggerSchema,
  /** What the agent is asked to do each time (the prompt of the jobs it starts). */
  instruction: z.string().trim().min(1, 'must not be empty').max(MAX_INSTRUCTION_LENGTH),
  /** The pull requests its jobs open are drafts. */
  draft: z.boolean(),
  /** A disabled automation records every change it would have run for as `skipped` (`disabled`). */
  enabled: z.boolean(),
};

/** A new automation: `name`, `trigger` and `instruction` required; not a draft and enabled by default. */
export const automationCreateInput = z
  .object({ ...fields, draft: fields.draft.default(false), enabled: fields.enabled.default(true) })
  .strict();
/** A change to an automation: any of its fields (a trigger is replaced whole). */
export const automationUpdateInput = z.object(fields).partial().strict();

export type AutomationInput = z.input<typeof automationCreateInput>;
export type AutomationSettings = z.output<typeof automationCreateInput>;
export type AutomationUpdate = z.output<typeof automationUpdateInput>;

/** An automation as the API shows it. */
export interface Automation extends AutomationSettings {
  /** `aut_…` */
  id: string;
  /** ISO 8601. */
  createdAt: string;
}

/** A change a run carries, as the job's `changes` take it (docs/code-context.mdx). */
export type RunChange =
  | { repository: string; pullRequest: number }
  | { repository: string; commit: string }
  | { repository: string; range: string };

/** One firing of an automation (docs/automations.mdx). */
export interface AutomationRun {
  /** `arun_…` */
  id: string;
  automationId: string;
  trigger: { type: TriggerType; changes: RunChange[]; scheduledFor: string | null };
  jobId: string | null;
  outcome: RunOutcome;
  /** Why it was skipped (one of SKIP_REASONS), or why it failed; null otherwise. */
  reason: string | null;
  createdAt: string;
}

/** A new automation's settings, or a DocwrightError `invalid-request` naming every offending field. */
export const parseAutomation = (input: unknown): AutomationSettings =>
  parseOrThrow(automationCreateInput, input);

/** A change to an automation, or a DocwrightError `invalid-request` naming every offending field. */
export const parseAutomationUpdate = (input: unknown): AutomationUpdate =>
  parseOrThrow(automationUpdateInput, input);

/**
 * The trigger's repositories that are not the project's (`contextNames`, its context
 * repositories' names; `docs` always is), as field errors for an `invalid-request`.
 */
export function unknownRepositories(trigger: Trigger, contextNames: readonly string[]): FieldError[] {
  if (trigger.type !== 'code-change') return [];
  const known = new Set([...contextNames, DOCS_REPOSITORY]);
  return trigger.repositories.flatMap((name, i) =>
    known.has(name)
      ? []
      : [
          {
            field: `trigger.repositories.${i}`,
            message: `names no context repository of the project (it has ${contextNames.length === 0 ? 'none' : contextNames.join(', ')})`,
          },
        ],
  );
}
