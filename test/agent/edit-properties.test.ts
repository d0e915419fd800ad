/**
 * Properties of edit matching (src/agent/edit/), checked on generated pages with fast-check:
 * a tolerated edit lands exactly where and as the correct edit would, or is refused; it never
 * reaches past the lines old_string covers; and a block that reads the same elsewhere once
 * slips are tolerated makes the edit a refusal, never a guess.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { applyEdits, planEdit } from '../../src/agent/edit/plan.ts';

const WORDS = [
  'alpha',
  'beta',
  'café',
  'naïve',
  'it’s',
  'don’t',
  '“quoted”',
  "it's",
  '"plain"',
  'x',
  '-',
  '<Tag>',
  '{1}',
];

interface PageLine {
  depth: number;
  words: string[];
  trailing: string;
  blank: boolean;
}

const pageLine = fc.record({
  depth: fc.integer({ min: 0, max: 3 }),
  words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }),
  trailing: fc.constantFrom('', '', '', ' ', '  ', '\t'),
  blank: fc.oneof({ arbitrary: fc.constant(false), weight: 3 }, { arbitrary: fc.constant(true), weight: 1 }),
});

/** A page: its lines, how it indents and ends lines, and its Unicode form. */
const page = fc.record({
  lines: fc.array(pageLine, { minLength: 4, maxLength: 14 }),
  tabs: fc.boolean(),
  crlf: fc.boolean(),
  nfd: fc.boolean(),
});

type Page =
  fc.Arbitrary<unknown> extends never
    ? never
    : {
        lines: PageLine[];
        tabs: boolean;
        crlf: boolean;
        nfd: boolean;
      };

/** Line i as the page has it (ids make every line unique, so the window is). */
function render(p: Page, line: PageLine, id: number | null): string {
  if (line.blank) return line.trailing.replace('\t', ' ');
  const indent = p.tabs ? '\t'.repeat(line.depth) : '  '.repeat(line.depth);
  const text = `${indent}${line.words.join(' ')}${id === null ? '' : ` L${id}`}${line.trailing}`;
  return p.nfd ? text.normalize('NFD') : text.normalize('NFC');
}

const join = (lines: string[], crlf: boolean) => lines.join(crlf ? '\r\n' : '\n');

/** The slips of a weaker model, applied alike to old_string and new_string. */
const SLIPS: Record<string, (text: string) => string> = {
  none: (t) => t,
  'line endings': (t) => (t.includes('\r\n') ? t.replaceAll('\r\n', '\n') : t.replaceAll('\n', '\r\n')),
  'trailing added': (t) => t.replace(/([^\n\r])(\r?\n|$)/g, '$1 $2'),
  'trailing dropped': (t) => t.replace(/[ \t]+(\r?\n|$)/g, '$1'),
  'indent +2': (t) => t.replace(/^(?=[ \t]*\S)/gm, '  '),
  'tabs for spaces': (t) => t.replace(/^( {2})+/gm, (s) => '\t'.repeat(s.length / 2)),
  'spaces for tabs': (t) => t.replace(/^\t+/gm, (s) => '  '.repeat(s.length)),
  'straight quotes': (t) => t.replace(/[‘’]/g, "'").replace(/[“”]/g, '"'),
  'other Unicode form': (t) => (t === t.normalize('NFC') ? t.normalize('NFD') : t.normalize('NFC')),
};

/** At most one slip of each sort (adding and dropping trailing whitespace would cancel out). */
const slips = fc
  .tuple(
    fc.constantFrom('none', 'trailing added', 'trailing dropped'),
    fc.constantFrom('none', 'indent +2', 'tabs for spaces', 'spaces for tabs'),
    fc.constantFrom('none', 'line endings'),
    fc.constantFrom('none', 'straight quotes'),
    fc.constantFrom('none', 'other Unicode form'),
  )
  .map((chosen) => chosen.filter((slip) => slip !== 'none'));

const edit = fc.record({
  start: fc.nat(),
  size: fc.integer({ min: 1, max: 4 }),
  shape: fc.constantFrom('change', 'insert', 'delete'),
  withBreak: fc.boolean(),
  slips,
});

describe('edit matching, on generated pages', () => {
  test('a slipped edit is applied exactly as the correct edit, or refused', () => {
    fc.assert(
      fc.property(page, edit, (p, e) => {
        const lines = p.lines.map((line, i) => render(p, line, i));
        const start = e.start % (lines.length - 1);
        const end = Math.min(lines.length, start + e.size);
        const window = lines.slice(start, end);
        const target = window.findIndex((l) => l.trim() !== '');
        fc.pre(target !== -1);
        const edited = [...window];
        const line = edited[target]!;
        const trailing = /[ \t]*$/.exec(line)![0];
        if (e.shape === 'change')
          edited[target] = `${line.slice(0, line.length - trailing.length)} edited${trailing}`;
        if (e.shape === 'insert') edited.splice(target + 1, 0, `${/^[ \t]*/.exec(line)![0]}inserted words`);
        if (e.shape === 'delete') {
          fc.pre(window.length > 1);
          edited.splice(target, 1);
        }
        const breakAfter = e.withBreak && end < lines.length ? (p.crlf ? '\r\n' : '\n') : '';
        const old = join(window, p.crlf) + breakAfter;
        const next = join(edited, p.crlf) + breakAfter;
        const content = `${join(lines, p.crlf)}${p.crlf ? '\r\n' : '\n'}`;
        const expected = content.replace(old, () => next);
        let slippedOld = old;
        let slippedNew = next;
        for (const slip of e.slips) {
          slippedOld = SLIPS[slip]!(slippedOld);
          slippedNew = SLIPS[slip]!(slippedNew);
        }
        fc.pre(slippedOld !== slippedNew);
        // An old_string that slipped back to the exact text is an exact edit: new_string as sent.
        fc.pre(slippedOld !== old || slippedNew === next);
        const plan = planEdit(content, slippedOld, slippedNew, false);
        if (plan.kind !== 'edit') return;
        const result = applyEdits(content, plan.edits);
        if (result === expected) return;
        // One latitude: which whitespace a blank line of the window keeps, when the model, blind
        // to it, deleted one of several blank lines. Every other line is exact, and the lines
        // outside the window are untouched.
        const eol = p.crlf ? '\r\n' : '\n';
        const blanks = (t: string) => t.replace(/^[ \t]+(?=\r?$)/gm, '');
        assert.equal(blanks(result), blanks(expected), `slips: ${e.slips.join(', ')}`);
        assert.ok(
          result.startsWith(
            lines
              .slice(0, start)
              .map((l) => l + eol)
              .join(''),
          ),
        );
        assert.ok(
          result.endsWith(
            lines
              .slice(end)
              .map((l) => eol + l)
              .join('') + eol,
          ),
        );
      }),
      { numRuns: 1500 },
    );
  });

  test('an applied edit never reaches past the lines old_string covers', () => {
    const text = fc
      .array(fc.constantFrom('a', 'b', ' ', '  ', '\t', '\n', '\r\n', '’', "'", 'é', 'e\u0301'), {
        maxLength: 40,
      })
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, text, text, (content, old, next) => {
        fc.pre(old !== '' && old !== next);
        const plan = planEdit(content, old, next, false);
        if (plan.kind !== 'edit') return;
        assert.equal(plan.edits.length, 1);
        const { start, end } = plan.edits[0]!;
        const span = content.slice(start, end);
        const breaks = (s: string) => s.split('\n').length - 1;
        assert.equal(breaks(span), breaks(old), `span ${JSON.stringify(span)} for ${JSON.stringify(old)}`);
        const loose = (s: string) =>
          s
            .split('\n')
            .map((l) => l.normalize('NFC').replace(/’/g, "'").trim())
            .join('\n');
        assert.equal(loose(span), loose(old));
      }),
      { numRuns: 3000 },
    );
  });

  test('a block that reads the same elsewhere, once slips are tolerated, is a refusal', () => {
    const block = fc.array(
      fc.record({
        depth: fc.integer({ min: 0, max: 2 }),
        words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }),
      }),
      { minLength: 1, maxLength: 3 },
    );
    const variant = fc.constantFrom(
      'indent +2',
      'trailing added',
      'straight quotes',
      'other Unicode form',
      'line endings',
    );
    fc.assert(
      fc.property(block, variant, fc.boolean(), fc.boolean(), (lines, slip, copyFirst, slipOld) => {
        const text = lines.map((l) => `${'  '.repeat(l.depth)}${l.words.join(' ')}`).join('\n');
        const copy = SLIPS[slip]!(text);
        fc.pre(copy !== text);
        const content = `# Page\n\n${text}\n\nBetween.\n\n${copy}\n\nEnd.\n`;
        // The model copies one of the two (exactly, or with the slip).
        const chosen = copyFirst ? text : copy;
        const old = slipOld ? SLIPS[slip]!(chosen) : chosen;
        const plan = planEdit(content, old, `${old} and more`, false);
        assert.notEqual(plan.kind, 'edit', `applied to one of two places: ${JSON.stringify(content)}`);
      }),
      { numRuns: 1000 },
    );
  });
});
