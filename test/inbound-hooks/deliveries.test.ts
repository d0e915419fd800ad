import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { deliveryIdOf, eventOf, MAX_DELIVERY_ID_LENGTH } from '../../src/inbound-hooks/deliveries.ts';

const BODY = new TextEncoder().encode('{"ref":"refs/heads/main"}');
const digest = (body: Uint8Array) => `sha256:${createHash('sha256').update(body).digest('hex')}`;
const UUID = 'f6266f16-1bf3-46a5-9ea4-602e06ead473';

describe('delivery ids', () => {
  test("each host's own header", () => {
    assert.equal(deliveryIdOf('github', { 'x-github-delivery': UUID }, BODY), UUID);
    assert.equal(deliveryIdOf('gitea', { 'x-gitea-delivery': UUID }, BODY), UUID);
    assert.equal(
      deliveryIdOf('gitea', new Headers({ 'X-Forgejo-Delivery': UUID, 'X-Gitea-Delivery': 'other' }), BODY),
      UUID,
    );
    assert.equal(deliveryIdOf('gitlab', { 'idempotency-key': UUID }, BODY), UUID);
  });

  test('GitLab: Idempotency-Key first, then X-Gitlab-Event-UUID with the body, never the per-attempt X-Gitlab-Webhook-UUID', () => {
    const headers = {
      'idempotency-key': 'key-1',
      'x-gitlab-event-uuid': 'event-1',
      'x-gitlab-webhook-uuid': 'attempt-1',
    };
    assert.equal(deliveryIdOf('gitlab', headers, BODY), 'key-1');
    const older = { 'x-gitlab-event-uuid': 'event-1', 'x-gitlab-webhook-uuid': 'attempt-1' };
    const id = deliveryIdOf('gitlab', older, BODY);
    assert.equal(id, `event-1:${digest(BODY).slice('sha256:'.length, 'sha256:'.length + 16)}`);
    assert.equal(
      deliveryIdOf('gitlab', { ...older, 'x-gitlab-webhook-uuid': 'attempt-2' }, BODY),
      id,
      'a retry',
    );
    const otherEvent = new TextEncoder().encode('{"object_kind":"note"}');
    assert.notEqual(deliveryIdOf('gitlab', older, otherEvent), id, 'another event of the same request');
    assert.equal(deliveryIdOf('gitlab', { 'x-gitlab-webhook-uuid': 'attempt-1' }, BODY), digest(BODY));
    assert.equal(deliveryIdOf('github', { 'x-gitlab-event-uuid': 'event-1' }, BODY), digest(BODY));
  });

  test("another host's header does not count", () => {
    assert.equal(deliveryIdOf('github', { 'x-gitea-delivery': UUID }, BODY), digest(BODY));
  });

  test("without a usable id, the body's digest: the same body is the same delivery", () => {
    const other = new TextEncoder().encode('{"ref":"refs/heads/dev"}');
    assert.equal(deliveryIdOf('github', {}, BODY), digest(BODY));
    assert.equal(deliveryIdOf('github', {}, BODY), deliveryIdOf('github', {}, new Uint8Array(BODY)));
    assert.notEqual(deliveryIdOf('github', {}, BODY), deliveryIdOf('github', {}, other));
    for (const bad of ['', 'has space', 'x'.repeat(MAX_DELIVERY_ID_LENGTH + 1), 'tab\there', 'ü']) {
      assert.equal(
        deliveryIdOf('github', { 'x-github-delivery': bad }, BODY),
        digest(BODY),
        JSON.stringify(bad),
      );
    }
    assert.equal(deliveryIdOf('github', { 'x-github-delivery': [UUID, 'b'] }, BODY), digest(BODY));
    assert.equal(
      deliveryIdOf('github', { 'x-github-delivery': 'x'.repeat(MAX_DELIVERY_ID_LENGTH) }, BODY).length,
      200,
    );
  });
});

describe('event types', () => {
  test("each host's own header, Forgejo's name first", () => {
    assert.equal(eventOf('github', { 'x-github-event': 'pull_request' }), 'pull_request');
    assert.equal(eventOf('gitlab', { 'x-gitlab-event': 'Merge Request Hook' }), 'Merge Request Hook');
    assert.equal(eventOf('gitea', { 'x-gitea-event': 'push' }), 'push');
    assert.equal(
      eventOf('gitea', { 'x-forgejo-event': 'pull_request', 'x-gitea-event': 'push' }),
      'pull_request',
    );
  });

  test('absent, empty, over-long or odd values are none', () => {
    assert.equal(eventOf('github', {}), null);
    assert.equal(eventOf('github', { 'x-gitlab-event': 'Push Hook' }), null);
    for (const bad of ['', ' ', 'x'.repeat(101), 'new\nline', 'é']) {
      assert.equal(eventOf('github', { 'x-github-event': bad }), null, JSON.stringify(bad));
    }
  });
});
