import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRepository } from '../../src/projects/repository.ts';

test('repository URLs are normalised and their host detected', () => {
  const cases: [string, string, string | undefined][] = [
    ['https://github.com/acme/docs', 'https://github.com/acme/docs', 'github'],
    ['https://github.com/acme/docs.git', 'https://github.com/acme/docs', 'github'],
    ['https://github.com/acme/docs/', 'https://github.com/acme/docs', 'github'],
    ['https://gitlab.com/group/sub/docs', 'https://gitlab.com/group/sub/docs', 'gitlab'],
    ['https://codeberg.org/a/b', 'https://codeberg.org/a/b', 'gitea'],
    ['https://git.example.com/a/b', 'https://git.example.com/a/b', undefined],
    ['http://127.0.0.1:3000/a/b', 'http://127.0.0.1:3000/a/b', undefined],
    ['http://gitea:3000/a/b', 'http://gitea:3000/a/b', undefined],
    ['http://10.1.2.3/a/b', 'http://10.1.2.3/a/b', undefined],
    ['/srv/repos/docs', 'file:///srv/repos/docs', 'local'],
    ['file:///srv/repos/docs/', 'file:///srv/repos/docs', 'local'],
  ];
  for (const [input, url, host] of cases) {
    assert.deepEqual(parseRepository(input), { url, detectedHost: host }, input);
  }
  assert.deepEqual(parseRepository('./docs', '/work'), { url: 'file:///work/docs', detectedHost: 'local' });
});

test('bad repository values get a precise reason', () => {
  const cases: [string, RegExp][] = [
    ['', /empty/],
    ['ftp://example.com/a/b', /unsupported scheme ftp/],
    ['http://github.com/a/b', /http is allowed only/],
    ['http://8.8.8.8/a/b', /http is allowed only/],
    ['https://user:pass@github.com/a/b', /credentials/],
    ['https://github.com/only-owner', /owner\/name/],
    ['https://github.com/a/b?x=1', /query/],
    ['file://server/share/repo', /this machine/],
    ['~/docs', /absolute path/],
    ['not a url', /https:\/\//],
  ];
  for (const [input, reason] of cases) {
    const result = parseRepository(input);
    assert.ok('error' in result, input);
    assert.match(result.error, reason, input);
  }
});
