/** The event types a webhook endpoint can subscribe to (docs/webhooks.mdx). */
export const WEBHOOK_EVENT_TYPES = ['job.created', 'job.completed', 'job.failed', 'job.archived'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** What an endpoint gets when it names none: how each job ended. */
export const DEFAULT_WEBHOOK_EVENTS: WebhookEventType[] = ['job.completed', 'job.failed', 'job.archived'];
