/**
 * The child process one agent run executes in (forked by src/pipeline/agent-process.ts).
 *
 * It receives the run's input and model settings over IPC, runs the agent, and sends back
 * every transcript event (waiting for the parent to have recorded it), a heartbeat with its
 * memory use, and finally the result or the failure. It holds no database connection, no git
 * credential and no server socket: whatever the model makes it do, the server's event loop and
 * memory are not the ones that suffer, and the parent can stop it outright with SIGKILL.
 */
import { enableCompileCache } from 'node:module';
import type { AgentEvent } from '../agent/types.ts';
import type { ChildMessage, ParentMessage } from './agent-process.ts';
import { codeReaderClient } from './code-ipc.ts';

// Cached bytecode makes the next run's process start in about half the time.
enableCompileCache?.();

const HEARTBEAT_MS = 500;

const send = (message: ChildMessage) =>
  new Promise<void>((resolve) => {
    if (!process.connected) return resolve();
    process.send!(message, undefined, undefined, () => resolve());
  });

const { runAgent } = await import('../agent/loop.ts');
const { resolveModel } = await import('../agent/model-resolution.ts');
const { AgentFailure } = await import('../agent/types.ts');

const heartbeat = setInterval(
  () => void send({ type: 'alive', rss: process.memoryUsage.rss() }),
  HEARTBEAT_MS,
);
const acks = new Map<number, () => void>();
let nextSeq = 0;

/** Sends a message the parent acknowledges once it has recorded it, and waits for that. */
const recorded = async (message: (seq: number) => ChildMessage) => {
  const seq = ++nextSeq;
  const acked = new Promise<void>((resolve) => acks.set(seq, resolve));
  await send(message(seq));
  await acked;
};
const emit = (event: AgentEvent) => recorded((seq) => ({ type: 'event', seq, event }));
const onUsage = (usage: { inputTokens: number; outputTokens: number }) =>
  recorded((seq) => ({ type: 'usage', seq, usage }));

async function run(message: Extract<ParentMessage, { type: 'start' }>): Promise<ChildMessage> {
  try {
    const model = resolveModel(message.model.id, message.model.options);
    // Code is read by the parent, which holds the mirrors and the credentials.
    const codeReader = message.input.code ? code.reader : undefined;
    const result = await runAgent(
      {
        ...message.input,
        signal: new AbortController().signal,
        emit,
        onUsage,
        ...(codeReader ? { codeReader } : {}),
      },
      model,
    );
    return { type: 'result', result };
  } catch (error) {
    if (error instanceof AgentFailure)
      return { type: 'failure', code: error.code, message: error.message, checks: error.checks };
    const text =
      error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error);
    return { type: 'error', message: text.slice(0, 8_000) };
  }
}

const code = codeReaderClient((request) => void send(request));

process.on('message', (message: ParentMessage) => {
  if (message.type === 'code-reply') {
    code.deliver(message);
  } else if (message.type === 'ack') {
    acks.get(message.seq)?.();
    acks.delete(message.seq);
  } else if (message.type === 'start') {
    void run(message).then(async (outcome) => {
      clearInterval(heartbeat);
      await send(outcome);
      process.exit(0);
    });
  }
});
// The parent going away ends the run: nothing would record it.
process.on('disconnect', () => process.exit(0));
await send({ type: 'ready' });
// While the parent makes the checkout: what validation needs at the end of the run.
void import('../agent/validate.ts').then(({ preloadMdxCompiler }) => preloadMdxCompiler()).catch(() => {});
