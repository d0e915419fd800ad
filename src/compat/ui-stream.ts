/**
 * A job's transcript as an AI SDK UI message stream (the format of Mintlify's v1 create,
 * read by `useChat` and by clients that print it line by line): one assistant message whose
 * steps are the runs, model text as text parts, tool calls as tool parts, and the outcome as
 * a closing text part (or an error part for a failed job).
 */
import type { UIMessageChunk } from 'ai';
import type { JobEvent } from '../jobs/events.ts';

type Data = Record<string, unknown>;

/** Turns events into chunks, keeping what pairs tool results with their calls. */
export class UiMessageStreamWriter {
  #stepOpen = false;
  #pending: string[] = [];
  #text = 0;

  start(jobId: string): UIMessageChunk[] {
    return [{ type: 'start', messageId: jobId }];
  }

  chunks(event: JobEvent): UIMessageChunk[] {
    const data = (event.data && typeof event.data === 'object' ? event.data : {}) as Data;
    switch (event.type) {
      case 'run.started':
        return [...this.#closeStep(), ...this.#openStep()];
      case 'agent.text':
        return this.#say(String(data.text ?? ''));
      case 'agent.tool_call': {
        const toolCallId = `call_${event.id}`;
        this.#pending.push(toolCallId);
        return [
          ...this.#openStep(),
          {
            type: 'tool-input-available',
            toolCallId,
            toolName: String(data.tool ?? 'tool'),
            input: data.input ?? {},
          },
        ];
      }
      case 'agent.tool_result': {
        const toolCallId = this.#pending.shift();
        if (!toolCallId) return [];
        return data.ok
          ? [{ type: 'tool-output-available', toolCallId, output: data.output ?? '' }]
          : [{ type: 'tool-output-error', toolCallId, errorText: String(data.output ?? 'the tool failed') }];
      }
      case 'job.completed': {
        const outcome = data.prLink
          ? `Pull request: ${data.prLink}`
          : data.branch
            ? `Branch: ${data.branch}`
            : 'No files needed changing.';
        return [...this.#say([data.summary, outcome].filter(Boolean).join('\n\n')), ...this.#closeStep()];
      }
      case 'job.failed': {
        const error = (data.error ?? {}) as Data;
        return [
          ...this.#closeStep(),
          { type: 'error', errorText: `${error.code ?? 'error'}: ${error.message ?? ''}` },
        ];
      }
      case 'job.archived':
        return [...this.#closeStep(), { type: 'abort', reason: 'the job was archived' }];
      default:
        return [];
    }
  }

  finish(): UIMessageChunk[] {
    return [...this.#closeStep(), { type: 'finish' }];
  }

  #say(text: string): UIMessageChunk[] {
    if (!text) return [];
    const id = `text_${++this.#text}`;
    return [
      ...this.#openStep(),
      { type: 'text-start', id },
      { type: 'text-delta', id, delta: text },
      { type: 'text-end', id },
    ];
  }

  #openStep(): UIMessageChunk[] {
    if (this.#stepOpen) return [];
    this.#stepOpen = true;
    return [{ type: 'start-step' }];
  }

  #closeStep(): UIMessageChunk[] {
    if (!this.#stepOpen) return [];
    this.#stepOpen = false;
    this.#pending = [];
    return [{ type: 'finish-step' }];
  }
}
