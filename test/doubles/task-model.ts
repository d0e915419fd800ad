/**
 * A scripted model for `docwright eval`, where several agents (and the judge) call one model at
 * once: each request is answered from what it carries rather than in arrival order. An agent's
 * request gets the next step of the plan whose `match` its instruction or its code change (the
 * user and system messages) contains — the step its conversation has reached, one per assistant turn so far. A judge's
 * request (it offers the `verdict` tool) gets `judge`'s verdict on its prompt.
 *
 *   const model = await startOpenAIServer({ fallback: taskModel([{ match: 'Fix the typo', steps }]) });
 */
import type { RecordedRequest, ReplyStep, ScriptEntry, ScriptStep } from './script.ts';
import { httpError, reply, toolCall } from './script.ts';

export interface TaskPlan {
  /** Text the task's instruction contains (and no other task's does). */
  match: string;
  /** The model's turns, in order. */
  steps: ReplyStep[];
}

export interface TaskModelOptions {
  /**
   * The judge's verdict on a criterion, given the prompt it received (default: passed); null
   * answers with text and no verdict, as a judge that ignores the tool would.
   */
  judge?: (prompt: string) => { passed: boolean; reason: string } | null;
  /**
   * DogBench's judge (it offers the `score` tool): the tool input to answer with, given the
   * prompt and how many score requests came before this one (default: none, a 400).
   */
  dogbenchJudge?: (prompt: string, attempt: number) => unknown;
}

const text = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((part: { text?: string }) => part.text ?? '').join('')
      : '';

export function taskModel(plans: TaskPlan[], options: TaskModelOptions = {}): ScriptEntry {
  let scores = 0;
  return (request: RecordedRequest): ScriptStep => {
    const messages = (request.body.messages ?? []) as { role: string; content: unknown }[];
    const prompt = text(messages.find((m) => m.role === 'user')?.content);
    const tools = ((request.body.tools ?? []) as { function?: { name?: string } }[]).map(
      (t) => t.function?.name,
    );
    if (tools.includes('score')) {
      const answer = options.dogbenchJudge?.(prompt, scores++);
      return answer === undefined
        ? httpError(400, { message: 'test double: no DogBench judge' })
        : toolCall('score', answer);
    }
    if (tools.includes('verdict')) {
      const verdict = options.judge ? options.judge(prompt) : { passed: true, reason: 'The change does it.' };
      return verdict ? toolCall('verdict', verdict) : reply('It looks fine to me.');
    }
    // A task's code change travels in the system prompt (the change's brief), its instruction as the user's.
    const carried = messages
      .filter((m) => m.role === 'system' || m.role === 'user')
      .map((m) => text(m.content))
      .join('\n');
    const plan = plans.find((p) => carried.includes(p.match));
    if (!plan)
      return httpError(400, {
        message: `test double: no plan matches the instruction ${prompt.slice(0, 200)}`,
      });
    const turn = messages.filter((m) => m.role === 'assistant').length;
    return (
      plan.steps[turn] ??
      httpError(400, { message: `test double: the plan for "${plan.match}" has no step ${turn + 1}` })
    );
  };
}
