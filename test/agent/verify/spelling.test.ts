import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { spellingCheck } from '../../../src/agent/verify/spelling.ts';
import { temporaryDirectory } from '../../helpers/temp.ts';
import { repository } from './repository.ts';

const CONFIG = JSON.stringify({
  // cspell.json accepts comments: this one must parse.
  version: '0.2',
  words: ['Acmecorp'],
  dictionaryDefinitions: [{ name: 'team-terms', path: './dictionaries/team.txt', addWords: true }],
  dictionaries: ['team-terms'],
  flagWords: ['utilize'],
});

const PAGE = `---
title: Getting started
sidebarTitel: Start
---

# Overview

This line was already here and says recieve.
`;

describe('spelling with cspell', () => {
  test('a misspelt word on a changed line is an error with a suggestion; the same on an unchanged line is not', async () => {
    const changedPage = `${PAGE}
Acmecorp ships Zyntrix, which we wrote about.
This new line says recieve, and wrold too.
Code is not prose: \`wrold\` and [a link](https://example.com/wroldpage) are skipped.

\`\`\`bash
echo recieve wrold
\`\`\`
`;
    const { input } = await repository(
      {
        'cspell.json': `// the team's settings\n${CONFIG}`,
        'dictionaries/team.txt': '# product names\nZyntrix\n',
        'docs/page.md': PAGE,
      },
      { 'docs/page.md': changedPage },
    );
    const check = spellingCheck();
    assert.equal(check.name, 'spelling');
    const outcome = await check.run(input('head'));
    const lines = changedPage.split('\n');
    const at = (word: string) => lines.findIndex((l) => l.includes(word) && !l.includes('already')) + 1;
    assert.deepEqual(
      outcome.findings.map((f) => [f.line, f.level, f.rule, f.path]),
      [
        [at('This new line'), 'error', 'cspell', 'docs/page.md'],
        [at('This new line'), 'error', 'cspell', 'docs/page.md'],
      ],
      JSON.stringify(outcome.findings),
    );
    assert.match(
      outcome.findings[0]!.message,
      /^unknown word "recieve" \(cspell, configured in cspell\.json\): did you mean "receive"/,
    );
    assert.match(outcome.findings[1]!.message, /^unknown word "wrold" .*did you mean .*"world"/);
    assert.equal(outcome.counts?.pages, 1);

    // The base: the same page before the run has nothing on the lines the run changed.
    const base = await check.run(input('base'));
    assert.deepEqual(base.findings, []);
  });

  test('a word rewritten on a changed line that was already misspelt is found on both sides (preexisting)', async () => {
    const { input } = await repository(
      {
        '.cspell.json': CONFIG,
        'dictionaries/team.txt': '',
        'docs/page.mdx': `${PAGE}\nOld text with wrold.\n`,
      },
      { 'docs/page.mdx': `${PAGE}\nNew text with wrold.\n` },
    );
    const check = spellingCheck();
    const head = await check.run(input('head'));
    const base = await check.run(input('base'));
    assert.equal(head.findings.length, 1);
    assert.equal(base.findings.length, 1);
    assert.equal(head.findings[0]!.message, base.findings[0]!.message);
  });

  test('flagWords are forbidden; front matter values are checked, keys are not', async () => {
    const { input } = await repository(
      { 'cspell.json': CONFIG, 'dictionaries/team.txt': '' },
      { 'docs/new.md': '---\ntitle: Getting startd\nsidebarTitel: x\n---\n\nWe utilize it.\n' },
    );
    const outcome = await spellingCheck().run(input('head'));
    assert.deepEqual(
      outcome.findings.map((f) => [f.line, f.message.split(' (')[0]]),
      [
        [2, 'unknown word "startd"'],
        [6, '"utilize" is a forbidden word'],
      ],
    );
  });

  test('the settings of .vscode/settings.json (cSpell.words) are used when there is no cspell file', async () => {
    const { input } = await repository(
      { '.vscode/settings.json': '{\n  // editor\n  "cSpell.words": ["Frobnitz"],\n}\n' },
      { 'docs/a.md': 'Frobnitz and Qwzzyx.\n' },
    );
    const outcome = await spellingCheck().run(input('head'));
    assert.deepEqual(
      outcome.findings.map((f) => f.message.slice(0, 22)),
      ['unknown word "Qwzzyx" '],
    );
  });

  test('no configuration: skipped; a configuration that is a program: skipped, never run', async () => {
    const none = await repository({}, { 'docs/a.md': 'Wrold.\n' });
    assert.match((await spellingCheck().run(none.input('head'))).skipped ?? '', /no cspell configuration/);
    const marker = path.join(temporaryDirectory('docwright-spelling-marker-'), 'ran');
    const program = await repository(
      {
        'cspell.config.js': `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x'); module.exports = {};`,
      },
      { 'docs/a.md': 'Wrold.\n' },
    );
    const outcome = await spellingCheck().run(program.input('head'));
    assert.match(outcome.skipped ?? '', /cspell\.config\.js is a program, which docwright does not run/);
    assert.deepEqual(outcome.findings, []);
    await assert.rejects(import('node:fs/promises').then((fs) => fs.access(marker)));
  });
});
