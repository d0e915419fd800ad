/** The docwright API client: `createClient`, its error, and the types it speaks. */
export { type ClientOptions, createClient, type DocwrightClient } from './client.ts';
export { describeEvent } from './describe-event.ts';
export { describeJob } from './describe-job.ts';
export {
  type ApiFieldError,
  DocwrightApiError,
  type DocwrightApiErrorInit,
  isDocwrightApiError,
} from './errors.ts';
export type * from './types.ts';
