/**
 * `docwright webhook create|list|delete` (docs/webhooks.mdx), plus `disable`, `enable`, `deliveries` and
 * `resend` for the delivery history. Admin commands: they use the database directly, as `key` does.
 */
import { type Command, Option } from 'commander';
import type { App } from '../app.ts';
import { DocwrightError } from '../errors.ts';
import { WEBHOOK_EVENT_TYPES } from '../jobs/webhook-events.ts';
import { describeServer, liveServers } from '../processes/process-registry.ts';
import { checkUrlHost, EgressRefused } from '../webhooks/egress.ts';
import type { WebhookDeliveryView, WebhookEndpointView } from '../webhooks/webhooks.ts';
import { describe, print, table, withApp } from './output.ts';
import { list, positiveInt } from './parsers.ts';

const endpointRow = (e: WebhookEndpointView) => [
  e.id,
  e.url,
  e.events.join(','),
  e.enabled ? 'enabled' : `disabled: ${e.disabledReason ?? ''}`,
  e.createdAt,
];

const deliveryRow = (d: WebhookDeliveryView) => [
  d.id,
  d.eventType,
  d.jobId ?? '-',
  d.status,
  String(d.attempts),
  d.lastStatusCode === null ? '-' : String(d.lastStatusCode),
  d.nextAttemptAt ?? d.lastAttemptAt ?? '-',
  d.lastError ?? '',
];

/**
 * Whether the endpoint may be on a private address, as the running processes that send webhooks
 * judge it (process-registry.ts), or with none running as this shell's environment does, saying so:
 * `refusal` explains a refusal of `url`, `note` an acceptance only this shell allowed.
 */
async function egressSetting(
  app: App,
  url: string,
): Promise<{ allowPrivate: boolean; refusal?: string; note?: string }> {
  let isPrivate = false;
  try {
    checkUrlHost(new URL(url));
  } catch (error) {
    isPrivate = error instanceof EgressRefused;
  }
  const senders = (await liveServers(app.store.db, app.now())).filter((s) => s.runsJobs);
  if (senders.length === 0) {
    const allowPrivate = app.config.webhooks.allowPrivate;
    const judged = `no docwright server is running on ${app.store.location}, so this was judged by this shell's environment`;
    if (!isPrivate) return { allowPrivate };
    return allowPrivate
      ? {
          allowPrivate,
          note: `${judged} (DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE=1): start the server with it too, or it will refuse to send to ${url}`,
        }
      : { allowPrivate, refusal: judged };
  }
  const refusing = senders.filter((s) => !s.settings.webhookAllowPrivate);
  if (refusing.length === 0) return { allowPrivate: true };
  return {
    allowPrivate: false,
    ...(isPrivate && {
      refusal: `judged by the running ${refusing.map(describeServer).join(', ')}, which sends webhooks and was started without DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE=1`,
    }),
  };
}

export function registerWebhookCommands(program: Command): void {
  const webhook = program.command('webhook').description("manage a project's webhook endpoints");

  webhook
    .command('create')
    .description('add an endpoint that is POSTed signed job events (its secret is shown once)')
    .requiredOption('--project <id>', 'project id')
    .requiredOption('--url <url>', 'http(s) URL to POST events to')
    .option(
      '--events <types>',
      `comma-separated event types (${WEBHOOK_EVENT_TYPES.join(', ')}; default: all but job.created)`,
      list,
    )
    .option('--description <text>', 'what the endpoint is for')
    .option('--json', 'print as JSON')
    .action(async (options) => {
      const [created, note] = await withApp(async (app) => {
        const egress = await egressSetting(app, options.url);
        const endpoint = await app.webhooks
          .createEndpoint(
            options.project,
            { url: options.url, events: options.events, description: options.description },
            { allowPrivate: egress.allowPrivate },
          )
          .catch((error: unknown) => {
            if (!(error instanceof DocwrightError) || !egress.refusal) throw error;
            throw new DocwrightError(error.code, `${error.message}; ${egress.refusal}`, {
              fields: error.fields,
              cause: error,
            });
          });
        return [endpoint, egress.note] as const;
      });
      if (note) process.stderr.write(`docwright: note: ${note}\n`);
      print(options.json, created, () =>
        [
          `webhook endpoint ${created.id} for project ${created.projectId}: ${created.url}`,
          `events: ${created.events.join(', ')}`,
          '',
          `signing secret: ${created.secret}`,
          '',
          'It is shown only now; verify deliveries with it (any Standard Webhooks library).',
        ].join('\n'),
      );
    });

  webhook
    .command('list')
    .description("list a project's webhook endpoints")
    .requiredOption('--project <id>', 'project id')
    .option('--json', 'print as JSON')
    .action(async (options) => {
      const endpoints = await withApp((app) => app.webhooks.listEndpoints(options.project));
      print(options.json, { endpoints }, () =>
        table(['ID', 'URL', 'EVENTS', 'STATE', 'CREATED'], endpoints.map(endpointRow)),
      );
    });

  webhook
    .command('delete')
    .description('delete a webhook endpoint and its delivery history')
    .argument('<endpoint-id>', 'endpoint id (whe_…)')
    .option('--json', 'print as JSON')
    .action(async (id: string, options) => {
      const deleted = await withApp((app) => app.webhooks.deleteEndpoint(id));
      print(options.json, deleted, () => `deleted webhook endpoint ${deleted.id} (${deleted.url})`);
    });

  webhook
    .command('disable')
    .description('stop sending to an endpoint (its queued deliveries fail; enable sends again)')
    .argument('<endpoint-id>', 'endpoint id (whe_…)')
    .option('--json', 'print as JSON')
    .action(async (id: string, options) => {
      const disabled = await withApp((app) => app.webhooks.disableEndpoint(id));
      print(options.json, disabled, () => `disabled webhook endpoint ${disabled.id} (${disabled.url})`);
    });

  webhook
    .command('enable')
    .description('send to an endpoint again after it was disabled (e.g. by a 410 answer)')
    .argument('<endpoint-id>', 'endpoint id (whe_…)')
    .option('--json', 'print as JSON')
    .action(async (id: string, options) => {
      const enabled = await withApp((app) => app.webhooks.enableEndpoint(id));
      print(options.json, enabled, () => `enabled webhook endpoint ${enabled.id} (${enabled.url})`);
    });

  webhook
    .command('deliveries')
    .description("a project's webhook deliveries, newest first, or one with its attempts")
    .option('--project <id>', 'project id (to list)')
    .option('--endpoint <id>', 'only deliveries to this endpoint')
    .addOption(
      new Option('--status <status>', 'only deliveries in this state').choices([
        'pending',
        'sending',
        'succeeded',
        'failed',
      ]),
    )
    .option('--limit <n>', 'how many (1–100, default 20)', positiveInt)
    .option('--cursor <cursor>', 'continue after an earlier page (its nextCursor)')
    .option('--delivery <id>', 'show one delivery (whd_…) with every attempt')
    .option('--json', 'print as JSON')
    .action(async (options) => {
      if (options.delivery) {
        const delivery = await withApp((app) => app.webhooks.getDelivery(options.delivery));
        print(options.json, delivery, () => {
          const { history, body: _body, ...summary } = delivery;
          const attempts = history.map((a) => [
            a.attemptedAt,
            a.statusCode === null ? '-' : String(a.statusCode),
            `${a.durationMs} ms`,
            a.error ?? '',
          ]);
          return `${describe(summary)}\n\n${table(['ATTEMPTED', 'STATUS', 'TIME', 'ERROR'], attempts)}`;
        });
        return;
      }
      if (!options.project) {
        process.stderr.write('docwright: pass --project <id> to list deliveries, or --delivery <id>\n');
        process.exitCode = 2;
        return;
      }
      const page = await withApp((app) =>
        app.webhooks.listDeliveries(options.project, {
          endpointId: options.endpoint,
          status: options.status,
          limit: options.limit,
          cursor: options.cursor,
        }),
      );
      print(options.json, page, () => {
        const more = page.nextCursor ? `\n(more: --cursor ${page.nextCursor})` : '';
        return (
          table(
            ['ID', 'EVENT', 'JOB', 'STATUS', 'ATTEMPTS', 'LAST CODE', 'NEXT / LAST', 'LAST ERROR'],
            page.deliveries.map(deliveryRow),
          ) + more
        );
      });
    });

  webhook
    .command('resend')
    .description('send a delivery again now (same webhook-id, fresh retry schedule)')
    .argument('<delivery-id>', 'delivery id (whd_…)')
    .option('--json', 'print as JSON')
    .action(async (id: string, options) => {
      const queued = await withApp((app) => app.webhooks.resend(id));
      print(
        options.json,
        queued,
        () => `delivery ${queued.id} (${queued.eventType}) queued to be sent again`,
      );
    });
}
