/**
 * The code host's webhook deliveries an automation watches, with what each started or why it
 * started nothing (issue 35: an ignored delivery was answered 202 and its reason kept only in the
 * database). Shown on the automation's page.
 */
import type { Automation } from '../automations/automation.ts';
import type { HookDeliverySummary } from '../automations/hook-deliveries.ts';
import { type Html, html } from './html.ts';
import { time } from './layout.ts';

/** The hook URLs whose deliveries can fire the automation; undefined: every one of the project. */
export function watchedHookNames(automation: Automation): string[] | undefined {
  const trigger = automation.trigger;
  if (trigger.type === 'docs-push') return ['docs'];
  if (trigger.type === 'code-change' && trigger.repositories.length > 0) return trigger.repositories;
  return undefined;
}

/** Whether deliveries can fire the automation at all (schedules and manual ones are not). */
export const takesDeliveries = (automation: Automation): boolean =>
  automation.trigger.type === 'code-change' || automation.trigger.type === 'docs-push';

function resultText(result: string | null): Html {
  if (result === null) return html`<span class="status outcome-running">waiting</span>`;
  const [kind, ...rest] = result.split(': ');
  const detail = rest.join(': ');
  if (kind === 'runs')
    return html`<span class="status outcome-pull-request">${detail === '1' ? '1 run' : `${detail} runs`}</span>`;
  return html`<span class="status outcome-${kind === 'failed' ? 'failed' : 'skipped'}">${kind}</span> <span class="small">${detail}</span>`;
}

export function deliveriesSection(deliveries: HookDeliverySummary[], now: Date): Html {
  const table = html`<table>
  <thead><tr><th scope="col">Received</th><th scope="col">Repository</th><th scope="col">Event</th><th scope="col">Result</th></tr></thead>
  <tbody>${deliveries.map(
    (d) => html`<tr>
    <td data-label="Received"><div>${time(d.receivedAt, now)}<div class="small muted mono">${d.deliveryId}</div></div></td>
    <td data-label="Repository"><div><code>${d.name}</code></div></td>
    <td data-label="Event"><div>${d.host} <span class="nowrap">${d.event ?? '—'}</span></div></td>
    <td data-label="Result"><div>${resultText(d.result)}</div></td>
  </tr>`,
  )}</tbody>
</table>`;
  return html`<section class="panel" aria-labelledby="deliveries-heading"><h3 id="deliveries-heading">Webhook deliveries</h3>
  <p class="small muted">What the code host sent to the project's hook URLs that this automation watches, newest first, and what each started. A signed delivery is answered <code>202</code> even when it starts nothing: the reason is here, in <code>docwright automation deliveries</code> and in the server log.</p>
  ${deliveries.length === 0 ? html`<p class="muted">No deliveries yet.</p>` : table}
</section>`;
}
