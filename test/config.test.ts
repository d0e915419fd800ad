// Settings from the environment that are checked before anything starts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../src/config.ts';

test('DOCWRIGHT_TRUST_PROXY: a number of hops or IP addresses and CIDR ranges; words are refused', () => {
  const trust = (value: string) => loadConfig({ DOCWRIGHT_TRUST_PROXY: value }).trustProxy;
  assert.equal(trust('2'), 2);
  assert.equal(trust('10.0.0.1, 192.168.0.0/16,fd00::/8'), '10.0.0.1,192.168.0.0/16,fd00::/8');
  for (const bad of ['bad', 'cafe', '10.0.0.1,dead', '10.0.0.0/33', 'fd00::/129', '1.2.3.4/8/8', '']) {
    assert.throws(() => loadConfig({ DOCWRIGHT_TRUST_PROXY: bad }), /DOCWRIGHT_TRUST_PROXY/, bad);
  }
});
