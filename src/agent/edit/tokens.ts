/**
 * old_string and new_string cut into tokens: their units (characters), line breaks and, at the
 * levels that set them apart, each line's indentation and trailing whitespace. A match pairs
 * old_string's tokens with the file's text (pairing.ts); new_string is cut the same way, so the
 * two can be compared token by token (transfer.ts).
 */
import type { Level } from './ladder.ts';
import { indentOf, isBlankLine, lineSpans, trailingOf, units } from './text.ts';

/** Token markers: a unit never starts with NUL followed by a letter, so they cannot collide. */
export const INDENT = '\0I';
/** The (empty) indentation of a blank line: never paired with a non-blank line's. */
export const BLANK_INDENT = '\0B';
/**
 * Whitespace after the last line break of old_string: the start of the next line's
 * indentation, as far as it goes.
 */
export const LAST_INDENT = '\0L';
export const TRAIL = '\0T';
export const EOL = '\0E';

/** How the first and last lines of a match are cut, so new_string is cut the same way. */
export interface Shape {
  /** The first line's indentation is a token (the match starts at the start of a line). */
  leadToken: boolean;
  /** The last line's trailing whitespace is a token (the match runs to the end of its content). */
  trailToken: boolean;
}

/**
 * Tokens of a model text (old_string or new_string) cut to `shape`: the same cuts the pairing
 * makes in old_string, so the two can be compared token by token.
 */
export function tokenize(text: string, level: Level, shape: Shape): string[] {
  const lines = lineSpans(text);
  const out: string[] = [];
  const slice = (from: number, to: number) => {
    for (const unit of units(text.slice(from, to))) out.push(unit);
  };
  for (const [i, line] of lines.entries()) {
    const first = i === 0;
    const last = i === lines.length - 1;
    if (last && level.indent && isBlankLine(line) && (!first || shape.leadToken)) {
      // The text ends with a line break: an empty line (so that it can stand for a blank line
      // of old_string), or whitespace at the start of a line.
      if (line.start === line.end) out.push(BLANK_INDENT, TRAIL);
      else out.push(LAST_INDENT + text.slice(line.start, line.end));
      break;
    }
    if (last && !first && line.start === line.end) break; // the text ends with a line break
    const trailToken = level.trailing && (!last || shape.trailToken);
    if (level.indent && (!first || shape.leadToken)) {
      if (isBlankLine(line)) out.push(BLANK_INDENT);
      else out.push(INDENT + indentOf(text, line));
      if (trailToken) {
        slice(line.indentEnd, line.contentEnd);
        out.push(TRAIL + trailingOf(text, line));
      } else slice(line.indentEnd, line.end);
    } else if (trailToken) {
      slice(line.start, line.contentEnd);
      out.push(TRAIL + trailingOf(text, line));
    } else slice(line.start, line.end);
    if (!last) out.push(EOL);
  }
  return out;
}
