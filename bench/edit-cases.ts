/**
 * Cases for bench/edit-robustness.ts: correct edits taken from real pages, and the same edits
 * as a weaker model sends them, perturbed by one kind of slip. Deterministic for a seed.
 */

/** One perturbed edit: what the model sends, what the file on disk is, and what should happen. */
export interface EditCase {
  kind: Kind;
  /** What exactly was perturbed, for a listing of failures. */
  variant: string;
  /** The page, repository-relative. */
  page: string;
  /** The page as it is on disk before the edit (the fixture's text, or a form of it). */
  before: string;
  /** Edits sent first, exactly and correctly (the stale kind's earlier edit). */
  earlier: { old_string: string; new_string: string }[];
  input: { path: string; old_string: string; new_string: string };
  /** The page after the correct edit; null when the only right outcome is a refusal. */
  expected: string | null;
  /** A file created beside the page for this case (a path-case collision). */
  sibling?: string;
}

export const KINDS = [
  'indentation drift',
  'trailing whitespace',
  'CRLF/LF',
  'tabs/spaces',
  'typographic quotes',
  'Unicode normalisation',
  'stale old_string',
  'path case',
  'leading ./',
] as const;
export type Kind = (typeof KINDS)[number];

/** The kinds whose slips are whitespace: the target is ≥ 90% of them applied as intended. */
export const WHITESPACE_KINDS: readonly Kind[] = [
  'indentation drift',
  'trailing whitespace',
  'CRLF/LF',
  'tabs/spaces',
];

export interface Page {
  path: string;
  text: string;
}

/** A small seeded generator (mulberry32), so every run draws the same cases. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const leading = (line: string) => /^[ \t]*/.exec(line)![0];
const lines = (text: string) => text.split('\n');
const mapLines = (text: string, f: (line: string) => string) => lines(text).map(f).join('\n');
const unique = (text: string, part: string) =>
  text.indexOf(part) !== -1 && text.indexOf(part) === text.lastIndexOf(part);

/** A correct edit of `window` (lines of the page): one of four shapes, by `shape`. */
function correctEdit(window: string[], shape: number): string[] | null {
  const out = [...window];
  const target = out.findIndex((line, i) => i > 0 && /[A-Za-z]{4,}/.test(line));
  const at = target === -1 ? out.findIndex((line) => /[A-Za-z]{4,}/.test(line)) : target;
  if (at === -1) return null;
  const line = out[at]!;
  switch (shape % 4) {
    case 0: {
      // Append a clause at the end of the line's content (before any trailing whitespace).
      const content = line.replace(/[ \t]+$/, '');
      out[at] = `${content} (updated)${line.slice(content.length)}`;
      return out;
    }
    case 1:
      // A new line after it, indented like it.
      out.splice(at + 1, 0, `${leading(line)}A line the edit adds.`);
      return out;
    case 2:
      if (out.length < 3) return null;
      out.splice(at, 1);
      return out;
    default: {
      // One word changed.
      const word = /[A-Za-z]{4,}/.exec(line)!;
      out[at] = line.slice(0, word.index) + word[0].toUpperCase() + line.slice(word.index + word[0].length);
      return out;
    }
  }
}

interface Drawn {
  page: Page;
  start: number;
  window: string[];
  old: string;
  next: string;
  expected: string;
}

/** A window of 2-4 lines of some page that `fits`, with a correct edit of it; null after many tries. */
function draw(
  pages: readonly Page[],
  rand: () => number,
  shape: number,
  fits: (window: string[], page: Page) => boolean,
): Drawn | null {
  for (let attempt = 0; attempt < 5_000; attempt++) {
    const page = pages[Math.floor(rand() * pages.length)]!;
    const all = lines(page.text);
    const size = 2 + Math.floor(rand() * 3);
    const start = Math.floor(rand() * Math.max(1, all.length - size));
    const window = all.slice(start, start + size);
    if (window.length < 2 || !fits(window, page)) continue;
    const edited = correctEdit(window, shape);
    if (edited === null) continue;
    // Now and then the edit takes the line break after the window too.
    const eol = start + size < all.length && rand() < 0.3 ? '\n' : '';
    const old = window.join('\n') + eol;
    const next = edited.join('\n') + eol;
    if (!unique(page.text, old) || old === next) continue;
    const expected = page.text.replace(old, () => next);
    return { page, start, window, old, next, expected };
  }
  return null;
}

/** No other run of as many lines reads the same once whitespace and quotes are set aside. */
function looselyUnique(text: string, window: string[]): boolean {
  const loose = (l: string) => straight(l.normalize('NFC')).trim();
  const all = lines(text).map(loose);
  const wanted = window.map(loose).join('\n');
  let seen = 0;
  for (let i = 0; i + window.length <= all.length; i++) {
    if (all.slice(i, i + window.length).join('\n') === wanted) seen++;
  }
  return seen === 1;
}

/** Indented with spaces: at least two lines, and every line but blank ones. */
const nonBlankIndented = (window: string[]) =>
  window.filter((l) => l.trim() !== '').length >= 2 &&
  window.every((l) => l.trim() === '' || (/^ {2,}\S/.test(l) && !l.includes('\t')));
const toTabs = (unit: number) => (text: string) =>
  mapLines(text, (l) => {
    const spaces = /^ */.exec(l)![0].length;
    return '\t'.repeat(Math.floor(spaces / unit)) + ' '.repeat(spaces % unit) + l.slice(spaces);
  });
const curly = (text: string) => {
  let open = true;
  return text.replace(/'|"/g, (q) => {
    if (q === "'") return '’';
    open = !open;
    return open ? '”' : '“';
  });
};
const straight = (text: string) => text.replace(/[‘’]/g, "'").replace(/[“”]/g, '"');
const crlf = (text: string) => text.replaceAll('\n', '\r\n');

/** `perKind` cases of each kind, drawn from `pages` with `seed`. */
export function makeCases(pages: readonly Page[], perKind: number, seed: number): EditCase[] {
  const rand = random(seed);
  const cases: EditCase[] = [];
  const add = (
    kind: Kind,
    variant: string,
    d: Drawn,
    model: (text: string) => string,
    disk: (text: string) => string = (t) => t,
  ) => {
    cases.push({
      kind,
      variant,
      page: d.page.path,
      before: disk(d.page.text),
      earlier: [],
      input: { path: d.page.path, old_string: model(d.old), new_string: model(d.next) },
      expected: disk(d.expected),
    });
  };
  for (let i = 0; i < perKind; i++) {
    // Indentation drift: every line shifted alike, in old_string and new_string.
    const shift = [
      { name: 'dedented by 2', f: (t: string) => mapLines(t, (l) => l.replace(/^ {2}/, '')) },
      { name: 'indented by 2 more', f: (t: string) => mapLines(t, (l) => (l.trim() ? `  ${l}` : l)) },
      {
        name: 'indentation dropped',
        f: (t: string) => mapLines(t, (l) => l.replace(/^ +/, (s) => s.slice(dropped))),
      },
      { name: 'indented by 4 more', f: (t: string) => mapLines(t, (l) => (l.trim() ? `    ${l}` : l)) },
    ][i % 4]!;
    const indented = draw(pages, rand, i, nonBlankIndented);
    // What every line of old_string and new_string loses when the indentation is dropped.
    const dropped = indented
      ? Math.min(
          ...lines(indented.old)
            .filter((l) => l.trim())
            .map((l) => leading(l).length),
        )
      : 0;
    if (indented) add('indentation drift', shift.name, indented, shift.f);

    // Trailing whitespace added by the model, or the file's dropped.
    if (i % 4 === 3) {
      const d = draw(pages, rand, i, (w) => w.some((l) => /\S[ \t]+$/.test(l)));
      if (d)
        add('trailing whitespace', "the file's trailing spaces dropped", d, (t) =>
          mapLines(t, (l) => l.trimEnd()),
        );
    } else {
      const pad = [' ', '  ', '\t'][i % 4]!;
      const d = draw(pages, rand, i, (w) => w.every((l) => !/[ \t]$/.test(l)));
      if (d)
        add('trailing whitespace', `${JSON.stringify(pad)} after every line`, d, (t) =>
          mapLines(t, (l) => l + pad),
        );
    }

    // Line endings: a CRLF page edited with LF, or an LF page with CRLF.
    const ends = draw(pages, rand, i, () => true);
    if (ends) {
      if (i % 2 === 0) add('CRLF/LF', 'CRLF page, LF old_string', ends, (t) => t, crlf);
      else add('CRLF/LF', 'LF page, CRLF old_string', ends, crlf);
    }

    // Tabs for spaces, or spaces for tabs.
    const tabbed = draw(
      pages,
      rand,
      i,
      (w) => nonBlankIndented(w) && w.every((l) => leading(l).length % 2 === 0),
    );
    if (tabbed) {
      if (i % 3 === 0) add('tabs/spaces', 'a tab for every 2 spaces', tabbed, toTabs(2));
      else if (i % 3 === 1)
        add('tabs/spaces', 'spaces on a page indented with tabs', tabbed, (t) => t, toTabs(2));
      else
        add('tabs/spaces', 'a tab for the first 2 spaces, spaces after', tabbed, (t) =>
          mapLines(t, (l) => l.replace(/^ {2}/, '\t')),
        );
    }

    // Typographic quotes: straightened, or curled.
    if (i % 2 === 0) {
      const d = draw(pages, rand, i, (w) => w.some((l) => /[‘’“”]/.test(l)));
      if (d) add('typographic quotes', 'curly quotes sent straight', d, straight);
    } else {
      const d = draw(
        pages,
        rand,
        i,
        (w) => w.some((l) => /['"]/.test(l)) && !w.some((l) => /[‘’“”]/.test(l)),
      );
      if (d) add('typographic quotes', 'straight quotes sent curly', d, curly);
    }

    // Unicode normalisation: NFD sent for an NFC page, or NFC for an NFD page.
    const accented = draw(pages, rand, i, (w) => w.join('\n').normalize('NFD') !== w.join('\n'));
    if (accented) {
      if (i % 2 === 0)
        add('Unicode normalisation', 'NFD old_string, NFC page', accented, (t) => t.normalize('NFD'));
      else
        add(
          'Unicode normalisation',
          'NFC old_string, NFD page',
          accented,
          (t) => t,
          (t) => t.normalize('NFD'),
        );
    }

    // Stale: a second edit copied from the page as it was before the first one.
    const first = draw(pages, rand, 3, (w, page) => w.length >= 3 && looselyUnique(page.text, w));
    if (first) {
      const all = lines(first.page.text);
      const changed = first.window.findIndex((line, k) => line !== lines(first.next)[k]);
      const second = all.slice(first.start + changed, first.start + changed + 3);
      const secondNew = correctEdit(second, 0);
      const stale = second.join('\n');
      // Stale for certain: the text was on the page once, and the first edit took it away.
      if (secondNew && changed >= 0 && unique(first.page.text, stale) && !first.expected.includes(stale)) {
        cases.push({
          kind: 'stale old_string',
          variant: 'copied before an earlier edit',
          page: first.page.path,
          before: first.page.text,
          earlier: [{ old_string: first.old, new_string: first.next }],
          input: { path: first.page.path, old_string: stale, new_string: secondNew.join('\n') },
          expected: null,
        });
      }
    }

    // Path case, and a leading ./.
    const paths = draw(pages, rand, i, () => true);
    if (paths) {
      const p = paths.page.path;
      const variants: [string, string, string?][] = [
        ['file name capitalised', p.replace(/[^/]+$/, (n) => n[0]!.toUpperCase() + n.slice(1))],
        ['whole path upper case', p.toUpperCase()],
        [
          'two files differ only in case',
          p.replace(/[^/.]+(?=\.mdx$)/, (n) => n.toUpperCase()),
          p.replace(/[^/]+$/, (n) => n[0]!.toUpperCase() + n.slice(1)),
        ],
      ];
      const [variant, given, sibling] = variants[i % 3]!;
      if (given !== p) {
        cases.push({
          kind: 'path case',
          variant,
          page: p,
          before: paths.page.text,
          earlier: [],
          input: { path: given, old_string: paths.old, new_string: paths.next },
          expected: sibling ? null : paths.expected,
          ...(sibling ? { sibling } : {}),
        });
      }
      const dotted = draw(pages, rand, i + 1, () => true);
      if (dotted) {
        cases.push({
          kind: 'leading ./',
          variant: i % 2 === 0 ? './path' : '././path',
          page: dotted.page.path,
          before: dotted.page.text,
          earlier: [],
          input: {
            path: `${i % 2 === 0 ? './' : '././'}${dotted.page.path}`,
            old_string: dotted.old,
            new_string: dotted.next,
          },
          expected: dotted.expected,
        });
      }
    }
  }
  return cases;
}
