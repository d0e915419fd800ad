import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import type { HookHost } from '../../src/automations/code-events.ts';
import type { HeaderSource } from '../../src/inbound-hooks/headers.ts';
import { checkBeforeBody, MAX_TOKEN_LENGTH, verifySignature } from '../../src/inbound-hooks/signatures.ts';

const SECRET = "It's a Secret to Everybody";
const BODY = new TextEncoder().encode('Hello, World!');
/** GitHub's published example for this secret and body ("Validating webhook deliveries"). */
const GITHUB_EXAMPLE = '757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';

const hmac = (body: Uint8Array, secret = SECRET) => createHmac('sha256', secret).update(body).digest('hex');

const refusal = (host: HookHost, headers: HeaderSource, body = BODY, secret = SECRET) => {
  const check = verifySignature(host, headers, body, secret);
  return check.ok ? 'ok' : check.refusal;
};

describe('GitHub: X-Hub-Signature-256', () => {
  test('the published example verifies, in either case of hex, from a Buffer or a Uint8Array', () => {
    assert.equal(hmac(BODY), GITHUB_EXAMPLE);
    assert.equal(refusal('github', { 'x-hub-signature-256': `sha256=${GITHUB_EXAMPLE}` }), 'ok');
    assert.equal(
      refusal('github', { 'x-hub-signature-256': `sha256=${GITHUB_EXAMPLE.toUpperCase()}` }),
      'ok',
    );
    assert.equal(
      refusal('github', { 'x-hub-signature-256': `sha256=${GITHUB_EXAMPLE}` }, Buffer.from(BODY)),
      'ok',
    );
    assert.equal(
      refusal('github', new Headers({ 'X-Hub-Signature-256': `sha256=${GITHUB_EXAMPLE}` })),
      'ok',
      'a fetch Headers object',
    );
  });

  test('another body, another secret or another digest is refused', () => {
    const headers = { 'x-hub-signature-256': `sha256=${GITHUB_EXAMPLE}` };
    assert.equal(refusal('github', headers, new TextEncoder().encode('Hello, World?')), 'bad-signature');
    assert.equal(refusal('github', headers, BODY, `${SECRET}.`), 'bad-signature');
    const flipped = `${GITHUB_EXAMPLE.slice(0, -1)}${GITHUB_EXAMPLE.endsWith('7') ? '8' : '7'}`;
    assert.equal(refusal('github', { 'x-hub-signature-256': `sha256=${flipped}` }), 'bad-signature');
    // The signature is over the bytes: the same JSON re-serialised is another body.
    const raw = new TextEncoder().encode('{"a": 1}');
    const sig = { 'x-hub-signature-256': `sha256=${hmac(raw)}` };
    assert.equal(refusal('github', sig, raw), 'ok');
    assert.equal(refusal('github', sig, new TextEncoder().encode(JSON.stringify({ a: 1 }))), 'bad-signature');
  });

  test('a missing, repeated or malformed header is refused', () => {
    assert.equal(refusal('github', {}), 'missing-signature');
    assert.equal(refusal('github', { 'x-hub-signature': `sha1=${'0'.repeat(40)}` }), 'missing-signature');
    for (const value of [
      GITHUB_EXAMPLE,
      `sha1=${GITHUB_EXAMPLE}`,
      `sha256=${GITHUB_EXAMPLE.slice(1)}`,
      `sha256=${GITHUB_EXAMPLE}0`,
      `sha256=${GITHUB_EXAMPLE.slice(1)}g`,
      `sha256=${GITHUB_EXAMPLE}, sha256=${GITHUB_EXAMPLE}`,
      '',
    ]) {
      assert.equal(refusal('github', { 'x-hub-signature-256': value }), 'malformed-signature', value);
    }
    const twice = [`sha256=${GITHUB_EXAMPLE}`, `sha256=${GITHUB_EXAMPLE}`];
    assert.equal(refusal('github', { 'x-hub-signature-256': twice }), 'malformed-signature');
  });

  test('an empty secret verifies nothing, not even an HMAC keyed by nothing', () => {
    assert.equal(
      refusal('github', { 'x-hub-signature-256': `sha256=${hmac(BODY, '')}` }, BODY, ''),
      'no-secret',
    );
  });

  test('checkBeforeBody decides on the headers alone, and leaves a well-formed signature to the body', () => {
    assert.deepEqual(checkBeforeBody('github', {}, SECRET), {
      ok: false,
      refusal: 'missing-signature',
      message: 'X-Hub-Signature-256 is missing',
    });
    assert.equal(checkBeforeBody('github', { 'x-hub-signature-256': 'sha256=zz' }, SECRET)?.ok, false);
    assert.equal(
      checkBeforeBody('github', { 'x-hub-signature-256': `sha256=${GITHUB_EXAMPLE}` }, SECRET),
      null,
    );
  });
});

describe('GitLab: X-Gitlab-Token', () => {
  test('the secret itself is accepted, without the body', () => {
    assert.equal(refusal('gitlab', { 'x-gitlab-token': SECRET }), 'ok');
    assert.equal(refusal('gitlab', { 'X-Gitlab-Token': SECRET }, new Uint8Array()), 'ok', 'any case of name');
    assert.deepEqual(checkBeforeBody('gitlab', { 'x-gitlab-token': SECRET }, SECRET), { ok: true });
  });

  test('any other token is refused, whatever its length', () => {
    for (const token of [`${SECRET}x`, SECRET.slice(0, -1), SECRET.toUpperCase(), 'x']) {
      assert.equal(refusal('gitlab', { 'x-gitlab-token': token }), 'bad-signature', token);
      assert.equal(checkBeforeBody('gitlab', { 'x-gitlab-token': token }, SECRET)?.ok, false);
    }
    assert.equal(refusal('gitlab', {}), 'missing-signature');
    assert.equal(refusal('gitlab', { 'x-gitlab-token': '' }), 'malformed-signature');
    assert.equal(
      refusal('gitlab', { 'x-gitlab-token': 'a'.repeat(MAX_TOKEN_LENGTH + 1) }),
      'malformed-signature',
    );
    assert.equal(refusal('gitlab', { 'x-gitlab-token': [SECRET, SECRET] }), 'malformed-signature');
    assert.equal(refusal('gitlab', { 'x-gitlab-token': '' }, BODY, ''), 'no-secret');
    // GitHub's header proves nothing to a GitLab endpoint.
    assert.equal(
      refusal('gitlab', { 'x-hub-signature-256': `sha256=${GITHUB_EXAMPLE}` }),
      'missing-signature',
    );
  });
});

describe('Gitea and Forgejo: X-Gitea-Signature, X-Forgejo-Signature', () => {
  test('the bare hex HMAC of the body verifies under either name', () => {
    assert.equal(refusal('gitea', { 'x-gitea-signature': GITHUB_EXAMPLE }), 'ok');
    assert.equal(refusal('gitea', { 'x-forgejo-signature': GITHUB_EXAMPLE }), 'ok');
    assert.equal(
      refusal('gitea', { 'x-forgejo-signature': GITHUB_EXAMPLE, 'x-gitea-signature': GITHUB_EXAMPLE }),
      'ok',
    );
  });

  test('a wrong Forgejo signature is not rescued by a right Gitea one', () => {
    const wrong = hmac(BODY, 'another secret');
    assert.equal(
      refusal('gitea', { 'x-forgejo-signature': wrong, 'x-gitea-signature': GITHUB_EXAMPLE }),
      'bad-signature',
    );
    const check = verifySignature('gitea', { 'x-forgejo-signature': wrong }, BODY, SECRET);
    assert.ok(!check.ok && check.message.startsWith('X-Forgejo-Signature'));
  });

  test("missing and malformed signatures are refused; GitHub's prefix is not Gitea's form", () => {
    assert.equal(refusal('gitea', {}), 'missing-signature');
    // Gitea sends X-Hub-Signature-256 as well; a Gitea endpoint checks Gitea's header.
    assert.equal(
      refusal('gitea', { 'x-hub-signature-256': `sha256=${GITHUB_EXAMPLE}` }),
      'missing-signature',
    );
    assert.equal(
      refusal('gitea', { 'x-gitea-signature': `sha256=${GITHUB_EXAMPLE}` }),
      'malformed-signature',
    );
    // Gitea sends an empty signature when the webhook has no secret.
    assert.equal(refusal('gitea', { 'x-gitea-signature': '' }), 'malformed-signature');
    assert.equal(
      refusal('gitea', { 'x-gitea-signature': GITHUB_EXAMPLE }, new TextEncoder().encode('x')),
      'bad-signature',
    );
  });
});

test('no refusal message carries the secret or the signature sent', () => {
  const token = 'super-secret-token-value';
  const cases: [HookHost, HeaderSource][] = [
    ['gitlab', { 'x-gitlab-token': `${token}!` }],
    ['github', { 'x-hub-signature-256': `sha256=${hmac(BODY, token)}` }],
    ['gitea', { 'x-gitea-signature': `${hmac(BODY, token)}` }],
  ];
  for (const [host, headers] of cases) {
    const check = verifySignature(host, headers, new TextEncoder().encode('other'), token);
    assert.ok(!check.ok);
    assert.ok(!check.message.includes(token) && !check.message.includes(hmac(BODY, token)), check.message);
  }
});
