/**
 * Code reads of the agent's process, answered by its parent (docs/code-context.mdx): the child holds no git
 * credential and no mirror, so each `list`/`read`/`search` of its CodeReader goes to the parent
 * as a request with an id, and comes back as a reply with the same id. Replies are bounded by
 * the parent's reader (a listing of 1,000 paths, one file of `maxFileBytes`, 200 matching lines);
 * a failure comes back as a message the agent turns into a tool error.
 */
import type { CodeReader } from '../agent/code.ts';
import { ToolError } from '../agent/types.ts';

export type CodeOperation = 'list' | 'read' | 'search' | 'changed-paths' | 'path-diff';

export interface CodeRequest {
  type: 'code';
  id: number;
  op: CodeOperation;
  repository: string;
  /** The operation's arguments after the repository. */
  args: unknown[];
}

export type CodeReply =
  | { type: 'code-reply'; id: number; ok: true; value: unknown }
  /** `toolError`: the model's mistake, shown as it is; otherwise a failure of the reader. */
  | { type: 'code-reply'; id: number; ok: false; message: string; toolError: boolean };

/** Longest failure message sent back. */
const MAX_MESSAGE_CHARS = 500;

/**
 * The child's CodeReader: each call sends a request through `send` and waits for `deliver` to be
 * given the reply with its id. `close` fails the calls still waiting (the parent went away).
 */
export function codeReaderClient(send: (request: CodeRequest) => void): {
  reader: CodeReader;
  deliver: (reply: CodeReply) => void;
  close: (reason: string) => void;
} {
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 0;
  const call = <T>(op: CodeOperation, repository: string, ...args: unknown[]) =>
    new Promise<T>((resolve, reject) => {
      const id = ++nextId;
      waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      send({ type: 'code', id, op, repository, args });
    });
  return {
    reader: {
      list: (repository, path, options) => call('list', repository, path, options),
      read: (repository, path) => call('read', repository, path),
      search: (repository, query) => call('search', repository, query),
      changedPaths: (repository, base, head, max) => call('changed-paths', repository, base, head, max),
      pathDiff: (repository, base, head, path, maxChars) =>
        call('path-diff', repository, base, head, path, maxChars),
    },
    deliver(reply) {
      const pending = waiting.get(reply.id);
      if (!pending) return;
      waiting.delete(reply.id);
      if (reply.ok) pending.resolve(reply.value);
      else pending.reject(reply.toolError ? new ToolError(reply.message) : new Error(reply.message));
    },
    close(reason) {
      for (const pending of waiting.values()) pending.reject(new ToolError(reason));
      waiting.clear();
    },
  };
}

/** Answers one request of the child with `reader`; never rejects. */
export async function answerCodeRequest(
  reader: CodeReader | undefined,
  request: CodeRequest,
): Promise<CodeReply> {
  const { id } = request;
  try {
    if (!reader) throw new ToolError('This run has no code to read.');
    const [first, second] = Array.isArray(request.args) ? request.args : [];
    if (typeof request.repository !== 'string' || (typeof first !== 'string' && request.op !== 'search')) {
      throw new ToolError('Invalid code request.');
    }
    let value: unknown;
    if (request.op === 'list') {
      const options = (second ?? {}) as { glob?: unknown; exclude?: unknown; max?: unknown };
      value = await reader.list(request.repository, first as string, {
        ...(typeof options.glob === 'string' ? { glob: options.glob } : {}),
        ...(typeof options.exclude === 'string' ? { exclude: options.exclude } : {}),
        max: typeof options.max === 'number' ? options.max : 0,
      });
    } else if (request.op === 'read') {
      value = await reader.read(request.repository, first as string);
    } else if (request.op === 'search') {
      const query = (first ?? {}) as Record<string, unknown>;
      if (typeof query.pattern !== 'string' || typeof query.path !== 'string')
        throw new ToolError('Invalid search request.');
      value = await reader.search(request.repository, {
        pattern: query.pattern,
        ignoreCase: query.ignoreCase === true,
        path: query.path,
        ...(typeof query.glob === 'string' ? { glob: query.glob } : {}),
        ...(typeof query.exclude === 'string' ? { exclude: query.exclude } : {}),
        deadline: typeof query.deadline === 'number' ? query.deadline : Date.now() + 10_000,
      });
    } else if (request.op === 'changed-paths' || request.op === 'path-diff') {
      value = await answerChangeRequest(reader, request);
    } else {
      throw new ToolError('Unknown code request.');
    }
    return { type: 'code-reply', id, ok: true, value };
  } catch (error) {
    return {
      type: 'code-reply',
      id,
      ok: false,
      message: failureMessage(error),
      toolError: error instanceof ToolError,
    };
  }
}

/** What the model may see of a failure: a tool error as it is; anything else, its first line (git's are redacted). */
function failureMessage(error: unknown): string {
  if (error instanceof ToolError) return error.message.slice(0, MAX_MESSAGE_CHARS);
  const text = error instanceof Error ? error.message : String(error);
  const line = text.split('\n')[0] ?? '';
  return `the code could not be read (${line.replace(/\/\S*\/mirrors?\/\S*/g, '<mirror>').slice(0, MAX_MESSAGE_CHARS)})`;
}

/** A change's paths or one path's diff, computed by the parent from the repository. */
function answerChangeRequest(reader: CodeReader, request: CodeRequest): Promise<unknown> {
  const [base, head, third, fourth] = request.args;
  if (typeof base !== 'string' || typeof head !== 'string') throw new ToolError('Invalid change request.');
  if (request.op === 'changed-paths') {
    if (!reader.changedPaths || typeof third !== 'number') throw new ToolError('Invalid change request.');
    return reader.changedPaths(request.repository, base, head, third);
  }
  if (!reader.pathDiff || typeof third !== 'string' || typeof fourth !== 'number')
    throw new ToolError('Invalid change request.');
  return reader.pathDiff(request.repository, base, head, third, fourth);
}
