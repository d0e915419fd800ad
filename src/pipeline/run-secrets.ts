/**
 * Every secret one run could meet, and the one redactor its outputs pass through (docs/security.mdx):
 * the transcript, `summary`, error messages, the stored diff, the commit message, the pull
 * request's title and body and the comments on source pull requests. A model can write any text
 * it has seen, so the run is scrubbed of every secret the process knows for the project, not
 * only of the credentials it pushes with; and a change that would commit one fails instead
 * (`filesAddingSecrets`).
 */
import { lstat, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { App } from '../app.ts';
import { serviceSecrets } from '../environment-secrets.ts';
import { git } from '../git/git.ts';
import type { ContextRepositoryAccess } from '../projects/context-repositories.ts';
import { confidentialValues, type ProjectSecrets } from '../projects/projects.ts';
import { createRedactor, createSecretFinder, type Redact } from '../redact.ts';

/** What collecting a run's secrets reads of the App. */
export type RunSecretsDeps = Pick<App, 'config' | 'contextRepositories' | 'webhooks'>;

/**
 * Secrets shorter than this are not looked for in a change's files: a short one would match
 * ordinary words and fail jobs for nothing (the redactor still removes it from text).
 */
const MIN_FOUND_LENGTH = 8;

/** The lines of a PEM key's body: a model copying a key may well change its line breaks. */
const pemLines = (secret: string) =>
  secret.includes('-----BEGIN')
    ? secret
        .split(/\r?\n/)
        .map((line) => line.trim())
        .filter((line) => line.length >= 16 && !line.startsWith('-----'))
    : [];

/** The secrets of one run, growing as it mints or opens more (a GitHub App token, a context repository's). */
export class RunSecrets {
  readonly #secrets = new Set<string>();
  #redact: Redact | null = null;
  #showing: Redact | null = null;
  #find: ((text: string) => string[]) | null = null;

  constructor(secrets: Iterable<string> = []) {
    this.add(...secrets);
  }

  add(...secrets: readonly (string | null | undefined)[]): void {
    for (const secret of secrets) {
      if (typeof secret !== 'string' || secret === '') continue;
      for (const value of [secret, ...pemLines(secret)]) this.#secrets.add(value);
      this.#redact = this.#showing = this.#find = null;
    }
  }

  /** Text with every secret (and any URL's userinfo) replaced by `[redacted]`. */
  readonly redact: Redact = (text) => {
    this.#redact ??= createRedactor(this.#secrets);
    return this.#redact(text);
  };

  /** Files as they are shown (a diff): the secrets go, example URLs' userinfo stays. */
  readonly redactShown: Redact = (text) => {
    this.#showing ??= createRedactor(this.#secrets, { userinfo: false });
    return this.#showing(text);
  };

  /** The secrets `text` holds. */
  secretsIn(text: string): string[] {
    this.#find ??= createSecretFinder(this.#secrets, MIN_FOUND_LENGTH);
    return this.#find(text);
  }
}

/**
 * The secrets a run of the project starts with: the project's credentials (its token, GitHub
 * App key, model keys) and its context repositories' tokens, the service keys of the server's
 * environment (model providers, the sealing key, Slack), the project's webhook endpoints'
 * `whsec_…` secrets and its hook secrets (its own repository's and each context repository's).
 */
export async function collectRunSecrets(
  app: RunSecretsDeps,
  run: { projectId: string; secrets: ProjectSecrets; contexts: readonly ContextRepositoryAccess[] },
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunSecrets> {
  const [endpoints, hooks] = await Promise.all([
    app.webhooks.endpointSecrets(run.projectId),
    app.contextRepositories.hookSecrets(run.projectId),
  ]);
  return new RunSecrets([
    ...confidentialValues(run.secrets),
    ...run.contexts.flatMap((c) => (c.secrets.token ? [c.secrets.token] : [])),
    ...serviceSecrets(env),
    ...(app.config.secretKey ? [app.config.secretKey] : []),
    ...endpoints,
    ...hooks,
  ]);
}

/**
 * The files among `files` (paths relative to the checkout) that would commit a secret of the run
 * they did not hold before (at the checkout's HEAD): what a run must not push. A page that already
 * held one (someone pasted a token) may still be edited; deleted paths and anything but regular
 * files are skipped.
 */
export async function filesAddingSecrets(
  checkout: { dir: string },
  files: readonly string[],
  secrets: RunSecrets,
  options: { env?: Record<string, string> | undefined; signal?: AbortSignal } = {},
): Promise<string[]> {
  const found: string[] = [];
  for (const file of files) {
    const full = path.join(checkout.dir, file);
    const info = await lstat(full).catch(() => null);
    if (!info?.isFile()) continue;
    const now = secrets.secretsIn(await readFile(full, 'utf8'));
    if (now.length === 0) continue;
    const before = await git(['cat-file', 'blob', `HEAD:${file}`], {
      cwd: checkout.dir,
      ...(options.env ? { env: options.env } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    }).then(
      (text) => new Set(secrets.secretsIn(text)),
      () => new Set<string>(),
    );
    if (now.some((secret) => !before.has(secret))) found.push(file);
  }
  return found;
}
