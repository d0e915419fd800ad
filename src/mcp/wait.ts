/** How the MCP tools wait for a job (wait_for_docs_job, ask_docs): bounded, with progress for clients that ask. */
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { DocwrightClient } from '../client/client.ts';
import { describeEvent } from '../client/describe-event.ts';
import type { AgentJob } from '../client/types.ts';

/** Under the 60 s most MCP clients allow a call by default; an agent calls again while a job runs. */
export const DEFAULT_WAIT_SECONDS = 50;
export const MAX_WAIT_SECONDS = 3600;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The job once it ends, or as it is after `seconds` (`timedOut`, still active). */
export async function waitWithin(
  client: DocwrightClient,
  projectId: string,
  id: string,
  seconds: number,
  extra: Extra,
): Promise<{ job: AgentJob; timedOut: boolean }> {
  const timeout = AbortSignal.timeout(seconds * 1000);
  const signal = AbortSignal.any([timeout, extra.signal]);
  const progressToken = extra._meta?.progressToken;
  let progress = 0;
  try {
    const job = await client.waitForJob(projectId, id, {
      signal,
      pollIntervalMs: 2_000,
      // Progress for clients that asked for it: what the agent is doing now.
      onEvent:
        progressToken === undefined
          ? undefined
          : (event) => {
              progress += 1;
              void extra
                .sendNotification({
                  method: 'notifications/progress',
                  params: { progressToken, progress, message: describeEvent(event) },
                })
                .catch(() => {});
            },
    });
    return { job, timedOut: false };
  } catch (error) {
    if (!timeout.aborted || extra.signal.aborted) throw error;
    const job = await client.getJob(projectId, id);
    return { job, timedOut: job.status === 'active' };
  }
}
