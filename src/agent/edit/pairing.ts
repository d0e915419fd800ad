/**
 * One candidate place, line by line: each token of old_string paired with the file's text for
 * it, compared as the level compares them. A place fails at the first token that differs.
 */
import type { Level } from './ladder.ts';
import {
  canonUnit,
  contentOf,
  type FileText,
  indentOf,
  isBlankLine,
  type Line,
  type ModelText,
  trailingOf,
  units,
} from './text.ts';
import { BLANK_INDENT, EOL, INDENT, LAST_INDENT, TRAIL } from './tokens.ts';

/** Pairs of model tokens and file texts being built for one candidate. */
export class Pairing {
  tokens: string[] = [];
  texts: string[] = [];
  indents: [string, string][] = [];
  trailDrift = false;
  /** What differed between old_string and the file, for the model's information. */
  differences = new Set<string>();
  readonly file: FileText;
  readonly level: Level;
  constructor(file: FileText, level: Level) {
    this.file = file;
    this.level = level;
  }
  push(token: string, text: string): void {
    this.tokens.push(token);
    this.texts.push(text);
  }
  /** Pairs model units with the file's units of [from, to); false when they differ. */
  units(modelUnits: string[], from: number, to: number): boolean {
    const fileUnits = units(this.file.text.slice(from, to));
    if (fileUnits.length !== modelUnits.length) return false;
    const canon = this.level.canon;
    for (let i = 0; i < fileUnits.length; i++) {
      if (canonUnit(modelUnits[i]!, canon) !== canonUnit(fileUnits[i]!, canon)) return false;
    }
    for (let i = 0; i < fileUnits.length; i++) {
      const model = modelUnits[i]!;
      const file = fileUnits[i]!;
      if (model !== file) {
        this.differences.add(
          model.normalize('NFC') === file.normalize('NFC') ? 'Unicode normalisation' : 'typographic quotes',
        );
      }
      this.push(model, file);
    }
    return true;
  }
  indent(modelIndent: string, line: Line, blank: boolean): void {
    const fileIndent = indentOf(this.file.text, line);
    if (blank) this.push(BLANK_INDENT, fileIndent);
    else {
      if (modelIndent !== fileIndent) this.differences.add('indentation');
      this.push(INDENT + modelIndent, fileIndent);
      this.indents.push([modelIndent, fileIndent]);
    }
  }
  trail(modelTrail: string, line: Line): void {
    const fileTrail = trailingOf(this.file.text, line);
    if (modelTrail !== fileTrail) this.differences.add('trailing whitespace');
    if (modelTrail !== '' && modelTrail !== fileTrail) this.trailDrift = true;
    this.push(TRAIL + modelTrail, fileTrail);
  }
  eol(model: Line, line: Line): void {
    if (model.eol !== line.eol) this.differences.add('line endings');
    this.push(EOL, line.eol);
  }
}

/**
 * A line between the first and the last: the whole line. At the levels that set them apart,
 * indentation and trailing whitespace are paired, not compared.
 */
export function wholeLine(p: Pairing, model: ModelText, m: Line, f: Line): boolean {
  const { level } = p;
  if (level.indent) {
    if (isBlankLine(m) !== isBlankLine(f)) return false;
    p.indent(indentOf(model.text, m), f, isBlankLine(m));
    if (!p.units(units(contentOf(model.text, m)), f.indentEnd, f.contentEnd)) return false;
  } else if (level.trailing) {
    if (!p.units(units(model.text.slice(m.start, m.contentEnd)), f.start, f.contentEnd)) return false;
  } else if (!p.units(units(model.text.slice(m.start, m.end)), f.start, f.end)) return false;
  if (level.trailing) p.trail(trailingOf(model.text, m), f);
  p.eol(m, f);
  return true;
}

/**
 * How the first line of old_string may sit in the file: the whole line with its indentation
 * paired (at the levels that pair it, when the line is not blank), or a suffix of the line;
 * an indented line only whole, one without indentation whole first (its missing indentation
 * is drift like any other) and else as a suffix.
 */
export function firstLineModes(level: Level, model: ModelText, m: Line): ('whole' | 'suffix')[] {
  if (!level.indent || isBlankLine(m)) return ['suffix'];
  return indentOf(model.text, m) === '' ? ['whole', 'suffix'] : ['whole'];
}

/** The first line of a multi-line old_string: the end of a line of the file. */
export function firstLine(
  p: Pairing,
  model: ModelText,
  m: Line,
  f: Line,
  mode: 'whole' | 'suffix',
): { start: number; leadToken: boolean } | null {
  const lead = indentOf(model.text, m);
  const { level } = p;
  if (mode === 'whole') {
    if (isBlankLine(f)) return null;
    p.indent(lead, f, false);
    if (!p.units(units(contentOf(model.text, m)), f.indentEnd, f.contentEnd)) return null;
    p.trail(trailingOf(model.text, m), f);
    p.eol(m, f);
    return { start: f.start, leadToken: true };
  }
  // Otherwise a suffix of the line (all of it, possibly).
  const quoted = units(model.text.slice(m.start, level.trailing ? m.contentEnd : m.end));
  const region = units(p.file.text.slice(f.start, level.trailing ? f.contentEnd : f.end));
  if (quoted.length > region.length) return null;
  let start = level.trailing ? f.contentEnd : f.end;
  for (const unit of region.slice(region.length - quoted.length)) start -= unit.length;
  if (!p.units(quoted, start, level.trailing ? f.contentEnd : f.end)) return null;
  if (level.trailing) p.trail(trailingOf(model.text, m), f);
  p.eol(m, f);
  return { start, leadToken: false };
}

/** The last line of a multi-line old_string: the start of a line of the file. */
export function lastLine(
  p: Pairing,
  model: ModelText,
  m: Line,
  f: Line,
): { end: number; trailToken: boolean } | null {
  const { level } = p;
  const text = p.file.text;
  let from = f.start;
  if (level.indent) {
    if (isBlankLine(m)) {
      // old_string ends with a line break, and maybe whitespace: the next line's indentation.
      if (m.start === m.end) {
        p.push(BLANK_INDENT, '');
        p.push(TRAIL, '');
        return { end: f.start, trailToken: false };
      }
      // (A blank line of the file is all whitespace, and all of it is paired.)
      const to = isBlankLine(f) ? f.end : f.indentEnd;
      p.push(LAST_INDENT + model.text.slice(m.start, m.end), text.slice(f.start, to));
      return { end: to, trailToken: false };
    }
    if (isBlankLine(f)) return null;
    p.indent(indentOf(model.text, m), f, false);
    from = f.indentEnd;
  }
  if (m.start === m.end) return { end: f.start, trailToken: false }; // old_string ends with a line break
  const quotedStart = level.indent ? m.indentEnd : m.start;
  if (level.trailing) {
    // Up to the end of the content: the trailing whitespace is paired.
    const quoted = units(model.text.slice(quotedStart, m.contentEnd));
    const mark = p.tokens.length;
    if (p.units(quoted, from, f.contentEnd)) {
      p.trail(trailingOf(model.text, m), f);
      return { end: f.end, trailToken: true };
    }
    p.tokens.length = mark;
    p.texts.length = mark;
  }
  // A prefix of the line, whitespace and all.
  const quoted = units(model.text.slice(quotedStart, m.end));
  const region = units(text.slice(from, f.end));
  if (quoted.length > region.length) return null;
  let end = from;
  for (const unit of region.slice(0, quoted.length)) end += unit.length;
  if (!p.units(quoted, from, end)) return null;
  return { end, trailToken: false };
}

/** Whether only whitespace is left of line `j` after `offset`. */
export function endsLine(file: FileText, j: number, offset: number): boolean {
  const line = file.lines[j]!;
  return offset >= line.contentEnd || (isBlankLine(line) && offset >= line.start);
}
