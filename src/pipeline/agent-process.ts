/**
 * Runs the agent of one run in a child process of its own (src/pipeline/agent-process-main.ts).
 *
 * The agent does what a model says, on content anyone can write: matching, walking and
 * validating can be made expensive, and its memory grows with what the model sends. A child
 * process (rather than a worker thread) keeps all of that off the server: its heap is capped
 * by V8 (`--max-old-space-size`) and its resident memory by a watchdog, a process that stops
 * answering its heartbeat is killed, and cancellation, a lost lease or the time limit stop it
 * with SIGKILL, whatever it is doing. The server keeps the database, git and the credentials;
 * the child gets only the run's input and the model's key.
 */
import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ResolveModelOptions } from '../agent/model-resolution.ts';
import { type AgentEvent, AgentFailure, type AgentInput, type AgentResult } from '../agent/types.ts';
import { type AgentProcessLimits, DEFAULT_AGENT_PROCESS_LIMITS } from '../config.ts';
import { answerCodeRequest, type CodeReply, type CodeRequest } from './code-ipc.ts';

/** The model as the child resolves it: an id and settings that cross IPC (no functions). */
export interface ModelSpec {
  id: string;
  options: Omit<ResolveModelOptions, 'fetch'>;
}

/** What the agent needs, without the parts that cannot cross a process boundary. */
export type SerializableAgentInput = Omit<AgentInput, 'signal' | 'emit' | 'onUsage' | 'codeReader'>;

export type ParentMessage =
  | { type: 'start'; input: SerializableAgentInput; model: ModelSpec }
  | { type: 'ack'; seq: number }
  | CodeReply;

export type ChildMessage =
  | { type: 'ready' }
  | CodeRequest
  | { type: 'alive'; rss: number }
  | { type: 'event'; seq: number; event: AgentEvent }
  | { type: 'usage'; seq: number; usage: { inputTokens: number; outputTokens: number } }
  | { type: 'result'; result: AgentResult }
  | { type: 'failure'; code: AgentFailure['code']; message: string; checks?: AgentFailure['checks'] }
  | { type: 'error'; message: string };

/** Resident memory allowed over the heap cap by default: code, buffers, the young generation. */
const RSS_HEADROOM = 1.5;
/** Most of the child's stderr kept for diagnosis (a crash report or an out-of-memory message). */
const STDERR_TAIL_BYTES = 16 * 1024;
const WATCHDOG_MS = 500;

/** Environment variables a run's process keeps: what node and fetch need, never a secret. */
const INHERITED_ENV =
  /^(PATH|HOME|TMPDIR|TMP|TEMP|LANG|LANGUAGE|LC_[A-Z_]+|TZ|NODE_EXTRA_CA_CERTS|NODE_USE_ENV_PROXY|SSL_CERT_FILE|SSL_CERT_DIR|https?_proxy|HTTPS?_PROXY|no_proxy|NO_PROXY|NODE_COMPILE_CACHE)$/;

const entry = fileURLToPath(
  new URL(`./agent-process-main${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url),
);

/** Node flags of ours that the child must not inherit (it gets its own heap cap; no debugger port). */
const OWN_FLAGS = /^--(max-old-space-size|max-semi-space-size|inspect|inspect-brk|inspect-port|debug)(=|$)/;

/**
 * One run's agent process. Spawn it early (it loads the agent while the checkout is made),
 * then `run` once; `kill` always, when the run is over.
 */
export class AgentProcess {
  readonly #child: ChildProcess;
  readonly #limits: AgentProcessLimits;
  readonly #ready: Promise<void>;
  #stderr = '';
  #exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  #killedFor: 'memory' | 'unresponsive' | 'aborted' | undefined;
  readonly #exit: Promise<void>;

  private constructor(limits: AgentProcessLimits) {
    this.#limits = limits;
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => INHERITED_ENV.test(name)));
    this.#child = fork(entry, [], {
      execArgv: [
        ...process.execArgv.filter((flag) => !OWN_FLAGS.test(flag)),
        `--max-old-space-size=${limits.memoryMb}`,
      ],
      env,
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    this.#child.stderr!.setEncoding('utf8');
    this.#child.stderr!.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_TAIL_BYTES);
    });
    // A child that exits before reading a message makes `send` fail asynchronously.
    this.#child.on('error', () => {});
    // 'close' comes after the IPC channel is drained too: no message of the child is still on its way.
    this.#exit = new Promise((resolve) => {
      this.#child.once('close', (code, signal) => {
        this.#exited = { code, signal };
        resolve();
      });
    });
    this.#ready = new Promise((resolve, reject) => {
      const onMessage = (message: ChildMessage) => {
        if (message.type !== 'ready') return;
        this.#child.off('message', onMessage);
        resolve();
      };
      this.#child.on('message', onMessage);
      void this.#exit.then(() => reject(this.#failure()));
    });
    this.#ready.catch(() => {});
  }

  static spawn(limits: AgentProcessLimits = DEFAULT_AGENT_PROCESS_LIMITS): AgentProcess {
    return new AgentProcess(limits);
  }

  /** The process id (tests use it to look for leftovers). */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Whether the process is still there (a spare that died while it waited is not). */
  get alive(): boolean {
    return this.#exited === undefined && this.#killedFor === undefined;
  }

  /**
   * Whether the process keeps the server's event loop alive. A spare waiting for a run does not
   * (its IPC channel and stderr pipe are unreferenced); a process running one does.
   */
  setKeepsServerAlive(keep: boolean): void {
    const handles = [
      this.#child,
      this.#child.channel,
      this.#child.stderr as { ref?(): void; unref?(): void } | null,
    ];
    for (const handle of handles) {
      if (keep) handle?.ref?.();
      else handle?.unref?.();
    }
  }

  /** Stops the process at once (idempotent). */
  kill(): void {
    if (this.#exited === undefined) this.#child.kill('SIGKILL');
  }

  /**
   * Runs the agent and resolves with its result. Rejects with an AgentFailure for a failure of
   * the run (the model's, a budget, the memory cap, an unresponsive process), or with an Error
   * when the process broke for another reason. Events go to `input.emit` and each turn's tokens
   * to `input.onUsage`, one at a time: the child waits for each to be recorded before it goes on.
   * The child's code reads (`input.code`) are answered here with `input.codeReader` (code-ipc.ts).
   */
  async run(input: AgentInput, model: ModelSpec): Promise<AgentResult> {
    const { signal, emit, onUsage, codeReader, ...serializable } = input;
    if (!codeReader) delete serializable.code;
    const child = this.#child;
    let lastHeard = Date.now();
    let settled: ChildMessage | undefined;
    let emitError: unknown;
    const residentMb = this.#limits.residentMb ?? this.#limits.memoryMb * RSS_HEADROOM;

    const onAbort = () => this.#stop('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
    const watchdog = setInterval(() => {
      if (Date.now() - lastHeard > this.#limits.unresponsiveMs) this.#stop('unresponsive');
    }, WATCHDOG_MS);
    const onMessage = (message: ChildMessage) => {
      lastHeard = Date.now();
      switch (message.type) {
        case 'alive':
          if (message.rss > residentMb * 1024 * 1024) this.#stop('memory');
          return;
        case 'event':
        case 'usage':
          void Promise.resolve(
            message.type === 'event' ? emit(message.event) : onUsage?.(message.usage),
          ).then(
            () => this.#send({ type: 'ack', seq: message.seq }),
            (error: unknown) => {
              emitError = error;
              this.#stop('aborted');
            },
          );
          return;
        case 'code':
          void answerCodeRequest(codeReader, message).then((reply) => this.#send(reply));
          return;
        case 'result':
        case 'failure':
        case 'error':
          settled = message;
          return;
      }
    };
    child.on('message', onMessage);
    try {
      if (signal.aborted) this.#stop('aborted');
      await this.#ready;
      this.#send({ type: 'start', input: serializable, model });
      await this.#exit;
    } finally {
      clearInterval(watchdog);
      signal.removeEventListener('abort', onAbort);
      child.off('message', onMessage);
    }
    if (emitError !== undefined) throw emitError;
    if (settled?.type === 'result') return settled.result;
    if (settled?.type === 'failure')
      throw new AgentFailure(settled.code, settled.message, { checks: settled.checks });
    if (settled?.type === 'error') throw new Error(`the agent failed: ${settled.message}`);
    throw this.#failure();
  }

  #send(message: ParentMessage): void {
    if (this.#child.connected) this.#child.send(message);
  }

  #stop(reason: 'memory' | 'unresponsive' | 'aborted'): void {
    this.#killedFor ??= reason;
    this.kill();
  }

  /** Why the process ended without a result. */
  #failure(): Error {
    const { memoryMb, unresponsiveMs } = this.#limits;
    if (this.#killedFor === 'memory' || /heap out of memory|Reached heap limit/.test(this.#stderr)) {
      return new AgentFailure(
        'memory-limit-exceeded',
        `the run used more than its ${memoryMb} MiB of memory and was stopped`,
      );
    }
    if (this.#killedFor === 'unresponsive') {
      return new AgentFailure(
        'tool-time-limit-exceeded',
        `the agent did not respond for ${Math.round(unresponsiveMs / 1000)} s (a tool call or validation ran too long) and was stopped`,
      );
    }
    if (this.#killedFor === 'aborted') return new AgentFailure('cancelled', 'the run was stopped');
    const how = this.#exited?.signal ? `signal ${this.#exited.signal}` : `exit code ${this.#exited?.code}`;
    const tail = this.#stderr.trim().split('\n').slice(-5).join('\n');
    return new Error(`the agent process ended unexpectedly (${how})${tail ? `: ${tail}` : ''}`);
  }
}
