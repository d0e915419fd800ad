import { generateText, type ModelMessage, tool } from 'ai';
import { askSystemPrompt, questionMessage } from './ask-prompt.ts';
import type { Model } from './model-resolution.ts';
import { withModelRetries } from './model-retries.ts';
import { instructionMessage, systemPrompt } from './prompt.ts';
import { cachedInstructions, withCachedConversation } from './prompt-cache.ts';
import { detectSite } from './site/detect.ts';
import { readGuidance } from './site/guidance.ts';
import { siteMap } from './site/site-map.ts';
import type { SiteInfo } from './site/types.ts';
import { AGENT_TOOLS, ASK_TOOLS, runTool, unknownToolError } from './tools/index.ts';
import type { AgentTool } from './tools/tool.ts';
import {
  AgentFailure,
  type AgentInput,
  type AgentMode,
  type AgentResult,
  ToolError,
  type VerificationEventData,
} from './types.ts';
import { validateChanges } from './validate.ts';
import { checksFor } from './verify/checks.ts';
import { describeFinding, VerificationRounds } from './verify/rounds.ts';
import type { VerifiedCheck } from './verify/verify-tree.ts';
import { verifyTree } from './verify/verify-tree.ts';
import { Workspace } from './workspace.ts';

/** Longest text of a tool input, output or model message kept in an event. */
const EVENT_TEXT_CHARS = 2_000;
/** Turns in a row without a tool call before the run is given up. */
const MAX_IDLE_TURNS = 3;
/** Most output tokens per model turn. */
const MAX_OUTPUT_TOKENS = 8_192;

/** The characters tokens, keys and their base64 forms are made of. */
const CREDENTIAL_CHAR = /[A-Za-z0-9_+/=-]/;

/**
 * Where to cut `text` to at most `max` characters: before a run of credential characters the cut
 * would split (back at most half of `max`). This process knows no secret; the worker redacts the
 * event, which it can do only for a secret that is whole, so none may be cut in half here.
 */
function cutAt(text: string, max: number): number {
  let at = max;
  while (at > max / 2 && CREDENTIAL_CHAR.test(text[at - 1]!) && CREDENTIAL_CHAR.test(text[at]!)) at--;
  return at > max / 2 ? at : max;
}

const truncate = (text: string, max = EVENT_TEXT_CHARS) => {
  if (text.length <= max) return text;
  const at = cutAt(text, max);
  return `${text.slice(0, at)}… [${text.length - at} more characters]`;
};

/** What the model is offered: the docs/agent.mdx tools, without execute — the loop runs them itself. */
const offered = (tools: readonly AgentTool[]) => ({
  toolSet: Object.fromEntries(
    tools.map((t) => [t.name, tool({ description: t.description, inputSchema: t.parameters })]),
  ),
  byName: new Map(tools.map((t) => [t.name, t])),
});
/** An ask run (docs/questions.mdx) is offered the reading tools and answer: no tool that writes. */
const OFFERED: Record<AgentMode, ReturnType<typeof offered>> = {
  edit: offered(AGENT_TOOLS),
  ask: offered(ASK_TOOLS),
};

/** The system prompt of the run's mode (an ask run reads no writing guidance). */
async function instructionsFor(
  input: AgentInput,
  site: SiteInfo,
  repositories: readonly string[],
  changes: NonNullable<AgentInput['changes']>,
): Promise<string> {
  if (input.mode === 'ask')
    return askSystemPrompt({ project: input.project, siteMap: siteMap(site), repositories, changes });
  return systemPrompt({
    project: input.project,
    siteMap: siteMap(site),
    guidance: await readGuidance(input.root, { docsDir: input.project.docsDir }),
    repositories,
    changes,
  });
}

/**
 * Runs the docs agent: one model turn at a time, the tools executed here
 * (so every call is guarded, bounded and recorded), validation after
 * `finish` with bounded repair rounds, and budgets checked between turns.
 */
export async function runAgent(agentInput: AgentInput, model: Model): Promise<AgentResult> {
  const input = { ...agentInput, emit: countedEmit(agentInput) };
  const started = Date.now();
  // The budgets are the job's: earlier runs of the job have spent part of them.
  const spent = input.spent ?? { steps: 0, tokens: 0, durationMs: 0 };
  const deadline = started + input.budgets.maxDurationMs - spent.durationMs;
  const workspace = await Workspace.open(input.root, input.project, input.limits);
  const repositories = input.codeReader ? (input.code?.repositories ?? []) : [];
  if (input.codeReader && repositories.length > 0)
    workspace.code = { reader: input.codeReader, repositories };
  const changes = input.changes ?? [];
  // Validation compares against the site as it was before the run.
  const site = await detectSite(input.root, input.project.docsDir);
  if (site.configFile) workspace.allowNavigationFiles(site.configFile, site.navigationFiles ?? []);
  const mode = input.mode ?? 'edit';
  const { toolSet, byName: toolsByName } = OFFERED[mode];
  const instructions = cachedInstructions(await instructionsFor(input, site, repositories, changes));
  const firstMessage = mode === 'ask' ? questionMessage : instructionMessage;
  const messages: ModelMessage[] = [
    { role: 'user', content: firstMessage(input.instruction, input.history) },
  ];
  const last = mode === 'ask' ? 'answer' : 'finish';
  const usage = { inputTokens: 0, outputTokens: 0 };
  let repairRounds = 0;
  let idleTurns = 0;
  const verification = new VerificationRounds();

  for (let step = 1; ; step++) {
    if (input.signal.aborted) throw new AgentFailure('cancelled', 'the run was cancelled');
    if (spent.steps + step > input.budgets.maxSteps) {
      throw new AgentFailure(
        'budget-exceeded',
        `the job used its ${input.budgets.maxSteps} model turns${spent.steps > 0 ? ` (${spent.steps} in earlier runs)` : ''} without finishing`,
      );
    }
    if (spent.tokens + usage.inputTokens + usage.outputTokens > input.budgets.maxTokens) {
      throw new AgentFailure(
        'budget-exceeded',
        `the job used more than its ${input.budgets.maxTokens} tokens${spent.tokens > 0 ? ` (${spent.tokens} in earlier runs)` : ''} without finishing`,
      );
    }
    if (Date.now() >= deadline) {
      throw new AgentFailure(
        'budget-exceeded',
        `the job used its ${Math.round(input.budgets.maxDurationMs / 60_000)} min of agent time without finishing`,
      );
    }

    const result = await withModelRetries(
      (signal) =>
        generateText({
          model,
          instructions,
          messages: withCachedConversation(messages),
          tools: toolSet,
          maxRetries: 0,
          maxOutputTokens: MAX_OUTPUT_TOKENS,
          abortSignal: signal,
        }),
      {
        signal: input.signal,
        deadline,
        onRetry: (attempt, waitMs, reason) =>
          void input.emit({ type: 'agent.retry', data: { attempt, waitMs, reason } }),
      },
    );
    const turn = { inputTokens: result.usage.inputTokens ?? 0, outputTokens: result.usage.outputTokens ?? 0 };
    usage.inputTokens += turn.inputTokens;
    usage.outputTokens += turn.outputTokens;
    await input.onUsage?.(turn);
    // The SDK answers invalid calls (unknown tool, bad input) with tool messages of its own;
    // the loop answers every call itself, with the tools' more helpful messages.
    messages.push(...result.response.messages.filter((m) => m.role === 'assistant'));
    if (result.text) await input.emit({ type: 'agent.text', data: { step, text: truncate(result.text) } });

    if (result.toolCalls.length === 0) {
      idleTurns++;
      if (idleTurns >= MAX_IDLE_TURNS) {
        throw new AgentFailure(
          mode === 'ask' ? 'no-answer' : 'agent-gave-up',
          `the model stopped calling tools without calling ${last}`,
        );
      }
      messages.push({
        role: 'user',
        content:
          mode === 'ask'
            ? 'Continue with the tools. When you can answer, call answer with the answer and its citations.'
            : 'Continue with the tools. When the edits are complete, call finish.',
      });
      continue;
    }
    idleTurns = 0;

    const results: ModelMessage = { role: 'tool', content: [] };
    const { maxToolCallsPerTurn } = input.budgets;
    for (const call of result.toolCalls.slice(0, maxToolCallsPerTurn)) {
      await input.emit({
        type: 'agent.tool_call',
        data: { step, tool: call.toolName, input: truncateInput(call.input) },
      });
      let output: string;
      let ok = true;
      const definition = toolsByName.get(call.toolName);
      try {
        if (!definition) throw unknownToolError(call.toolName, mode);
        output = await runTool(definition, call.input, {
          root: workspace.root,
          signal: input.signal,
          workspace,
          changes,
        });
      } catch (error) {
        if (!(error instanceof ToolError)) throw error;
        ok = false;
        output = `Error: ${error.message}`;
      }
      await input.emit({
        type: 'agent.tool_result',
        data: { step, tool: call.toolName, ok, output: truncate(output) },
      });
      results.content.push({
        type: 'tool-result',
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        output: ok ? { type: 'text', value: output } : { type: 'error-text', value: output },
      });
    }
    for (const call of result.toolCalls.slice(maxToolCallsPerTurn)) {
      // Every call needs an answer; the ones past the limit get it without being run or recorded.
      results.content.push({
        type: 'tool-result',
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        output: {
          type: 'error-text',
          value: `Error: not run. At most ${maxToolCallsPerTurn} tool calls are run per turn; make this call again in a later turn.`,
        },
      });
    }
    if (result.toolCalls.length > maxToolCallsPerTurn) {
      await input.emit({
        type: 'agent.tool_calls_skipped',
        data: { step, count: result.toolCalls.length - maxToolCallsPerTurn, limit: maxToolCallsPerTurn },
      });
    }
    messages.push(results);

    if (workspace.answered) {
      // An answer changes nothing, so nothing is validated or verified (docs/questions.mdx).
      await input.emit({ type: 'agent.usage', data: usage });
      return { title: '', summary: '', changedFiles: [], usage, checks: [], answer: workspace.answered };
    }
    if (!workspace.finished) continue;
    repairRounds++;
    const repair = await verifyFinished(input, workspace, site, verification, repairRounds);
    if (repair === null) {
      await input.emit({ type: 'agent.usage', data: usage });
      return {
        ...workspace.finished,
        changedFiles: workspace.changedFiles(),
        usage,
        checks: verification.report(),
      };
    }
    if (repairRounds > input.budgets.maxRepairRounds) {
      throw new AgentFailure(
        'validation-failed',
        `the changes still fail validation:\n${repair.join('\n')}`,
        {
          checks: verification.report(),
        },
      );
    }
    workspace.finished = null;
    // The findings are finish's answer: the run did not finish.
    const answer = results.content.findLast((c) => c.type === 'tool-result' && c.toolName === 'finish');
    const text = `Error: the run cannot finish yet. Fix these problems, then call finish again:\n${repair.map((p) => `- ${p}`).join('\n')}`;
    if (answer?.type === 'tool-result') answer.output = { type: 'error-text', value: text };
    else messages.push({ role: 'user', content: text });
  }
}

/**
 * Validation and verification after `finish` (SPEC §7, §19). Returns null when the run may
 * finish, else what the model must fix (or, once, consider): one line per problem.
 */
async function verifyFinished(
  input: AgentInput,
  workspace: Workspace,
  site: SiteInfo,
  verification: VerificationRounds,
  round: number,
): Promise<string[] | null> {
  const changedFiles = workspace.changedFiles();
  const problems = [
    ...workspace.verifyChanges(changedFiles),
    ...(await validateChanges(input.root, changedFiles, site)),
  ];
  await input.emit({
    type: 'agent.validation',
    data: { round, ok: problems.length === 0, errors: problems },
  });
  if (problems.length > 0) return problems;
  const checks = checksFor(input.verification);
  if (checks.length === 0) return null;
  const results = await verifyTree({
    root: workspace.root,
    docsDir: workspace.docsDir,
    changes: workspace.runChanges(),
    originals: workspace.originalTexts(),
    checks,
    signal: input.signal,
  });
  const verdict = verification.record(results);
  await input.emit({ type: 'agent.verification', data: verificationEvent(round, results) });
  if (verdict.blocking.length > 0) return verdict.blocking.map(describeFinding);
  if (verdict.advisory.length > 0)
    return verdict.advisory.map(
      (f) => `${describeFinding(f)} [${f.level}: fix it, or call finish again to keep it]`,
    );
  return null;
}

/** Findings recorded per check at most, so that a transcript event stays small. */
const EVENT_FINDINGS = 50;

function verificationEvent(round: number, results: VerifiedCheck[]): VerificationEventData {
  return {
    round,
    checks: results.map((c) => ({
      name: c.name,
      ...(c.skipped !== undefined && { skipped: c.skipped }),
      ...(c.counts && { counts: c.counts }),
      ...(c.notes && { notes: c.notes }),
      findings: c.findings.slice(0, EVENT_FINDINGS).map((f) => ({
        path: f.path,
        line: f.line,
        message: truncate(f.message, 500),
        level: f.level,
        rule: f.rule,
        preexisting: f.preexisting,
      })),
      ...(c.findings.length > EVENT_FINDINGS && { more: c.findings.length - EVENT_FINDINGS }),
    })),
  };
}

/** The run's emit, failing the run once it has recorded its budget of events. */
function countedEmit(input: AgentInput): AgentInput['emit'] {
  let count = 0;
  return (event) => {
    if (++count > input.budgets.maxEvents) {
      throw new AgentFailure(
        'budget-exceeded',
        `the run recorded ${input.budgets.maxEvents} transcript events without finishing`,
      );
    }
    return input.emit(event);
  };
}

/** Tool inputs can be large (whole pages) or oddly shaped; events keep a bounded copy. */
function truncateInput(input: unknown): unknown {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return boundedJson(input);
  const entries = Object.entries(input as Record<string, unknown>);
  const kept = entries
    .slice(0, 20)
    .map(([k, v]) => [
      k.slice(0, 100),
      typeof v === 'string' ? truncate(v) : v === null || typeof v !== 'object' ? v : boundedJson(v),
    ]);
  if (entries.length > kept.length) kept.push(['…', `${entries.length - kept.length} more fields`]);
  return Object.fromEntries(kept);
}

/** A value as it is, when its JSON is short; otherwise its JSON, cut. */
function boundedJson(value: unknown): unknown {
  let json: string;
  try {
    json = JSON.stringify(value) ?? 'undefined';
  } catch {
    return '[a value too deeply nested to record]';
  }
  return json.length <= EVENT_TEXT_CHARS ? value : truncate(json);
}
