/**
 * A long-lived `git cat-file --batch-command`: one git process answers every object question of
 * a code reader (what an object is and how large, then its bytes), instead of a process per file.
 *
 * Bounded: the caller asks `info` first and `contents` only for an object it accepts the size of,
 * so at most one object of that size is held here at a time. A blob the partial clone lacks is
 * fetched by git itself from the promisor remote (credentials come through `env`, never argv).
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { GitError, spawnGit } from './git.ts';

export type ObjectType = 'blob' | 'tree' | 'commit' | 'tag';

export interface ObjectInfo {
  oid: string;
  type: ObjectType;
  size: number;
}

interface Pending {
  contents: boolean;
  resolve: (value: { info: ObjectInfo; bytes?: Buffer } | null) => void;
  reject: (error: Error) => void;
}

export interface CatFileOptions {
  /** The repository (a bare mirror, or a checkout whose git directory it finds). */
  cwd: string;
  /** Credentials for lazily fetched blobs (see credentials.ts). */
  env?: Record<string, string>;
  redact?: (text: string) => string;
}

export class CatFileBatch {
  readonly #options: CatFileOptions;
  #child: ChildProcessWithoutNullStreams | undefined;
  #queue: Pending[] = [];
  #chunks: Buffer[] = [];
  #buffered = 0;
  #stderr = '';
  #failed: Error | undefined;

  constructor(options: CatFileOptions) {
    this.#options = options;
  }

  /** The object's type and size, or null when it does not exist (a path not in the tree). */
  async info(object: string): Promise<ObjectInfo | null> {
    const answer = await this.#ask(`info ${checkName(object)}`, false);
    return answer?.info ?? null;
  }

  /** The object's bytes (ask `info` first: they are held in memory whole). */
  async contents(object: string): Promise<{ info: ObjectInfo; bytes: Buffer } | null> {
    const answer = await this.#ask(`contents ${checkName(object)}`, true);
    return answer ? { info: answer.info, bytes: answer.bytes! } : null;
  }

  /**
   * Starts the git process now rather than at the first question, e.g. while the objects are
   * still being fetched (git looks for packs that arrived after it started when it misses one).
   */
  start(): void {
    if (!this.#failed) this.#start();
  }

  /** Ends the git process (idempotent); pending questions fail. */
  close(): void {
    const child = this.#child;
    this.#child = undefined;
    if (!child) return;
    child.stdin.end();
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
    this.#fail(new Error('the object reader was closed'));
  }

  #ask(command: string, contents: boolean): Promise<{ info: ObjectInfo; bytes?: Buffer } | null> {
    if (this.#failed) return Promise.reject(this.#failed);
    const child = this.#start();
    return new Promise((resolve, reject) => {
      this.#queue.push({ contents, resolve, reject });
      child.stdin.write(`${command}\n`);
    });
  }

  #start(): ChildProcessWithoutNullStreams {
    if (this.#child) return this.#child;
    const child = spawnGit(['cat-file', '--batch-command'], this.#options);
    this.#child = child;
    child.stdout.on('data', (chunk: Buffer) => {
      this.#chunks.push(chunk);
      this.#buffered += chunk.length;
      this.#drain();
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-4_000);
    });
    child.stdin.on('error', () => {});
    child.on('error', (error) => this.#fail(error));
    child.on('close', (code) => {
      if (this.#child === child) this.#child = undefined;
      const redact = this.#options.redact ?? ((text: string) => text);
      const reason = this.#stderr.trim().split('\n').at(-1) ?? '';
      this.#fail(
        new GitError(
          redact(`git cat-file failed: ${reason || `exit code ${code}`}`),
          code,
          redact(this.#stderr),
        ),
      );
    });
    return child;
  }

  /** Answers the oldest questions whose whole answer has arrived. */
  #drain(): void {
    for (;;) {
      const pending = this.#queue[0];
      if (!pending || this.#buffered === 0) return;
      const data = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks);
      this.#chunks = [data];
      const newline = data.indexOf(10);
      if (newline === -1) return;
      const header = data.subarray(0, newline).toString('utf8');
      if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
        this.#consume(newline + 1);
        this.#queue.shift();
        pending.resolve(null);
        continue;
      }
      const [oid = '', type = '', size = ''] = header.split(' ');
      const info: ObjectInfo = { oid, type: type as ObjectType, size: Number(size) };
      if (!pending.contents) {
        this.#consume(newline + 1);
        this.#queue.shift();
        pending.resolve({ info });
        continue;
      }
      const end = newline + 1 + info.size;
      if (data.length < end + 1) return;
      const bytes = Buffer.from(data.subarray(newline + 1, end));
      this.#consume(end + 1);
      this.#queue.shift();
      pending.resolve({ info, bytes });
    }
  }

  #consume(bytes: number): void {
    const rest = this.#chunks[0]!.subarray(bytes);
    this.#chunks = rest.length > 0 ? [rest] : [];
    this.#buffered = rest.length;
  }

  #fail(error: Error): void {
    this.#failed ??= error;
    const queue = this.#queue;
    this.#queue = [];
    this.#chunks = [];
    this.#buffered = 0;
    for (const pending of queue) pending.reject(error);
  }
}

/** An object name for the batch protocol: one line, so a path can never inject a command. */
function checkName(object: string): string {
  if (/[\n\r\0]/.test(object)) throw new Error('an object name cannot contain line breaks');
  return object;
}
