// An ask job's answer as the job page renders it (src/dashboard/markdown.ts): a model's Markdown
// as safe HTML, whatever it holds, in time bounded by its length.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { markdownHtml } from '../../src/dashboard/markdown.ts';

const render = (text: string) => markdownHtml(text).value;

test('paragraphs, lists, code, bold and web links render; headings become bold paragraphs', () => {
  assert.equal(
    render(
      '# Limits\n\nThe API allows **100** `jobs`, see [rate limits](https://example.com/r).\nSecond line.\n\n- one\n- two\n  continued\n\n3. three\n4. four\n\n```ts\nconst a = 1 < 2;\n```',
    ),
    '<p><strong>Limits</strong></p>' +
      '<p>The API allows <strong>100</strong> <code>jobs</code>, see <a href="https://example.com/r" rel="noreferrer">rate limits</a>.<br>Second line.</p>' +
      '<ul><li>one</li><li>two<br>continued</li></ul>' +
      '<ol start="3"><li>three</li><li>four</li></ol>' +
      '<pre><code>const a = 1 &lt; 2;</code></pre>',
  );
});

test('raw HTML stays text; a javascript: link is no link', () => {
  const hostile = render(
    '<script>alert(1)</script>\n\n[click](javascript:alert(1)) <img src=x onerror=alert(1)> [x](https://a.example/"onmouseover="y)',
  );
  assert.doesNotMatch(hostile, /<script|<img|href="javascript|"onmouseover/);
  assert.match(hostile, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  assert.match(hostile, /\[click\]\(javascript:alert\(1\)\)/);
});

test('inputs that make CommonMark parsers take seconds render at once', () => {
  const cases = [
    '*_'.repeat(10_000),
    '>'.repeat(20_000),
    '[a]('.repeat(5_000),
    '['.repeat(20_000),
    '**a'.repeat(7_000),
    `# ${' '.repeat(20_000)}x`,
    '```\n'.repeat(5_000),
    Array.from({ length: 2_000 }, (_, i) => `${' '.repeat(i % 10)}- x`).join('\n'),
    `${'`a'.repeat(1_000)}\n`.repeat(10),
  ];
  for (const text of cases) {
    const started = performance.now();
    render(text);
    const ms = performance.now() - started;
    assert.ok(ms < 200, `${JSON.stringify(text.slice(0, 12))}…: ${Math.round(ms)} ms`);
  }
});
