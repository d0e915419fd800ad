/**
 * A host's conversation (conversation.ts) with its failures mapped once: `comment-failed`, or
 * what the credentials say (`host-auth-failed`, `host-permission-denied`), the host's answer
 * redacted; replies bounded like every comment docwright posts.
 */
import type { Redact } from '../../redact.ts';
import { boundComment, toHostError } from './common.ts';
import type { PullRequestConversation } from './conversation.ts';
import type { HostError } from './host.ts';

/** The same operations with the host's failures mapped once (`comment-failed`, or what the credentials say). */
export function guardConversation(
  context: { host: string; repository: string; redact: Redact },
  inner: PullRequestConversation,
): PullRequestConversation {
  const fail = (action: string, error: unknown, signal?: AbortSignal): HostError => {
    if (signal?.aborted) throw signal.reason;
    return toHostError(error, {
      host: context.host,
      action: `${action} of ${context.repository}`,
      fallback: 'comment-failed',
      notFound: 'change-unavailable',
      redact: context.redact,
    });
  };
  return {
    async whoAmI(signal) {
      try {
        return await inner.whoAmI(signal);
      } catch (error) {
        throw fail('ask who the credentials are', error, signal);
      }
    },
    async canWrite(user, signal) {
      try {
        return await inner.canWrite(user, signal);
      } catch (error) {
        throw fail(`ask whether ${user.login} may write`, error, signal);
      }
    },
    async listComments(number, since, limit, signal) {
      try {
        return await inner.listComments(number, since, limit, signal);
      } catch (error) {
        throw fail(`list the comments of #${number}`, error, signal);
      }
    },
    async reply(target, body, signal) {
      try {
        return await inner.reply(target, boundComment(body), signal);
      } catch (error) {
        throw fail(`reply on #${target.number}`, error, signal);
      }
    },
  };
}
