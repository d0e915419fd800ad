// The pure parts of the Slack app: a mention's prompt, question detection, the slash command's
// words, the v0 signature (checked against the double's own signer), and the status wording.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createBodyFor } from '../../src/conversations/slack/job-request.ts';
import {
  isQuestion,
  mentionPrompt,
  parseSlashCommand,
  threadOf,
} from '../../src/conversations/slack/mentions.ts';
import { verifySlackSignature } from '../../src/conversations/slack/signature.ts';
import { howToLinkText, statusText } from '../../src/conversations/slack/status-text.ts';
import { signSlackRequest } from '../doubles/slack-api.ts';

const PROJECT = 'prj_01hzx5q7n3k2m4p6r8t0v2w4y6';

describe('mentions', () => {
  test('the app’s mention is removed wherever it is; other mentions and links stay; escapes undone', () => {
    assert.equal(mentionPrompt('<@UBOT> document the --force flag', 'UBOT'), 'document the --force flag');
    assert.equal(
      mentionPrompt('please <@UBOT|docwright> fix &lt;Card&gt; &amp; tabs', 'UBOT'),
      'please fix <Card> & tabs',
    );
    assert.equal(
      mentionPrompt('<@UBOT> ask <@U0BOB> about <https://x.test/a|this>', 'UBOT'),
      'ask <@U0BOB> about <https://x.test/a|this>',
    );
    assert.equal(mentionPrompt('<@UOTHER> tidy the intro', undefined), 'tidy the intro');
    assert.equal(mentionPrompt('<@UBOT>', 'UBOT'), '');
  });

  test('a question ends with ? (past closing quotes and spaces); anything else is an instruction', () => {
    for (const q of [
      'How do I rotate keys?',
      'Where is `serve` documented? ',
      'what does "force" do?"',
      '設定は？',
    ]) {
      assert.equal(isQuestion(q), true, q);
    }
    for (const s of ['Document the ? operator', 'Fix the typo.', '?', '', 'Why? Explain it.']) {
      assert.equal(isQuestion(s), false, s);
    }
  });

  test('the create body carries the prompt; a question is an ask', () => {
    assert.deepEqual(createBodyFor('Fix the typo'), { prompt: 'Fix the typo' });
    assert.deepEqual(createBodyFor('How do I rotate keys?'), {
      prompt: 'How do I rotate keys?',
      mode: 'ask',
    });
  });

  test('the thread is the message’s own thread, or the one it starts', () => {
    assert.equal(threadOf({ ts: '1.2' }), '1.2');
    assert.equal(threadOf({ ts: '1.3', thread_ts: '1.2' }), '1.2');
  });

  test('slash command words', () => {
    assert.deepEqual(parseSlashCommand(''), { action: 'help' });
    assert.deepEqual(parseSlashCommand(' help '), { action: 'help' });
    assert.deepEqual(parseSlashCommand(`link ${PROJECT}`), { action: 'link', projectId: PROJECT });
    assert.deepEqual(parseSlashCommand(`LINK ${PROJECT.toUpperCase()}`), {
      action: 'link',
      projectId: PROJECT,
    });
    assert.deepEqual(parseSlashCommand('unlink'), { action: 'unlink' });
    assert.equal(parseSlashCommand('link nope').action, 'invalid');
    assert.equal(parseSlashCommand(`link ${PROJECT} extra`).action, 'invalid');
    assert.equal(parseSlashCommand('dance').action, 'invalid');
  });
});

describe('v0 signature', () => {
  const secret = 'slack-signing-secret-0123456789abcdef';
  const body = Buffer.from('{"type":"event_callback"}');
  const now = new Date();
  const headers = signSlackRequest(secret, body.toString(), Math.floor(now.getTime() / 1000));
  const request = (over: Partial<{ timestamp: string; signature: string; body: Uint8Array }> = {}) => ({
    timestamp: headers['x-slack-request-timestamp'],
    signature: headers['x-slack-signature'],
    body,
    ...over,
  });

  test('Slack’s signature verifies; another secret, body or timestamp does not', () => {
    assert.deepEqual(verifySlackSignature(secret, request(), now), { ok: true });
    assert.equal(verifySlackSignature(`${secret}x`, request(), now).ok, false);
    assert.equal(verifySlackSignature(secret, request({ body: Buffer.from('{}') }), now).ok, false);
    const later = String(Number(headers['x-slack-request-timestamp']) + 1);
    assert.equal(verifySlackSignature(secret, request({ timestamp: later }), now).ok, false);
  });

  test('a timestamp more than five minutes away is refused, however well signed', () => {
    const old = Math.floor(now.getTime() / 1000) - 301;
    const signed = signSlackRequest(secret, body.toString(), old);
    const check = verifySlackSignature(
      secret,
      { timestamp: signed['x-slack-request-timestamp'], signature: signed['x-slack-signature'], body },
      now,
    );
    assert.deepEqual(check, {
      ok: false,
      reason: 'X-Slack-Request-Timestamp is more than five minutes away',
    });
    const inside = signSlackRequest(secret, body.toString(), old + 2);
    assert.equal(
      verifySlackSignature(
        secret,
        { timestamp: inside['x-slack-request-timestamp'], signature: inside['x-slack-signature'], body },
        now,
      ).ok,
      true,
    );
  });

  test('missing or malformed headers are refused', () => {
    assert.equal(verifySlackSignature(secret, request({ signature: 'v1=abc' }), now).ok, false);
    assert.equal(
      verifySlackSignature(secret, { timestamp: undefined, signature: undefined, body }, now).ok,
      false,
    );
    assert.equal(verifySlackSignature(secret, request({ timestamp: 'soon' }), now).ok, false);
  });
});

describe('status wording', () => {
  const base = { id: 'job_01', prLink: null, summary: null, error: null } as const;
  test('working, pull request, no change needed, failure, answer, cancelled', () => {
    assert.match(
      statusText({ ...base, status: 'active' }, 'https://dw.test/projects/p/jobs/job_01'),
      /Working on it… \(<https:\/\/dw\.test\/projects\/p\/jobs\/job_01\|job_01>\)/,
    );
    assert.match(
      statusText(
        { ...base, status: 'completed', prLink: 'https://git.test/o/d/pull/3', summary: 'Added <flag> docs' },
        null,
      ),
      /Pull request ready: <https:\/\/git\.test\/o\/d\/pull\/3\|https:\/\/git\.test\/o\/d\/pull\/3>\nAdded &lt;flag&gt; docs/,
    );
    assert.match(
      statusText({ ...base, status: 'completed', summary: 'Already documented.' }, null),
      /No change needed: Already documented\. \(job_01\)/,
    );
    assert.match(
      statusText(
        { ...base, status: 'failed', error: { code: 'model-error', message: 'the model said no' } },
        null,
      ),
      /Failed \(`model-error`\): the model said no/,
    );
    assert.match(
      statusText(
        {
          ...base,
          status: 'completed',
          answer: 'Use `key rotate`.',
          citations: [{ path: 'keys.mdx', startLine: 3, endLine: 9 }],
        },
        null,
      ),
      /Use `key rotate`\.\n• `keys.mdx` lines 3–9/,
    );
    assert.match(statusText({ ...base, status: 'archived' }, null), /Cancelled/);
  });

  test('the how-to-link reply names the slash command and the CLI with the channel', () => {
    const text = howToLinkText('C0DOCS');
    assert.match(text, /\/docwright link prj_…/);
    assert.match(text, /docwright slack link --project prj_… --channel C0DOCS/);
  });
});
