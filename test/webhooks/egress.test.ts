// The egress guard (SPEC §13): which addresses a webhook may reach, judged on the address the
// connection is actually made to.
import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { after, before, describe, test } from 'node:test';
import { EgressRefused, guardedLookup, isPublicAddress } from '../../src/webhooks/egress.ts';
import { postWebhook } from '../../src/webhooks/send.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../doubles/webhook-receiver.ts';

describe('webhook egress guard', () => {
  let receiver: WebhookReceiver;
  before(async () => {
    receiver = await startWebhookReceiver();
  });
  after(() => receiver.close());

  test('only public unicast addresses pass', () => {
    const refused = [
      '127.0.0.1',
      '127.8.9.10',
      '0.0.0.0',
      '10.0.0.1',
      '172.16.5.4',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254', // cloud metadata
      '100.100.100.200', // carrier-grade NAT range (Alibaba's metadata address)
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254', // AWS metadata over IPv6 (unique-local)
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '64:ff9b::a00:1', // NAT64 of 10.0.0.1
      'not an address',
    ];
    for (const address of refused) assert.equal(isPublicAddress(address), false, address);
    for (const address of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      assert.equal(isPublicAddress(address), true, address);
    }
  });

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
