/**
 * A real git smart-HTTP server on loopback: `git http-backend` run as a CGI program behind
 * `node:http`, guarded by HTTP Basic authentication the way code hosts do it. Clone, fetch
 * and push go through git's own wire protocol, so tests exercise exactly what a run does
 * against GitHub, GitLab or Gitea.
 *
 *   const server = await startGitHttpServer({ tokens: { 'tok-write': 'write', 'tok-read': 'read' } });
 *   const url = await server.createRepository('docs', { 'index.mdx': '# Hello\n' });
 *   // git clone with `Authorization: Basic base64(user:tok-write)` in the environment…
 *   server.requests // every request: method, path and headers, to check where the token went
 *
 * A request without valid credentials gets 401 with `WWW-Authenticate: Basic`; a push
 * (`git-receive-pack`) with a read-only token gets 403, as on the real hosts.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export type TokenAccess = 'read' | 'write';

export interface GitHttpServerOptions {
  /** Accepted tokens (the Basic password) and what each may do. */
  tokens: Record<string, TokenAccess>;
  /** When set, the Basic user name must be this (GitHub's `x-access-token`, GitLab's `oauth2`); any otherwise, like Gitea. */
  username?: string;
}

export interface GitHttpRequest {
  method: string;
  /** Path and query, as received. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The status the server answered with (set once it answers). */
  status?: number;
}

export interface HoldOptions {
  match?: (request: GitHttpRequest) => boolean;
  onHeld?: (request: GitHttpRequest) => void;
}

interface Holding extends HoldOptions {
  waiters: (() => void)[];
}

export interface GitHttpServer {
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  /** The directory holding the served bare repositories (GIT_PROJECT_ROOT). */
  root: string;
  /** Every request received, in order. */
  requests: GitHttpRequest[];
  /**
   * Creates the bare repository `<name>.git` with one commit on `branch` (default `main`) holding
   * `files` (a map of relative path → content, or a directory to copy); returns its clone URL.
   */
  createRepository(
    name: string,
    files: Record<string, string> | string,
    options?: { branch?: string },
  ): Promise<string>;
  /** Runs git in the served bare repository `<name>.git` (to inspect what was pushed); returns stdout. */
  git(name: string, ...args: string[]): string;
  /**
   * Holds the requests that arrive from now on and `match` (default: all) until the returned
   * function is called, e.g. to abort a clone midway. `onHeld` sees each held request.
   */
  hold(options?: HoldOptions): () => void;
  close(): Promise<void>;
}

const SAFE_ENV = ['PATH', 'HOME', 'TMPDIR', 'LANG'];

function runGit(args: string[], cwd: string): string {
  return execFileSync('git', args, {
    encoding: 'utf8',
    cwd,
    stdio: 'pipe',
    env: {
      ...process.env,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'Fixture',
      GIT_AUTHOR_EMAIL: 'fixture@example.com',
      GIT_COMMITTER_NAME: 'Fixture',
      GIT_COMMITTER_EMAIL: 'fixture@example.com',
    },
  });
}

function credentials(headers: IncomingHttpHeaders): { user: string; password: string } | null {
  const header = headers.authorization;
  const match = header === undefined ? null : /^Basic ([A-Za-z0-9+/]+=*)$/.exec(header);
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Splits CGI output into its header block and the start of the body. */
function splitCgiHead(buffer: Buffer): { head: string; body: Buffer } | null {
  for (const separator of ['\r\n\r\n', '\n\n']) {
    const at = buffer.indexOf(separator);
    if (at >= 0)
      return {
        head: buffer.subarray(0, at).toString('latin1'),
        body: buffer.subarray(at + separator.length),
      };
  }
  return null;
}

function runBackend(root: string, request: IncomingMessage, response: ServerResponse, user: string): void {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const env: Record<string, string> = {
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: '1',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GATEWAY_INTERFACE: 'CGI/1.1',
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.slice(1),
    REQUEST_METHOD: request.method ?? 'GET',
    CONTENT_TYPE: request.headers['content-type'] ?? '',
    REMOTE_USER: user,
    REMOTE_ADDR: request.socket.remoteAddress ?? '127.0.0.1',
  };
  for (const name of SAFE_ENV) if (process.env[name] !== undefined) env[name] = process.env[name];
  if (request.headers['content-length'] !== undefined) env.CONTENT_LENGTH = request.headers['content-length'];
  if (request.headers['content-encoding'] !== undefined)
    env.HTTP_CONTENT_ENCODING = request.headers['content-encoding'];
  const protocol = request.headers['git-protocol'];
  if (typeof protocol === 'string') {
    env.HTTP_GIT_PROTOCOL = protocol;
    env.GIT_PROTOCOL = protocol;
  }

  const child = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  request.pipe(child.stdin);
  child.stdin.on('error', () => {});
  let pending: Buffer | null = Buffer.alloc(0);
  child.stdout.on('data', (chunk: Buffer) => {
    if (pending === null) {
      response.write(chunk);
      return;
    }
    pending = Buffer.concat([pending, chunk]);
    const split = splitCgiHead(pending);
    if (!split) return;
    pending = null;
    let status = 200;
    for (const line of split.head.split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
      else response.appendHeader(name, value);
    }
    response.statusCode = status;
    if (split.body.length > 0) response.write(split.body);
  });
  child.stderr.resume();
  child.on('error', () => {
    if (!response.headersSent) response.statusCode = 500;
    response.end();
  });
  child.on('close', () => {
    if (pending !== null && !response.headersSent) response.statusCode = 502;
    response.end();
  });
  response.on('close', () => {
    if (child.exitCode === null) child.kill();
  });
}

export async function startGitHttpServer(options: GitHttpServerOptions): Promise<GitHttpServer> {
  const root = mkdtempSync(path.join(tmpdir(), 'docwright-git-http-'));
  const requests: GitHttpRequest[] = [];
  let holding: Holding | null = null;

  const answer = (request: IncomingMessage, response: ServerResponse, record: GitHttpRequest) => {
    // A held request whose client gave up in the meantime (an aborted clone).
    if (request.socket.destroyed) return;
    const reject = (status: number, message: string, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'text/plain', ...headers });
      response.end(`${message}\n`);
    };
    const given = credentials(request.headers);
    const access = given === null ? undefined : options.tokens[given.password];
    if (
      given === null ||
      access === undefined ||
      (options.username !== undefined && given.user !== options.username)
    ) {
      reject(401, 'Authentication required', { 'www-authenticate': 'Basic realm="git"' });
      return;
    }
    const pushing =
      record.url.includes('service=git-receive-pack') || record.url.includes('/git-receive-pack');
    if (pushing && access !== 'write') {
      reject(403, 'Permission denied: this token may not push');
      return;
    }
    runBackend(root, request, response, given.user);
  };

  const server = createServer((request, response) => {
    const record: GitHttpRequest = {
      method: request.method ?? 'GET',
      url: request.url ?? '/',
      headers: { ...request.headers },
    };
    requests.push(record);
    response.on('finish', () => {
      record.status = response.statusCode;
    });
    if (holding && (holding.match?.(record) ?? true)) {
      holding.onHeld?.(record);
      holding.waiters.push(() => answer(request, response, record));
      return;
    }
    answer(request, response, record);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;

  return {
    baseUrl,
    root,
    requests,
    async createRepository(name, files, repoOptions = {}) {
      const branch = repoOptions.branch ?? 'main';
      const work = mkdtempSync(path.join(tmpdir(), 'docwright-git-seed-'));
      try {
        runGit(['init', '-q', '-b', branch], work);
        if (typeof files === 'string') {
          if (!statSync(files).isDirectory()) throw new Error(`${files} is not a directory`);
          cpSync(files, work, { recursive: true, filter: (source) => path.basename(source) !== '.git' });
        } else {
          for (const [file, content] of Object.entries(files)) {
            mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
            writeFileSync(path.join(work, file), content);
          }
        }
        runGit(['add', '-A'], work);
        runGit(['commit', '-q', '-m', 'Initial commit'], work);
        const bare = path.join(root, `${name}.git`);
        runGit(['clone', '-q', '--bare', work, bare], root);
        runGit(['config', 'http.receivepack', 'true'], bare);
        runGit(['config', 'uploadpack.allowFilter', 'true'], bare);
        runGit(['config', 'uploadpack.allowAnySHA1InWant', 'true'], bare);
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
      return `${baseUrl}/${name}.git`;
    },
    git(name, ...args) {
      return runGit(args, path.join(root, `${name}.git`));
    },
    hold(holdOptions = {}) {
      const state: Holding = { ...holdOptions, waiters: [] };
      holding = state;
      return () => {
        if (holding === state) holding = null;
        for (const release of state.waiters.splice(0)) release();
      };
    },
    async close() {
      if (holding) for (const release of holding.waiters.splice(0)) release();
      holding = null;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
