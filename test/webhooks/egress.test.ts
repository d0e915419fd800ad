// The egress guard (docs/webhooks.mdx): a webhook reaches public addresses only, judged on the address the
// connection is actually made to. Which addresses are public: test/public-address.test.ts.
import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { after, before, describe, test } from 'node:test';
import { isPublicAddress } from '../../src/public-address.ts';
import { EgressRefused, guardedLookup } from '../../src/webhooks/egress.ts';
import { postWebhook } from '../../src/webhooks/send.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../doubles/webhook-receiver.ts';

describe('webhook egress guard', () => {
  let receiver: WebhookReceiver;
  before(async () => {
    receiver = await startWebhookReceiver();
  });
  after(() => receiver.close());

  test('the lookup a connection uses refuses a name that resolves to a private address', async () => {
    const result = await new Promise<Error | null>((resolve) =>
      guardedLookup('localhost', {}, (error) => resolve(error)),
    );
    assert.ok(result instanceof EgressRefused);
    assert.match(
      result.message,
      /localhost resolves to (127\.0\.0\.1|::1).*DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE=1/,
    );
  });

  test('a POST to a private destination is refused at send time and never arrives', async () => {
    const literal = new URL(`${receiver.url}/hook`);
    const send = (url: URL, allowPrivate: boolean) =>
      postWebhook(url, '{}', { 'content-type': 'application/json' }, { timeoutMs: 2_000, allowPrivate });
    await assert.rejects(send(literal, false), EgressRefused);
    // A name the URL check cannot judge: only the socket's lookup sees where it leads.
    const name = hostname();
    const resolved = await lookup(name).catch(() => undefined);
    if (resolved && !isPublicAddress(resolved.address)) {
      const byName = new URL(`http://${name}:${literal.port}/hook`);
      await assert.rejects(send(byName, false), EgressRefused);
    }
    assert.equal(receiver.received.length, 0);
    assert.equal((await send(literal, true)).statusCode, 204, 'allowed with the override');
    assert.equal(receiver.received.length, 1);
  });
});
