/**
 * The create body of Mintlify's v1 agent API (docs/api/mintlify-v1.mdx) and how it becomes a v2 job: the user
 * messages are the instruction, system messages guidance; `branch` names the head branch;
 * `asDraft` (Mintlify's default: true) the pull request's draft state; `model` `sonnet` or
 * `opus` means the project's model.
 */
import { z } from 'zod';
import { DocwrightError } from '../errors.ts';
import { branchNameProblem, toBranchName } from '../ref-name.ts';
import { MODEL_PATTERN, parseOrThrow } from '../validation.ts';

const MAX_MESSAGES = 100;

/** A message as v1 clients send it: `content`, or AI SDK `useChat`'s text `parts`. */
const message = z
  .object({
    role: z.enum(['system', 'user', 'assistant'], { error: 'must be system, user or assistant' }),
    content: z.string().optional(),
    parts: z
      .array(z.object({ type: z.string(), text: z.string().optional() }))
      .max(100)
      .optional(),
  })
  .refine((m) => m.content !== undefined || m.parts !== undefined, { message: 'needs content' });

/** Unknown fields are ignored: v1 clients are fixed scripts written against Mintlify's server. */
export const v1CreateBody = z.object({
  messages: z
    .array(message, { error: 'must be a list of {role, content} messages' })
    .min(1, 'must hold at least one message')
    .max(MAX_MESSAGES, `must hold at most ${MAX_MESSAGES} messages`),
  branch: z.string().max(500).optional(),
  asDraft: z.boolean().optional(),
  model: z
    .string()
    .refine((m) => m === 'sonnet' || m === 'opus' || MODEL_PATTERN.test(m), {
      message: 'must be sonnet, opus or provider/model-id',
    })
    .optional(),
});

/** What the v2 job service is asked for. */
export interface V1JobInput {
  body: { prompt: string; draft: boolean; model?: string };
  headBranch: string | undefined;
}

const textOf = (m: z.output<typeof message>) =>
  (m.content ?? (m.parts ?? []).map((p) => (p.type === 'text' ? (p.text ?? '') : '')).join('')).trim();

export function toJobInput(raw: unknown): V1JobInput {
  const input = parseOrThrow(v1CreateBody, raw);
  // Free text becomes a usable name (clients put timestamps with ":" in it); what cannot is refused.
  const branch = input.branch === undefined ? undefined : toBranchName(input.branch);
  if (branch !== undefined) {
    const problem = branchNameProblem(branch);
    if (problem) {
      const message = `${problem}; it must be a git branch name`;
      throw new DocwrightError('invalid-request', `branch ${message}`, {
        fields: [{ field: 'branch', message }],
      });
    }
  }
  const said = (role: string) =>
    input.messages
      .filter((m) => m.role === role)
      .map(textOf)
      .filter(Boolean);
  const user = said('user');
  const system = said('system');
  const assistant = said('assistant');
  // Clients that put the whole request in system messages (Mintlify's n8n recipe) get it carried out.
  const instruction = user.length > 0 ? user.join('\n\n') : system.join('\n\n');
  const sections = [instruction];
  if (user.length > 0 && system.length > 0) sections.push(`Guidance:\n${system.join('\n\n')}`);
  if (assistant.length > 0) sections.push(`Earlier replies in this conversation:\n${assistant.join('\n\n')}`);
  const prompt = sections.filter(Boolean).join('\n\n');
  if (prompt === '') {
    const message = 'hold no text: send at least one user message with content';
    throw new DocwrightError('invalid-request', `messages ${message}`, {
      fields: [{ field: 'messages', message }],
    });
  }
  const model =
    input.model === undefined || input.model === 'sonnet' || input.model === 'opus' ? undefined : input.model;
  return {
    body: { prompt, draft: input.asDraft ?? true, ...(model !== undefined && { model }) },
    headBranch: branch,
  };
}

/** `GET /v1/agent/{projectId}/jobs?skip=&take=`. */
export const v1ListQuery = z.strictObject({
  skip: z.coerce.number({ error: 'must be a whole number ≥ 0' }).int().min(0).max(1_000_000).default(0),
  take: z.coerce
    .number({ error: 'must be a whole number from 1 to 100' })
    .int('must be a whole number from 1 to 100')
    .min(1, 'must be a whole number from 1 to 100')
    .max(100, 'must be a whole number from 1 to 100')
    .default(12),
});
