import type { FieldError } from '../errors.ts';
import { PROJECT_DEFAULTS, type ProjectView } from '../projects/projects.ts';
import { HOSTS } from '../projects/repository.ts';
import { type Html, html, type Renderable } from './html.ts';
import { csrfField, fieldError, formErrors, invalid } from './layout.ts';
import type { SignedIn } from './session.ts';

/**
 * The project form (docs/configuration.mdx, every field): used by `/projects/new` and the settings page. The
 * form's values are strings; `projectInput` turns them into the project service's input.
 * Secrets are write-only: a blank field keeps the stored value, a checkbox removes it.
 */
export type ProjectForm = Record<string, string | undefined>;

const SECRETS = [
  {
    name: 'token',
    label: 'Access token',
    hint: 'A personal or project access token that may push branches and open pull requests.',
  },
  {
    name: 'githubAppId',
    label: 'GitHub App ID',
    hint: 'Instead of a token on GitHub: the App’s numeric id.',
  },
  {
    name: 'githubPrivateKey',
    label: 'GitHub App private key',
    hint: 'The App’s PEM private key.',
    multiline: true,
  },
  {
    name: 'githubInstallationId',
    label: 'GitHub App installation ID',
    hint: 'The installation on this repository’s owner.',
  },
  {
    name: 'anthropicApiKey',
    label: 'Anthropic API key',
    hint: 'Overrides ANTHROPIC_API_KEY for this project.',
  },
  { name: 'openaiApiKey', label: 'OpenAI API key', hint: 'Overrides OPENAI_API_KEY for this project.' },
  {
    name: 'openaiCompatibleApiKey',
    label: 'OpenAI-compatible API key',
    hint: 'For the OpenAI-compatible base URL above, when it needs one.',
  },
] as const;

/** Each field's label, on the form and in the list of its errors. */
const LABELS: Record<string, string> = {
  name: 'Name',
  repository: 'Repository',
  host: 'Code host',
  apiUrl: 'API URL',
  ref: 'Base branch',
  docsDir: 'Docs directory',
  writable: 'Writable files',
  model: 'Model',
  allowedModels: 'Allowed models',
  openaiCompatibleBaseUrl: 'OpenAI-compatible base URL',
  draft: 'Open pull requests as drafts',
  commentOnSource: 'Comment on source pull requests',
  labels: 'Labels',
  branchPrefix: 'Branch prefix',
  rateLimit: 'Jobs per hour',
  monthlyTokenBudget: 'Monthly token budget',
  authorName: 'Commit author name',
  authorEmail: 'Commit author email',
  checks: 'Check commands',
  ...Object.fromEntries(SECRETS.map((secret) => [secret.name, secret.label])),
};

const lines = (text: string | undefined) =>
  (text ?? '')
    .split(/\r?\n|,/)
    .map((line) => line.trim())
    .filter(Boolean);

/** One command a line: a command may hold commas. */
const commandLines = (text: string | undefined) =>
  (text ?? '')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);

/** The project service's input from the submitted form; `update` also clears emptied optional fields. */
export function projectInput(form: ProjectForm, mode: 'create' | 'update'): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  const text = (name: string) => (form[name] ?? '').trim();
  const optional = (name: string, key = name) => {
    const value = text(name);
    if (value !== '') input[key] = value;
    else if (mode === 'update') input[key] = null;
  };
  const withDefault = (name: string) => {
    if (text(name) !== '') input[name] = text(name);
  };
  input.name = text('name');
  input.repository = text('repository');
  if (text('host') !== '') input.host = text('host');
  optional('apiUrl');
  withDefault('ref');
  withDefault('docsDir');
  const writable = lines(form.writable);
  if (writable.length > 0) input.writable = writable;
  else if (mode === 'update') input.writable = PROJECT_DEFAULTS.writable;
  optional('model');
  input.allowedModels = lines(form.allowedModels);
  optional('openaiCompatibleBaseUrl');
  input.draft = form.draft === 'on';
  input.commentOnSource = form.commentOnSource === 'on';
  input.labels = lines(form.labels);
  if (form.branchPrefix !== undefined) input.branchPrefix = text('branchPrefix');
  withDefault('authorName');
  withDefault('authorEmail');
  const rateLimit = text('rateLimit');
  if (rateLimit !== '') input.rateLimit = /^\d+$/.test(rateLimit) ? Number(rateLimit) : rateLimit;
  else if (mode === 'update') input.rateLimit = null;
  const budget = text('monthlyTokenBudget');
  if (budget !== '') input.monthlyTokenBudget = /^\d+$/.test(budget) ? Number(budget) : budget;
  else if (mode === 'update') input.monthlyTokenBudget = null;
  if (form.checks !== undefined || mode === 'update') input.checks = commandLines(form.checks);
  for (const { name } of SECRETS) {
    const value = form[name] ?? '';
    if (form[`remove_${name}`] === 'on') input[name] = null;
    else if (value.trim() !== '') input[name] = value.trim();
  }
  return input;
}

/** The form's values for an existing project (never its secrets). */
export function projectFormValues(project: ProjectView): ProjectForm {
  const s = project.settings;
  return {
    name: project.name,
    repository: project.repository,
    host: project.host,
    apiUrl: project.apiUrl ?? '',
    ref: project.ref,
    docsDir: s.docsDir,
    writable: s.writable.join('\n'),
    model: project.model ?? '',
    allowedModels: s.allowedModels.join('\n'),
    openaiCompatibleBaseUrl: s.openaiCompatibleBaseUrl ?? '',
    draft: s.draft ? 'on' : '',
    commentOnSource: s.commentOnSource ? 'on' : '',
    labels: s.labels.join(', '),
    branchPrefix: s.branchPrefix,
    authorName: s.authorName,
    authorEmail: s.authorEmail,
    rateLimit: project.rateLimit === null ? '' : String(project.rateLimit),
    monthlyTokenBudget: s.monthlyTokenBudget === null ? '' : String(s.monthlyTokenBudget),
    checks: project.checks.join('\n'),
  };
}

/** Which secrets a project has, by form field name. */
function secretsSet(project: ProjectView | undefined): Record<string, boolean> {
  const c = project?.credentials;
  return {
    token: c?.token ?? false,
    githubAppId: c?.githubApp ?? false,
    githubPrivateKey: c?.githubApp ?? false,
    githubInstallationId: c?.githubApp ?? false,
    anthropicApiKey: c?.modelKeys.includes('anthropic') ?? false,
    openaiApiKey: c?.modelKeys.includes('openai') ?? false,
    openaiCompatibleApiKey: c?.modelKeys.includes('openai-compatible') ?? false,
  };
}

export interface ProjectFormOptions {
  signedIn: SignedIn;
  action: string;
  submitLabel: string;
  values: ProjectForm;
  project?: ProjectView;
  error?: { message: string; fields?: FieldError[] | undefined };
  /** Sections other features add to the settings page (webhooks…). */
  extra?: Renderable;
}

export function projectForm(options: ProjectFormOptions): Html {
  const { values } = options;
  const fields = options.error?.fields;
  const has = secretsSet(options.project);
  const input = (name: string, hint: string, attributes: Renderable = '', type = 'text') =>
    html`<div class="field"><label for="${name}">${LABELS[name]}</label>
  <input id="${name}" name="${name}" type="${type}" value="${values[name] ?? ''}" ${attributes} ${invalid(fields, name, hint ? `${name}-hint` : undefined)}>
  ${hint && html`<p class="hint" id="${name}-hint">${hint}</p>`}${fieldError(fields, name)}</div>`;
  // Tall enough to show every line of a list (the writable globs are 11), up to a point.
  const rows = (name: string) => Math.min(12, Math.max(4, (values[name] ?? '').split('\n').length));
  const textarea = (name: string, hint: string) =>
    html`<div class="field"><label for="${name}">${LABELS[name]}</label>
  <textarea id="${name}" name="${name}" class="code" rows="${rows(name)}" ${invalid(fields, name, `${name}-hint`)}>${values[name] ?? ''}</textarea>
  <p class="hint" id="${name}-hint">${hint}</p>${fieldError(fields, name)}</div>`;
  const secret = (s: (typeof SECRETS)[number]) => {
    const set = has[s.name];
    // A new project has nothing stored: "Not set" there reads as a fault.
    const state =
      options.project &&
      html`<span class="secret-state" id="${s.name}-state">${set ? 'Set — leave blank to keep it' : 'Not set'}</span>`;
    const describedBy = options.project ? `${s.name}-hint ${s.name}-state` : `${s.name}-hint`;
    const control =
      'multiline' in s
        ? html`<textarea id="${s.name}" name="${s.name}" class="code" rows="3" autocomplete="off" spellcheck="false" aria-describedby="${describedBy}"></textarea>`
        : html`<input id="${s.name}" name="${s.name}" type="password" autocomplete="new-password" spellcheck="false" aria-describedby="${describedBy}">`;
    return html`<div class="field"><label for="${s.name}">${s.label}</label>${control}
  <p class="hint" id="${s.name}-hint">${s.hint} ${state}</p>
  ${set && html`<label class="check"><input type="checkbox" name="remove_${s.name}"> Remove the stored ${s.label.toLowerCase()}</label>`}
  ${fieldError(fields, s.name)}</div>`;
  };
  return html`${formErrors(options.error?.message, fields, LABELS)}
<form method="post" action="${options.action}" class="stack" novalidate>
  ${csrfField(options.signedIn)}
  <fieldset><legend>Repository</legend>
    ${input('name', 'Shown on the dashboard.', html`required maxlength="200"`)}
    ${input('repository', 'The web URL on GitHub, GitLab, Gitea or Forgejo (https://…), or a path on this machine.', html`required spellcheck="false"`)}
    <div class="row">
      <div class="field"><label for="host">${LABELS.host}</label>
        <select id="host" name="host" aria-describedby="host-hint" ${invalid(fields, 'host')}>
          <option value="">Detect from the URL</option>
          ${HOSTS.map((h) => html`<option value="${h}" ${values.host === h && html`selected`}>${h}</option>`)}
        </select>
        <p class="hint" id="host-hint">Needed for self-hosted servers.</p>${fieldError(fields, 'host')}</div>
      ${input('apiUrl', 'Self-hosted GitHub Enterprise, GitLab or Gitea only.', html`spellcheck="false"`, 'url')}
    </div>
    <div class="row">
      ${input('ref', 'Default: the repository’s default branch.', html`spellcheck="false"`)}
      ${input('docsDir', 'Where the docs live; default the repository root.', html`spellcheck="false"`)}
    </div>
    ${textarea('writable', 'Glob patterns the agent may change, one per line. Empty: Markdown, MDX and docs-site configuration.')}
  </fieldset>
  <fieldset><legend>Credentials</legend>
    <p class="hint">Stored encrypted and never shown again.</p>
    ${SECRETS.slice(0, 4).map(secret)}
  </fieldset>
  <fieldset><legend>Model</legend>
    ${input('model', 'provider/model-id, e.g. anthropic/claude-sonnet-4-5. Empty: DOCWRIGHT_MODEL.', html`spellcheck="false"`)}
    ${textarea('allowedModels', 'Other models a job may choose, one per line.')}
    ${input('openaiCompatibleBaseUrl', 'For openai-compatible/… models (Ollama, vLLM, LM Studio…).', html`spellcheck="false"`, 'url')}
    ${SECRETS.slice(4).map(secret)}
  </fieldset>
  <fieldset><legend>Pull requests</legend>
    <label class="check"><input type="checkbox" name="draft" ${values.draft === 'on' && html`checked`}> ${LABELS.draft}</label>
    <label class="check"><input type="checkbox" name="commentOnSource" aria-describedby="commentOnSource-hint" ${values.commentOnSource === 'on' && html`checked`}> ${LABELS.commentOnSource}</label>
    <p class="hint" id="commentOnSource-hint">When a job documents a pull request of a context repository, comment on it with the docs pull request’s link, or with the reason no docs change was needed.</p>
    ${input('labels', 'Comma-separated labels for each pull request.')}
    <div class="row">
      ${input('branchPrefix', `Default ${PROJECT_DEFAULTS.branchPrefix}.`, html`spellcheck="false"`)}
      ${input('rateLimit', 'Job creations and follow-ups per rolling hour. Empty: the server default.', html`inputmode="numeric"`)}
      ${input('monthlyTokenBudget', 'Model tokens per calendar month (UTC); new jobs are refused once spent. Empty: no limit.', html`inputmode="numeric"`)}
    </div>
    <div class="row">
      ${input('authorName', `Default ${PROJECT_DEFAULTS.authorName}.`)}
      ${input('authorEmail', `Default ${PROJECT_DEFAULTS.authorEmail}.`, html`inputmode="email" spellcheck="false"`)}
    </div>
  </fieldset>
  <fieldset><legend>Verification</legend>
    ${textarea('checks', 'Commands run after each job’s changes, one a line (e.g. vale docs): in a copy of the checkout, isolated with bubblewrap, without network or credentials. A non-zero exit is a finding the agent must fix.')}
  </fieldset>
  <div><button type="submit" class="primary">${options.submitLabel}</button></div>
</form>
${options.extra}`;
}
