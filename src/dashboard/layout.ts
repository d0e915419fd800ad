import type { FastifyReply } from 'fastify';
import type { FieldError } from '../errors.ts';
import type { JobStatus } from '../jobs/agent-job.ts';
import { assets } from './assets.ts';
import { type Html, html, type Renderable } from './html.ts';
import type { Flash, SignedIn } from './session.ts';

export interface PageOptions {
  title: string;
  signedIn?: SignedIn | null;
  /** Which top-level section is current. */
  section?: 'projects' | 'operators';
  flash?: Flash;
  body: Renderable;
}

/** The page shell: head, top bar with sign-out, and the main content. */
export function page(options: PageOptions): Html {
  const { signedIn } = options;
  const current = (section: PageOptions['section']) => ariaCurrent(options.section === section);
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false}'>
<title>${options.title} · docwright</title>
<link rel="icon" href="${assets.icon.path}" type="image/svg+xml">
<link rel="stylesheet" href="${assets.style.path}">
<script src="${assets.htmx.path}" defer></script>
<script src="${assets.sse.path}" defer></script>
<script src="${assets.script.path}" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="/"><img src="${assets.icon.path}" alt="" width="22" height="22"> docwright</a>
  ${
    signedIn &&
    html`<nav aria-label="Main">
    <a href="/" ${current('projects')}>Projects</a>
    <a href="/operators" ${current('operators')}>Operators</a>
  </nav>
  <div class="who">
    <span class="wrap">${signedIn.operator.email}</span>
    <form method="post" action="/logout">${csrfField(signedIn)}<button type="submit" class="small-button">Sign out</button></form>
  </div>`
  }
</header>
<main id="main">
${options.flash?.notice && html`<div class="flash" role="status">${options.flash.notice}</div>`}
${options.body}
</main>
</body>
</html>`;
}

/** ` aria-current="page"` on the link to the page being shown. */
export const ariaCurrent = (isCurrent: boolean): Html | '' => (isCurrent ? html` aria-current="page"` : '');

/** Answers with an HTML page (or fragment). */
export const sendHtml = (reply: FastifyReply, body: Html, status = 200): FastifyReply =>
  reply.status(status).type('text/html; charset=utf-8').send(body.value);

export const csrfField = (signedIn: SignedIn): Html =>
  html`<input type="hidden" name="_csrf" value="${signedIn.session.csrfSecret}">`;

/** A status badge; its text is the status value itself. */
export const statusBadge = (status: JobStatus, attributes: Renderable = ''): Html =>
  html`<span class="status status-${status}" ${attributes}>${status}</span>`;

/** A time in words (absolute, in UTC), machine-readable in `datetime`. */
export function time(iso: string | null, now: Date): Html {
  if (!iso) return html`<span class="muted">never</span>`;
  return html`<time datetime="${iso}" title="${iso.replace('T', ' ').slice(0, 19)} UTC">${ago(iso, now)}</time>`;
}

export function ago(iso: string, now: Date): string {
  const seconds = Math.round((now.getTime() - Date.parse(iso)) / 1000);
  const future = seconds < 0;
  const s = Math.abs(seconds);
  const [value, unit] =
    s < 45
      ? [0, 'now']
      : s < 3600
        ? [Math.round(s / 60), 'minute']
        : s < 86_400
          ? [Math.round(s / 3600), 'hour']
          : s < 60 * 86_400
            ? [Math.round(s / 86_400), 'day']
            : [0, 'date'];
  if (unit === 'now') return future ? 'in a moment' : 'just now';
  if (unit === 'date') return iso.slice(0, 10);
  const words = `${value} ${unit}${value === 1 ? '' : 's'}`;
  return future ? `in ${words}` : `${words} ago`;
}

export const formatNumber = (n: number): string => n.toLocaleString('en-US');

/** Text on one line (whitespace runs become one space), cut to `max` characters with an ellipsis. */
export const oneLine = (text: string, max = 140): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/**
 * The problems of a form that the service refused, above the form, each field named by its label
 * (`labels`, by field name) as the person sees it, never by the service's key.
 */
export function formErrors(
  message: string | undefined,
  fields: FieldError[] = [],
  labels: Record<string, string> = {},
): Html | '' {
  if (!message) return '';
  return html`<div class="alert" role="alert" tabindex="-1" id="form-errors">
  <strong>${fields.length > 0 ? 'Please correct the highlighted fields.' : message}</strong>
  ${fields.length > 0 && html`<ul>${fields.map((f) => html`<li>${labels[fieldName(f.field)] ?? fieldName(f.field)}: ${f.message}</li>`)}</ul>`}
</div>`;
}

/** The form field a service's field path is about: `body.writable.3` is the `writable` field. */
const fieldName = (field: string) => field.replace(/^body\./, '').split('.')[0]!;

/** The message for one field, or nothing; pair with `invalid()` on the control. */
export function fieldError(fields: FieldError[] | undefined, name: string): Html | '' {
  const error = fields?.find((f) => fieldName(f.field) === name);
  return error ? html`<p class="error-text" id="${name}-error">${error.message}</p>` : '';
}

/** `aria-invalid` and `aria-describedby` for a control whose field was refused. */
export function invalid(fields: FieldError[] | undefined, name: string, hintId?: string): Html {
  const bad = fields?.some((f) => fieldName(f.field) === name);
  const describedBy = [hintId, bad ? `${name}-error` : undefined].filter(Boolean).join(' ');
  return html`${bad && html` aria-invalid="true"`}${describedBy && html` aria-describedby="${describedBy}"`}`;
}

/** Breadcrumbs and heading of a project's pages, with the project's tabs. */
export function projectHeader(
  project: { id: string; name: string; repository: string },
  tab: 'jobs' | 'keys' | 'webhooks' | 'automations' | 'settings',
  extra: Renderable = '',
  /** Breadcrumbs below the project's (a page inside a tab): the project's name becomes a link. */
  trail?: Html,
): Html {
  const current = (name: string) => ariaCurrent(tab === name);
  const crumb = trail
    ? html`<a href="/projects/${project.id}/${tab}">${project.name}</a> / ${trail}`
    : project.name;
  return html`<div class="crumbs"><a href="/">Projects</a> / ${crumb}</div>
<div class="page-head">
  <div><h1>${project.name}</h1><p class="mono">${project.repository}</p></div>
  ${extra}
</div>
<nav class="tabs" aria-label="Project">
  <a href="/projects/${project.id}/jobs" ${current('jobs')}>Jobs</a>
  <a href="/projects/${project.id}/keys" ${current('keys')}>API keys</a>
  <a href="/projects/${project.id}/webhooks" ${current('webhooks')}>Webhooks</a>
  <a href="/projects/${project.id}/automations" ${current('automations')}>Automations</a>
  <a href="/projects/${project.id}/settings" ${current('settings')}>Settings</a>
</nav>`;
}

/**
 * The server's address as the operator's browser reaches it: `DOCWRIGHT_PUBLIC_URL` when set,
 * else the request's own (what the API base URL and hook URLs shown on pages start with).
 */
export function serverBaseUrl(
  config: { publicUrl?: string | undefined },
  request: { protocol: string; headers: { host?: string | undefined } },
): string {
  const own = request.headers.host === undefined ? '' : `${request.protocol}://${request.headers.host}`;
  return (config.publicUrl ?? own).replace(/\/+$/, '');
}
