import { z } from 'zod';
import { branchName, MODEL_PATTERN } from '../validation.ts';
import { JOB_STATUSES } from './agent-job.ts';
import { changesInput } from './changes.ts';
import { JOB_MODES } from './job-mode.ts';

/**
 * The request shapes of the job API. The same schemas validate requests and
 * generate `/openapi.json`, so the description cannot drift from behaviour.
 */
const prompt = (maxChars: number) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
    .trim()
    .min(1, 'must not be empty')
    .max(maxChars, `must be at most ${maxChars} characters`)
    .meta({
      description: 'The instruction for the agent, 1 to the configured maximum characters after trimming.',
    });

export const createJobBody = (maxChars: number) =>
  z.strictObject({
    prompt: prompt(maxChars),
    ref: branchName()
      .optional()
      .meta({ description: '(extension) Base branch override; defaults to the project ref.' }),
    model: z
      .string()
      .regex(MODEL_PATTERN, 'must be provider/model-id')
      .optional()
      .meta({ description: "(extension) One of the project's allowed models." }),
    draft: z.boolean().optional().meta({ description: '(extension) Open the pull request as a draft.' }),
    changes: changesInput.optional(),
    mode: z
      .enum(JOB_MODES, { error: `must be one of: ${JOB_MODES.join(', ')}` })
      .optional()
      .meta({
        description:
          '(extension) `edit` (default) changes the docs; `ask` answers the prompt as a question from the docs and the code, with citations, and changes nothing (docs/questions.mdx). Follow-up messages keep the mode.',
      }),
  });
export type CreateJobBody = z.output<ReturnType<typeof createJobBody>>;

export const messageBody = (maxChars: number) =>
  z.strictObject({ prompt: prompt(maxChars), changes: changesInput.optional() });
export type MessageBody = z.output<ReturnType<typeof messageBody>>;

/** A retry takes no fields: it runs the failed run's instruction again. An empty body or `{}`. */
export const retryBody = z.strictObject({});

export const listJobsQuery = z.strictObject({
  status: z.enum(JOB_STATUSES).optional(),
  limit: z.coerce
    .number({ error: 'must be a whole number from 1 to 100' })
    .int('must be a whole number from 1 to 100')
    .min(1, 'must be a whole number from 1 to 100')
    .max(100, 'must be a whole number from 1 to 100')
    .default(20),
  cursor: z.string().max(200).optional(),
});
export type ListJobsQuery = z.output<typeof listJobsQuery>;

export const listEventsQuery = z.strictObject({
  after: z.coerce.number({ error: 'must be an event id' }).int().min(0).optional(),
  limit: z.coerce
    .number({ error: 'must be a whole number from 1 to 1000' })
    .int()
    .min(1)
    .max(1000)
    .default(500),
});
export type ListEventsQuery = z.output<typeof listEventsQuery>;
