// One classifier of public addresses (src/public-address.ts) for both of its callers: the
// webhooks' egress guard (an endpoint's URL, and the address its connection resolves to) refuses
// what is not public; a repository URL may use plain http only for what is not public.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRepository } from '../src/projects/repository.ts';
import { isLinkLocalOrMetadata, isPublicAddress } from '../src/public-address.ts';
import { checkUrlHost, EgressRefused, guardedLookup } from '../src/webhooks/egress.ts';

/** [address, public?]: IPv4, IPv6, and the IPv6 forms that carry an IPv4 address. */
const ADDRESSES: [string, boolean][] = [
  ['8.8.8.8', true],
  ['1.1.1.1', true],
  ['172.32.0.1', true],
  ['127.0.0.1', false],
  ['127.8.9.10', false],
  ['0.0.0.0', false],
  ['10.0.0.1', false],
  ['172.16.5.4', false],
  ['172.31.255.255', false],
  ['192.168.1.1', false],
  ['169.254.169.254', false], // link-local: the cloud metadata address
  ['169.254.1.1', false],
  ['100.64.0.1', false], // carrier-grade NAT
  ['100.100.100.200', false], // carrier-grade NAT: Alibaba's metadata address
  ['192.0.2.1', false], // documentation
  ['224.0.0.1', false],
  ['255.255.255.255', false],
  ['2606:4700:4700::1111', true],
  ['2001:4860:4860::8888', true],
  ['::1', false],
  ['::', false],
  ['fe80::1', false],
  ['fd00:ec2::254', false], // AWS metadata over IPv6 (unique-local)
  ['ff02::1', false],
  ['2001:db8::1', false], // documentation
  ['3fff::1', false], // documentation (RFC 9637)
  ['2001::1', false], // Teredo
  // IPv4-mapped: judged by the IPv4 address.
  ['::ffff:8.8.8.8', true],
  ['::ffff:808:808', true],
  ['::ffff:127.0.0.1', false],
  ['::ffff:10.0.0.1', false],
  ['::ffff:a00:1', false],
  ['::ffff:169.254.169.254', false],
  ['::ffff:100.64.0.1', false],
  // IPv4-compatible (deprecated): refused whatever it embeds.
  ['::7f00:1', false],
  ['::127.0.0.1', false],
  ['::a00:1', false],
  ['::808:808', false],
  ['::8.8.8.8', false],
  // IPv4-translated (SIIT).
  ['::ffff:0:808:808', false],
  // NAT64's well-known prefix: judged by the IPv4 address; its local-use prefix refused.
  ['64:ff9b::808:808', true],
  ['64:ff9b::a00:1', false],
  ['64:ff9b::7f00:1', false],
  ['64:ff9b:1::808:808', false],
  // 6to4: judged by the IPv4 address of the relay it leads to.
  ['2002:808:808::1', true],
  ['2002:a00:1::1', false],
  ['2002:7f00:1::1', false],
];

const urlHost = (address: string) => (address.includes(':') ? `[${address}]` : address);

test('the classifier: public unicast addresses only', () => {
  for (const [address, isPublic] of ADDRESSES) assert.equal(isPublicAddress(address), isPublic, address);
  for (const notAnAddress of ['', 'not an address', '127.1', 'fe80::1%eth0x', '1.2.3.4.5']) {
    assert.equal(isPublicAddress(notAnAddress), false, notAnAddress);
  }
});

test('webhooks: a URL whose host is a non-public address is refused before any connection', () => {
  for (const [address, isPublic] of ADDRESSES) {
    const url = new URL(`https://${urlHost(address)}/hook`);
    if (isPublic) assert.doesNotThrow(() => checkUrlHost(url), address);
    else assert.throws(() => checkUrlHost(url), EgressRefused, address);
  }
});

test('webhooks: the lookup a connection uses refuses a non-public address', async () => {
  for (const [address, isPublic] of ADDRESSES) {
    const error = await new Promise<Error | null>((resolve) =>
      guardedLookup(address, {}, (failure) => resolve(failure)),
    );
    if (isPublic) assert.equal(error, null, address);
    else assert.ok(error instanceof EgressRefused, `${address}: ${error}`);
  }
});

test('repositories: plain http only to an address that is not public', () => {
  for (const [address, isPublic] of ADDRESSES) {
    const result = parseRepository(`http://${urlHost(address)}/acme/docs`);
    if (isPublic) {
      assert.ok('error' in result, address);
      assert.match(result.error, /http is allowed only/, address);
    } else {
      assert.ok(!('error' in result), `${address}: ${JSON.stringify(result)}`);
    }
    assert.ok(!('error' in parseRepository(`https://${urlHost(address)}/acme/docs`)), address);
  }
});

test('link-local and cloud metadata addresses, which repositories may not point at; private and loopback ones may', () => {
  const cases: [string, boolean][] = [
    ['169.254.169.254', true],
    ['169.254.0.1', true],
    ['100.100.100.200', true], // Alibaba Cloud
    ['168.63.129.16', true], // Azure's platform endpoint
    ['192.0.0.192', true], // Oracle Cloud (older)
    ['fe80::1', true],
    ['febf:ffff::1', true],
    ['fd00:ec2::254', true], // AWS over IPv6
    ['::ffff:169.254.169.254', true],
    ['::ffff:a9fe:a9fe', true],
    ['64:ff9b::169.254.169.254', true], // NAT64
    ['2002:a9fe:a9fe::1', true], // 6to4
    ['10.0.0.1', false],
    ['172.16.0.1', false],
    ['192.168.1.1', false],
    ['127.0.0.1', false],
    ['100.64.0.1', false],
    ['8.8.8.8', false],
    ['::1', false],
    ['fd12:3456::1', false],
    ['fd00:ec2::253', false],
    ['fec0::1', false],
    ['2606:4700:4700::1111', false],
    ['metadata.google.internal', false], // names are resolved by the caller
  ];
  for (const [address, expected] of cases) assert.equal(isLinkLocalOrMetadata(address), expected, address);
});
