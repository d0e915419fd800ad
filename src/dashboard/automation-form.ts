/**
 * The dashboard's `New automation` form (docs/automations.mdx): its fields, prefilled from a preset
 * (presets.ts) chosen by a link (no script needed), and the automation input it posts.
 */
import type { FastifyRequest } from 'fastify';
import { TRIGGER_TYPES } from '../automations/automation.ts';
import { AUTOMATION_PRESETS } from '../automations/presets.ts';
import type { DocwrightError } from '../errors.ts';
import { type Html, html } from './html.ts';
import { csrfField, fieldError, formErrors, invalid } from './layout.ts';

export type AutomationForm = Record<string, string | undefined>;

const LABELS = {
  name: 'Name',
  trigger: 'Trigger',
  instruction: 'Instruction',
  draft: 'Draft',
};

const TRIGGER_HINTS: Record<(typeof TRIGGER_TYPES)[number], string> = {
  'code-change': 'a pull request merged into a context repository (or a push to it)',
  schedule: 'a cron schedule',
  'docs-push': 'a push to the docs repository',
  manual: 'only when run by hand or through the API',
};

/** The form's values for a preset (by id), or empty ones. */
export function presetValues(presetId: string | undefined): AutomationForm {
  const preset = AUTOMATION_PRESETS.find((p) => p.id === presetId);
  if (!preset) return { trigger: 'code-change' };
  const a = preset.automation;
  const t = a.trigger as Record<string, unknown>;
  return {
    preset: preset.id,
    name: a.name,
    trigger: String(t.type),
    cron: typeof t.cron === 'string' ? t.cron : undefined,
    timeZone: typeof t.timeZone === 'string' ? t.timeZone : undefined,
    batch: t.batch === true ? 'on' : undefined,
    instruction: a.instruction,
    draft: a.draft ? 'on' : undefined,
  };
}

const csv = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** The automation the form describes; the service validates it. */
export function automationInput(form: AutomationForm): Record<string, unknown> {
  const type = form.trigger ?? '';
  const trigger: Record<string, unknown> = { type };
  if (type === 'code-change' && csv(form.repositories).length) trigger.repositories = csv(form.repositories);
  if ((type === 'code-change' || type === 'docs-push') && csv(form.paths).length)
    trigger.paths = csv(form.paths);
  if (type === 'schedule') {
    trigger.cron = form.cron ?? '';
    if (form.timeZone?.trim()) trigger.timeZone = form.timeZone.trim();
    if (form.batch) trigger.batch = true;
  }
  return {
    name: form.name ?? '',
    trigger,
    instruction: form.instruction ?? '',
    draft: form.draft === 'on',
  };
}

export function automationForm(
  projectId: string,
  request: FastifyRequest,
  values: AutomationForm,
  error?: DocwrightError,
): Html {
  // `trigger.cron` is the cron field's problem: the form names fields by their last part.
  const fields = error?.fields?.map((f) => ({ ...f, field: f.field.replace(/^trigger\.(\w+).*$/, '$1') }));
  const base = `/projects/${projectId}/automations`;
  const text = (name: string, label: string, hint: string, placeholder = '') =>
    html`<div class="field"><label for="automation-${name}">${label}</label>
      <input id="automation-${name}" name="${name}" type="text" maxlength="500" spellcheck="false" placeholder="${placeholder}" value="${values[name] ?? ''}" ${invalid(fields, name, `automation-${name}-hint`)}>
      <p class="hint" id="automation-${name}-hint">${hint}</p>${fieldError(fields, name)}</div>`;
  return html`<section class="panel" aria-labelledby="new-automation-heading">
  <h2 id="new-automation-heading">New automation</h2>
  <p>Start from a preset:</p>
  <ul class="presets">${AUTOMATION_PRESETS.map(
    (p) =>
      html`<li><a href="${base}?preset=${p.id}#new-automation-heading" ${values.preset === p.id && html`aria-current="true"`}>${p.name}</a> <span class="hint">— ${p.description}</span></li>`,
  )}</ul>
  ${formErrors(error?.message, fields, { ...LABELS, cron: 'Cron', timeZone: 'Time zone', repositories: 'Repositories', paths: 'Paths' })}
  <form method="post" action="${base}" class="stack" novalidate>
    ${csrfField(request.signedIn!)}
    <div class="field"><label for="automation-name">Name</label>
      <input id="automation-name" name="name" type="text" required maxlength="200" value="${values.name ?? ''}" ${invalid(fields, 'name')}>${fieldError(fields, 'name')}</div>
    <div class="field"><label for="automation-trigger">Trigger</label>
      <select id="automation-trigger" name="trigger" aria-describedby="automation-trigger-hint" ${invalid(fields, 'type')}>
        ${TRIGGER_TYPES.map((t) => html`<option value="${t}" ${values.trigger === t && html`selected`}>${t}: ${TRIGGER_HINTS[t]}</option>`)}
      </select>
      <p class="hint" id="automation-trigger-hint">Only the fields of the chosen trigger are used.</p>${fieldError(fields, 'type')}</div>
    ${text('repositories', 'Repositories (code-change)', 'Context repository names, comma-separated; empty: all of them. docs is the project’s own.', 'api, sdk')}
    ${text('paths', 'Paths (code-change, docs-push)', 'Globs a change must touch, comma-separated; empty: any change.', 'src/**, openapi.yaml')}
    ${text('cron', 'Cron (schedule)', 'Five fields: minute hour day-of-month month day-of-week.', '0 9 * * 1')}
    ${text('timeZone', 'Time zone (schedule)', 'IANA name; empty: UTC.', 'Europe/Berlin')}
    <label class="check"><input type="checkbox" name="batch" ${values.batch && html`checked`}> <span>Batch (schedule) <span class="hint">— each job carries the changes merged since the previous run</span></span></label>
    <div class="field"><label for="automation-instruction">Instruction</label>
      <textarea id="automation-instruction" name="instruction" rows="8" ${invalid(fields, 'instruction', 'automation-instruction-hint')}>${values.instruction ?? ''}</textarea>
      <p class="hint" id="automation-instruction-hint">What the agent is asked to do each time; the change it runs for is given to it.</p>${fieldError(fields, 'instruction')}</div>
    <label class="check"><input type="checkbox" name="draft" ${values.draft && html`checked`}> <span>Open pull requests as drafts</span></label>
    <div><button type="submit" class="primary">Create automation</button></div>
  </form>
</section>`;
}
