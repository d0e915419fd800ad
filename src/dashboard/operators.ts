import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../app.ts';
import { DocwrightError } from '../errors.ts';
import { PASSWORD_MIN_CHARS } from '../operators/passwords.ts';
import { html } from './html.ts';
import { csrfField, fieldError, formErrors, invalid, page, sendHtml, time } from './layout.ts';
import { setFlash, takeFlash } from './session.ts';

/** What this file uses of the App (a narrow dependency: tsc checks it). */
type AppUses = Pick<App, 'config' | 'now' | 'operators' | 'sessions'>;

type Form = Record<string, string | undefined>;

async function operatorsPage(
  app: AppUses,
  request: FastifyRequest,
  reply: FastifyReply,
  form: { values: Form; error?: DocwrightError } = { values: {} },
) {
  const signedIn = request.signedIn!;
  const operators = await app.operators.list();
  const now = app.now();
  const fields = form.error?.fields;
  const body = html`<div class="page-head"><div><h1>Operators</h1><p>People who can sign in to this dashboard. Every operator can manage every project.</p></div></div>
<section class="panel" aria-labelledby="operators-heading">
  <h2 id="operators-heading">Accounts</h2>
  <table>
    <thead><tr><th scope="col">Email</th><th scope="col">Created</th><th scope="col">Last sign-in</th><th scope="col">State</th><th scope="col"><span class="skip">Actions</span></th></tr></thead>
    <tbody>${operators.map(
      (operator) => html`<tr>
      <td data-label="Email"><div>${operator.email}${operator.id === signedIn.operator.id && html` <span class="muted nowrap">(you)</span>`}</div></td>
      <td data-label="Created"><div>${time(operator.createdAt, now)}</div></td>
      <td data-label="Last sign-in"><div>${time(operator.lastSignInAt, now)}</div></td>
      <td data-label="State"><div>${operator.disabledAt ? html`<span class="status status-archived">disabled</span>` : html`<span class="status status-completed">active</span>`}</div></td>
      <td data-label="">${
        !operator.disabledAt &&
        operator.id !== signedIn.operator.id &&
        html`<form method="post" action="/operators/${operator.id}/disable">${csrfField(signedIn)}
        <button type="submit" class="danger small-button">Disable</button></form>`
      }</td>
    </tr>`,
    )}</tbody>
  </table>
</section>
<section class="panel" aria-labelledby="add-heading">
  <h2 id="add-heading">Add an operator</h2>
  ${formErrors(form.error?.message, fields, { email: 'Email', password: 'Password' })}
  <form method="post" action="/operators" class="row">
    ${csrfField(signedIn)}
    <div class="field"><label for="operator-email">Email</label>
      <input id="operator-email" name="email" type="email" autocomplete="off" required value="${form.values.email ?? ''}" ${invalid(fields, 'email')}>${fieldError(fields, 'email')}</div>
    <div class="field"><label for="operator-password">Password</label>
      <input id="operator-password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_CHARS}" ${invalid(fields, 'password', 'operator-password-hint')}>
      <p class="hint" id="operator-password-hint">At least ${PASSWORD_MIN_CHARS} characters; share it with them privately.</p>${fieldError(fields, 'password')}</div>
    <div><button type="submit" class="primary">Add operator</button></div>
  </form>
</section>`;
  return sendHtml(
    reply,
    page({
      title: 'Operators',
      signedIn,
      section: 'operators',
      flash: takeFlash(request, reply, app),
      body,
    }),
    form.error?.status ?? 200,
  );
}

/** `/operators`: list, add, disable. */
export function registerOperatorPages(server: FastifyInstance, app: AppUses): void {
  server.get('/operators', async (request, reply) => operatorsPage(app, request, reply));

  server.post<{ Body: Form }>('/operators', async (request, reply) => {
    const form = request.body ?? {};
    try {
      const created = await app.operators.create({ email: form.email ?? '', password: form.password ?? '' });
      setFlash(reply, app, request.signedIn!, { notice: `${created.email} can now sign in.` });
    } catch (error) {
      if (error instanceof DocwrightError && (error.status === 400 || error.status === 409)) {
        return operatorsPage(app, request, reply, { values: { email: form.email }, error });
      }
      throw error;
    }
    return reply.redirect('/operators', 303);
  });

  server.post<{ Params: { operatorId: string } }>(
    '/operators/:operatorId/disable',
    async (request, reply) => {
      const operator = (await app.operators.list()).find((o) => o.id === request.params.operatorId);
      if (!operator) throw new DocwrightError('not-found', 'That operator does not exist.');
      if (operator.id === request.signedIn!.operator.id) {
        throw new DocwrightError(
          'invalid-request',
          'You cannot disable your own account; ask another operator.',
        );
      }
      await app.operators.disable(operator.email);
      setFlash(reply, app, request.signedIn!, {
        notice: `${operator.email} is disabled and signed out everywhere.`,
      });
      return reply.redirect('/operators', 303);
    },
  );
}
