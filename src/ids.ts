import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/**
 * Resource ids: a type prefix and a lower-case ULID, so ids sort by creation
 * time (newest-first listing is an index scan) and name what they identify.
 */
const nextUlid = monotonicFactory(pooledRandom());

/**
 * The same cryptographic source the library would use, drawn 4 KiB at a time: by itself it asks
 * for one byte per character, a measurable share of creating a job.
 */
function pooledRandom(): () => number {
  const pool = new Uint8Array(4096);
  let next = pool.length;
  return () => {
    if (next === pool.length) {
      randomFillSync(pool);
      next = 0;
    }
    return pool[next++]! / 256;
  };
}

const ulidPattern = '[0-9a-hjkmnp-tv-z]{26}';

export const newJobId = (): string => `job_${nextUlid().toLowerCase()}`;
export const newRunId = (): string => `run_${nextUlid().toLowerCase()}`;
export const newProjectId = (): string => `prj_${nextUlid().toLowerCase()}`;
export const newKeyId = (): string => `key_${nextUlid().toLowerCase()}`;
export const newOperatorId = (): string => `usr_${nextUlid().toLowerCase()}`;
export const newWebhookEndpointId = (): string => `whe_${nextUlid().toLowerCase()}`;
/** A webhook message id is the `webhook-id` header receivers de-duplicate by. */
export const newWebhookMessageId = (): string => `msg_${nextUlid().toLowerCase()}`;
export const newWebhookDeliveryId = (): string => `whd_${nextUlid().toLowerCase()}`;
export const newServerProcessId = (): string => `srv_${nextUlid().toLowerCase()}`;
export const newAutomationId = (): string => `aut_${nextUlid().toLowerCase()}`;
export const newAutomationRunId = (): string => `arun_${nextUlid().toLowerCase()}`;
export const newHookDeliveryId = (): string => `hkd_${nextUlid().toLowerCase()}`;
export const newSlackEventId = (): string => `sle_${nextUlid().toLowerCase()}`;
export const newSlackThreadId = (): string => `slt_${nextUlid().toLowerCase()}`;
export const newCommentFollowUpId = (): string => `cfu_${nextUlid().toLowerCase()}`;

const jobIdRe = new RegExp(`^job_${ulidPattern}$`);
const projectIdRe = new RegExp(`^prj_${ulidPattern}$`);
const keyIdRe = new RegExp(`^key_${ulidPattern}$`);

export const isJobId = (value: string): boolean => jobIdRe.test(value);
export const isProjectId = (value: string): boolean => projectIdRe.test(value);
export const isKeyId = (value: string): boolean => keyIdRe.test(value);
const webhookEndpointIdRe = new RegExp(`^whe_${ulidPattern}$`);
const webhookDeliveryIdRe = new RegExp(`^whd_${ulidPattern}$`);
export const isWebhookEndpointId = (value: string): boolean => webhookEndpointIdRe.test(value);
export const isWebhookDeliveryId = (value: string): boolean => webhookDeliveryIdRe.test(value);
const automationIdRe = new RegExp(`^aut_${ulidPattern}$`);
const automationRunIdRe = new RegExp(`^arun_${ulidPattern}$`);
export const isAutomationId = (value: string): boolean => automationIdRe.test(value);
export const isAutomationRunId = (value: string): boolean => automationRunIdRe.test(value);
