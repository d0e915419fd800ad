/**
 * Indentation drift: how old_string's indentation maps onto the file's, so that new_string is
 * re-indented the same way. One mapping must hold for every line, or the match is not taken.
 */

/** The model's indentation as typed ('same'), or shifted by `delta` columns and drawn in the file's style. */
export type Reindent = 'same' | { tabWidth: number; delta: number; tabs: boolean };

/** Tab widths tried, in order of preference, when a tab is involved. */
const TAB_WIDTHS = [4, 2, 8];

/** Columns of leading whitespace, a tab advancing to the next multiple of `tabWidth`. */
function columns(indent: string, tabWidth: number): number {
  let column = 0;
  for (const c of indent) column = c === '\t' ? (Math.floor(column / tabWidth) + 1) * tabWidth : column + 1;
  return column;
}

function draw(column: number, tabs: boolean, tabWidth: number): string | null {
  if (column < 0) return null;
  return tabs
    ? '\t'.repeat(Math.floor(column / tabWidth)) + ' '.repeat(column % tabWidth)
    : ' '.repeat(column);
}

/**
 * The one re-indentation that turns each model indentation into the file's, from pairs
 * `[model, file]` of matched non-blank lines; undefined when none does. Among several (a tab
 * of unknown width), the smallest shift wins.
 */
export function inferReindent(pairs: readonly (readonly [string, string])[]): Reindent | undefined {
  if (pairs.every(([model, file]) => model === file)) return 'same';
  const tabs = pairs.some(([, file]) => file.includes('\t'));
  const anyTab = tabs || pairs.some(([model]) => model.includes('\t'));
  let best: Reindent | undefined;
  for (const tabWidth of anyTab ? TAB_WIDTHS : [TAB_WIDTHS[0]!]) {
    const [model0, file0] = pairs[0]!;
    const delta = columns(file0, tabWidth) - columns(model0, tabWidth);
    const fits = pairs.every(
      ([model, file]) => draw(columns(model, tabWidth) + delta, tabs, tabWidth) === file,
    );
    if (fits && (best === undefined || (best !== 'same' && Math.abs(delta) < Math.abs(best.delta)))) {
      best = { tabWidth, delta, tabs };
    }
  }
  return best;
}

/** The file's indentation for a model indentation; null when the shift would take it below column 0. */
export function reindent(mapping: Reindent, indent: string): string | null {
  if (mapping === 'same') return indent;
  return draw(columns(indent, mapping.tabWidth) + mapping.delta, mapping.tabs, mapping.tabWidth);
}
