/**
 * No credential leaves its origin (docs/security.mdx): a code host's API that redirects to
 * another origin gets the redirect refused, with an error naming both origins, on every host —
 * whoever the repository is for (the project's own or a context repository: both are built by
 * `createHost`). Two loopback servers: the "API" that redirects, and the other origin, which
 * records every request it receives and whether it carried a credential.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { classifyGitError } from '../../src/git/checkout.ts';
import { HostError } from '../../src/git/hosts/host.ts';
import { createHost, gitAccess } from '../../src/git/hosts/index.ts';
import { carriesCredentials } from '../../src/git/hosts/redirects.ts';
import { listRemoteRefs } from '../../src/git/remote-refs.ts';

const TOKEN = 'glpat-redirectSecret12345';
const FAST = { retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 10 } };

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
}

const JSON_ANSWER = JSON.stringify({ default_branch: 'trunk' });

function listen(
  handler: (url: string, headers: IncomingHttpHeaders) => { status: number; location?: string },
) {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const { status, location } = handler(request.url ?? '/', request.headers);
      response.writeHead(status, {
        'content-type': 'application/json',
        ...(location ? { location } : {}),
      });
      response.end(status === 200 ? JSON_ANSWER : '{}');
    });
  });
  return new Promise<Server>((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const originOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

/** Whether a request handed over the token in any header or in its URL. */
const sawToken = (seen: Seen) =>
  seen.url.includes(TOKEN) || Object.values(seen.headers).some((value) => String(value).includes(TOKEN));

describe('host API redirects', () => {
  let api: Server;
  let other: Server;
  /** Where the API sends its requests: another origin, or a path of its own. */
  let redirectTo: 'other' | 'same' | 'none' = 'other';
  const atOther: Seen[] = [];
  const atApi: Seen[] = [];

  before(async () => {
    other = await listen((url, headers) => {
      atOther.push({ url, headers });
      return { status: 200 };
    });
    api = await listen((url, headers) => {
      atApi.push({ url, headers });
      if (url.startsWith('/moved/') || redirectTo === 'none') return { status: 200 };
      const location = redirectTo === 'other' ? `${originOf(other)}${url}` : `/moved${url}`;
      return { status: 302, location };
    });
  });
  after(async () => {
    api.closeAllConnections();
    other.closeAllConnections();
    await Promise.all([api, other].map((s) => new Promise((resolve) => s.close(resolve))));
  });
  beforeEach(() => {
    atOther.length = 0;
    atApi.length = 0;
    redirectTo = 'other';
  });

  const hostOf = (kind: 'github' | 'gitlab' | 'gitea', token = TOKEN) =>
    createHost(
      { host: kind, repository: `https://code.example/acme/widgets`, apiUrl: originOf(api) },
      { token },
      FAST,
    );

  for (const kind of ['github', 'gitlab', 'gitea'] as const) {
    test(`${kind}: a redirect to another origin is refused, naming both, and the other origin gets nothing`, async () => {
      const error = await hostOf(kind)
        .defaultBranch()
        .then(
          () => assert.fail('expected the redirect to be refused'),
          (e: unknown) => e,
        );
      assert.ok(error instanceof HostError, String(error));
      assert.ok(error.message.includes(`${originOf(api)} redirected to another origin, ${originOf(other)}`));
      assert.match(error.message, /carries credentials/);
      assert.ok(!error.message.includes(TOKEN));
      assert.equal(error.retryable, false);
      assert.equal(atApi.length, 1, 'a refused redirect is not tried again');
      assert.ok(sawToken(atApi[0]!), 'the API itself did get the credential');
      assert.deepEqual(atOther.filter(sawToken), [], 'the other origin received the credential');
      assert.equal(atOther.length, 0);
    });

    test(`${kind}: a redirect within the API's origin is followed, with the credential`, async () => {
      redirectTo = 'same';
      assert.equal(await hostOf(kind).defaultBranch(), 'trunk');
      assert.equal(atApi.length, 2);
      assert.ok(atApi[1]!.url.startsWith('/moved/') && sawToken(atApi[1]!));
    });
  }

  test('git: the repository redirecting to another origin does not hand it the credential', async () => {
    const host = createHost(
      { host: 'gitlab', repository: `${originOf(api)}/acme/widgets`, apiUrl: null },
      { token: TOKEN },
      FAST,
    );
    const access = await gitAccess(host);
    const failure = await listRemoteRefs(access.url, [], { env: access.env, timeoutMs: 30_000 }).then(
      () => assert.fail('expected git to refuse the redirect'),
      (error: unknown) => classifyGitError(error),
    );
    assert.ok(failure instanceof HostError, String(failure));
    assert.equal(failure.code, 'repository-not-found');
    assert.match(failure.message, /returned error: 302.*follows no redirect with credentials/);
    assert.match(String(atApi[0]?.headers.authorization), /^Basic /, 'git sent the credential to its origin');
    assert.deepEqual(
      atOther.filter((seen) => seen.headers.authorization !== undefined || sawToken(seen)),
      [],
      'the other origin received the credential',
    );
  });

  test('a request without credentials may follow a redirect to another origin', async () => {
    assert.equal(await hostOf('gitlab', '').defaultBranch(), 'trunk');
    assert.equal(atOther.length, 1);
  });

  test('what counts as a credential: token headers of every host, tokens in the query or the URL', () => {
    const url = new URL('https://api.example/x');
    assert.equal(carriesCredentials(url, { accept: 'application/json', 'user-agent': 'docwright' }), false);
    assert.equal(carriesCredentials(url, { 'x-github-api-version': '2022-11-28' }), false);
    for (const name of ['authorization', 'private-token', 'job-token', 'cookie', 'x-api-key']) {
      assert.equal(carriesCredentials(url, { [name]: 'v' }), true, name);
    }
    assert.equal(carriesCredentials(new URL('https://api.example/x?private_token=t'), {}), true);
    assert.equal(carriesCredentials(new URL('https://api.example/x?access_token=t'), {}), true);
    assert.equal(carriesCredentials(new URL('https://u:p@api.example/x'), {}), true);
  });
});
