import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Finding } from '../../../src/agent/verify/types.ts';
import { valeCheck } from '../../../src/agent/verify/vale-check.ts';
import { repository } from './repository.ts';

/**
 * A style modelled on Vale's Microsoft and Google styles (their rule shapes, not their files):
 * Contractions (substitution), Headings (capitalization), Avoid (existence), Acronyms
 * (conditional), SentenceLength (occurrence), plus Vale's own Repetition, Terms and Avoid from
 * the vocabulary.
 */
const STYLE: Record<string, string> = {
  '.vale.ini': `# Vale configuration
StylesPath = styles
MinAlertLevel = suggestion
Vocab = Docs

[*.{md,mdx}]
BasedOnStyles = Vale, Acme
Acme.Exclamation = NO

[docs/legacy/*]
Acme.Avoid = warning
`,
  'styles/Acme/Contractions.yml': `extends: substitution
message: "Use '%s' instead of '%s'."
link: https://example.com/contractions
level: error
ignorecase: true
action:
  name: replace
swap:
  are not: aren't
  cannot: can't
  do not: don't
  it is: it's
  'log ?in to (\\w+)': sign in to $1
`,
  'styles/Acme/Headings.yml': `extends: capitalization
message: "'%s' should use sentence-style capitalization."
level: warning
scope: heading
match: $sentence
exceptions:
  - API
`,
  'styles/Acme/Avoid.yml': `extends: existence
message: "Don't use '%s': say what happens instead."
level: error
ignorecase: true
tokens:
  - simply
  - easy
`,
  'styles/Acme/Acronyms.yml': `extends: conditional
message: "Spell out '%s', if it's unfamiliar to the audience."
level: suggestion
ignorecase: false
first: '\\b([A-Z]{3,5})\\b'
second: '(?:\\b[A-Z][a-z]+ )+\\(([A-Z]{3,5})\\)'
exceptions:
  - API
  - HTML
`,
  'styles/Acme/SentenceLength.yml': `extends: occurrence
message: "Try to keep sentences short (%s words)."
scope: sentence
level: suggestion
max: 18
token: \\b(\\w+)\\b
`,
  'styles/Acme/Exclamation.yml': `extends: existence
message: "Don't use exclamation points in text."
nonword: true
level: error
tokens:
  - '\\w!(?:\\s|$)'
`,
  'styles/Acme/Lookbehind.yml': `extends: existence
message: "No '%s' after a dollar."
level: error
nonword: true
tokens:
  - '(?<=\\$)money'
`,
  'styles/Acme/Spelling.yml': `extends: spelling
message: "Did you really mean '%s'?"
level: error
`,
  'styles/config/vocabularies/Docs/accept.txt': '# product names\nDocwright\n',
  'styles/config/vocabularies/Docs/reject.txt': 'whitelist\n',
};

const BASE_PAGE = `---
title: Simply the guide
---

# Getting started

This line was here before: you simply do not touch it.
`;

const summary = (findings: Finding[]) => findings.map((f) => [f.line, f.rule, f.level]);

describe('Vale styles', () => {
  test('each rule type on the changed lines only, with its level, message and link; code and front matter skipped', async () => {
    const head = `${BASE_PAGE}
## Install The Tool

It is easy. You cannot log in to GitHub here!
Keep the the docwright whitelist short.
Use the NASA tools, then the National Aeronautics Agency (NAA) and NAA tools and the API.
This sentence is far too long because it keeps going on and on and on without an end in sight.
Code is skipped: \`simply do not\` and

\`\`\`bash
echo "it is simply easy"
\`\`\`
`;
    const { input } = await repository({ ...STYLE, 'docs/page.md': BASE_PAGE }, { 'docs/page.md': head });
    const check = valeCheck();
    assert.equal(check.name, 'style');
    const outcome = await check.run(input('head'));
    const lines = head.split('\n');
    const at = (text: string) => lines.findIndex((l) => l.includes(text)) + 1;
    assert.deepEqual(
      summary(outcome.findings),
      [
        [at('## Install'), 'Acme.Headings', 'warning'],
        [at('It is easy'), 'Acme.Avoid', 'error'],
        [at('It is easy'), 'Acme.Contractions', 'error'],
        [at('It is easy'), 'Acme.Contractions', 'error'],
        [at('It is easy'), 'Acme.Contractions', 'error'],
        [at('the the'), 'Vale.Avoid', 'error'],
        [at('the the'), 'Vale.Repetition', 'error'],
        [at('the the'), 'Vale.Terms', 'error'],
        [at('NASA'), 'Acme.Acronyms', 'suggestion'],
        [at('too long'), 'Acme.SentenceLength', 'suggestion'],
      ],
      JSON.stringify(outcome.findings, null, 1),
    );
    const message = (rule: string) => outcome.findings.filter((f) => f.rule === rule).map((f) => f.message);
    assert.deepEqual(message('Acme.Contractions').sort(), [
      "Use 'can't' instead of 'cannot'. (Vale Acme.Contractions, https://example.com/contractions)",
      "Use 'it's' instead of 'It is'. (Vale Acme.Contractions, https://example.com/contractions)",
      "Use 'sign in to GitHub' instead of 'log in to GitHub'. (Vale Acme.Contractions, https://example.com/contractions)",
    ]);
    assert.deepEqual(message('Acme.Headings'), [
      "'Install The Tool' should use sentence-style capitalization. (Vale Acme.Headings)",
    ]);
    assert.deepEqual(message('Acme.Avoid'), [
      "Don't use 'easy': say what happens instead. (Vale Acme.Avoid)",
    ]);
    assert.deepEqual(message('Vale.Terms'), ["Use 'Docwright' instead of 'docwright'. (Vale Vale.Terms)"]);
    assert.deepEqual(message('Vale.Repetition'), [`"the the": 'the' is repeated! (Vale Vale.Repetition)`]);
    assert.deepEqual(message('Acme.Acronyms'), [
      "Spell out 'NASA', if it's unfamiliar to the audience. (Vale Acme.Acronyms)",
    ]);
    assert.deepEqual(message('Acme.SentenceLength'), [
      'Try to keep sentences short (20 words). (Vale Acme.SentenceLength)',
    ]);
    for (const finding of outcome.findings) assert.equal(finding.path, 'docs/page.md');
    assert.deepEqual(outcome.counts, { pages: 1, rules: 8 });
    assert.deepEqual(
      outcome.notes?.filter((n) => n.startsWith('Vale rule')),
      [
        'Vale rule Acme.Lookbehind is not applied: its pattern is not RE2 (error parsing regexp: invalid named capture: `(?<=\\$)money)`)',
        'Vale rule types docwright does not apply: spelling (Acme.Spelling, Vale.Spelling)',
      ],
    );

    // The base: the lines the run changed did not exist; nothing there.
    assert.deepEqual((await check.run(input('base'))).findings, []);
  });

  test('per-section settings: a rule turned to warning under docs/legacy; MinAlertLevel drops suggestions', async () => {
    const page = 'You simply NASA.\n';
    const { input } = await repository(
      {
        ...STYLE,
        '.vale.ini': STYLE['.vale.ini']!.replace('MinAlertLevel = suggestion', 'MinAlertLevel = warning'),
      },
      { 'docs/legacy/old.md': page, 'docs/new.mdx': page },
    );
    const outcome = await valeCheck().run(input('head'));
    assert.deepEqual(summary(outcome.findings), [
      [1, 'Acme.Avoid', 'warning'],
      [1, 'Acme.Avoid', 'error'],
    ]);
    assert.deepEqual(
      outcome.findings.map((f) => f.path),
      ['docs/legacy/old.md', 'docs/new.mdx'],
    );
  });

  test('MDX: JSX attributes, expressions and imports are not prose; the text inside components is', async () => {
    const { input } = await repository(STYLE, {
      'docs/a.mdx': `import { Easy } from '/snippets/easy.mdx';

<Tip title="simply easy">This is simply done.</Tip>

{/* simply a comment */}
`,
    });
    const outcome = await valeCheck().run(input('head'));
    assert.deepEqual(summary(outcome.findings), [[3, 'Acme.Avoid', 'error']]);
    assert.match(outcome.findings[0]!.message, /'simply'/);
  });

  test('a rewritten line whose alert was already there is found on both sides, with the same message', async () => {
    const { input } = await repository(
      { ...STYLE, 'docs/a.md': 'Old words, simply put.\n' },
      { 'docs/a.md': 'New words, simply put.\n' },
    );
    const check = valeCheck();
    const head = await check.run(input('head'));
    const base = await check.run(input('base'));
    assert.equal(head.findings.length, 1);
    assert.deepEqual(
      base.findings.map((f) => [f.message, f.rule, f.path]),
      head.findings.map((f) => [f.message, f.rule, f.path]),
    );
  });

  test('inline comments in .vale.ini, and TokenIgnores, as Vale reads them', async () => {
    const ini = `StylesPath = styles # where the styles are
[*.md]
BasedOnStyles = Acme # ours
TokenIgnores = (\\{\\{[^}]*\\}\\})
Acme.SentenceLength = NO ; too strict
`;
    const { input } = await repository(
      { ...STYLE, '.vale.ini': ini },
      { 'docs/a.md': 'Fill in {{simply}} here, simply.\n' },
    );
    const outcome = await valeCheck().run(input('head'));
    assert.deepEqual(
      outcome.findings.map((f) => [f.rule, f.message.slice(0, 22)]),
      [['Acme.Avoid', "Don't use 'simply': sa"]],
    );
  });

  test('vale off/on and Style.Rule = NO comments switch rules off where they say, in Markdown and MDX', async () => {
    const { input } = await repository(STYLE, {
      'docs/a.md': `Simply one.

<!-- vale off -->
Simply two.
<!-- vale on -->

<!-- vale Acme.Avoid = NO -->
Simply three, it is.
<!-- vale Acme.Avoid = YES -->
Simply four.
`,
      'docs/b.mdx': `{/* vale Acme = NO */}
Simply five, it is.

{/* vale Acme = YES */}
Simply six.
`,
    });
    const outcome = await valeCheck().run(input('head'));
    assert.deepEqual(
      outcome.findings.map((f) => [f.path, f.line, f.rule]),
      [
        ['docs/a.md', 1, 'Acme.Avoid'],
        ['docs/a.md', 8, 'Acme.Contractions'],
        ['docs/a.md', 10, 'Acme.Avoid'],
        ['docs/b.mdx', 5, 'Acme.Avoid'],
      ],
    );
  });

  test('a page full of alerts and unclosed comments: at most 200 findings, errors first, in bounded time', async () => {
    const page = `${'Simply the the it is. '.repeat(3_000)}\n${'<!-- vale '.repeat(20_000)}\n`;
    const { input } = await repository(STYLE, { 'docs/a.md': page });
    const started = Date.now();
    const outcome = await valeCheck().run(input('head'));
    assert.ok(Date.now() - started < 20_000, `${Date.now() - started} ms`);
    assert.equal(outcome.findings.length, 200);
    assert.ok(outcome.findings.every((f) => f.level === 'error'));
  });

  test('no .vale.ini: skipped', async () => {
    const { input } = await repository({}, { 'docs/a.md': 'Simply.\n' });
    assert.deepEqual(await valeCheck().run(input('head')), {
      findings: [],
      skipped: 'no .vale.ini in the repository',
    });
  });

  test('a pattern that would backtrack for ever in a backtracking engine runs in linear time', async () => {
    const { input } = await repository(
      {
        ...STYLE,
        'styles/Acme/Slow.yml': "extends: existence\nmessage: x\nnonword: true\ntokens:\n  - '(a+)+b'\n",
      },
      { 'docs/a.md': `${'a'.repeat(50_000)}c\n` },
    );
    const started = Date.now();
    await valeCheck().run(input('head'));
    assert.ok(Date.now() - started < 5_000, `${Date.now() - started} ms`);
  });
});
