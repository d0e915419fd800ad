/**
 * Where old_string matches a file at one level of the ladder, and how each piece of it maps
 * onto the file's own text.
 *
 * A match pairs every token of old_string (tokens.ts) with the file's text for it (pairing.ts),
 * so that new_string can be written back through the same pairing (transfer.ts): what the model
 * copied comes out as the file has it, only what it changed is new.
 *
 * A match is line-shaped: the first line of old_string ends a line of the file (it may start
 * mid-line), the lines between are whole lines, the last one starts a line (it may end
 * mid-line); a single line may sit anywhere in a line. Whitespace a level ignores must sit at
 * the edge of a line in the file too, so a tolerated match never reaches into the middle of a
 * line the model did not quote.
 */
import { inferReindent, type Reindent } from './indent.ts';
import type { Level } from './ladder.ts';
import { endsLine, firstLine, firstLineModes, lastLine, Pairing, wholeLine } from './pairing.ts';
import {
  type Canon,
  canonKeepsOffsets,
  canonText,
  canonUnit,
  contentOf,
  type FileText,
  indentOf,
  isBlankLine,
  type Line,
  lineSpans,
  type ModelText,
  trailingOf,
  units,
} from './text.ts';
import type { Shape } from './tokens.ts';

export interface Match {
  /** Offsets of the matched text in the file. */
  start: number;
  end: number;
  /** 0-based indexes of the file's first and last matched lines. */
  firstLine: number;
  lastLine: number;
  shape: Shape;
  /** old_string's tokens, and the file's text for each. */
  tokens: string[];
  texts: string[];
  reindent: Reindent;
  /** old_string has trailing whitespace the file lacks: new_string's is not to be trusted either. */
  trailDrift: boolean;
  /** What differed between old_string and the file ("indentation", "line endings", …). */
  differences: Set<string>;
  /** Nothing but whitespace follows the match on its last line. */
  endsLine: boolean;
}

export interface Found {
  /** The matches (overlapping ones included, up to the limit), in file order. */
  matches: Match[];
  /** First lines (0-based) of places that matched but for indentation no one shift explains. */
  uneven: number[];
  /** The search stopped early: more matches than the limit, or too many lines to compare. */
  stopped: boolean;
}

/**
 * Lines compared at most in one search: a file of many like lines and an old_string of many
 * like lines would otherwise cost their product (about a second at this bound).
 */
const MAX_LINE_COMPARISONS = 500_000;

/** Where `old` matches the file at `level`; the search stops past `limit` matches. */
export function matchesAt(
  file: FileText,
  old: string,
  level: Level,
  limit = Number.POSITIVE_INFINITY,
): Found {
  const model: ModelText = { text: old, lines: lineSpans(old) };
  const found: Found = { matches: [], uneven: [], stopped: false };
  if (model.lines.length === 1) singleLine(file, model, level, found, limit);
  else multiLine(file, model, level, found, limit);
  return found;
}

function multiLine(file: FileText, model: ModelText, level: Level, found: Found, limit: number): void {
  const k = model.lines.length - 1;
  const fileLines = file.lines;
  const candidates = k >= 2 ? middleOccurrences(file, model, level) : range(0, fileLines.length - k);
  const modes = firstLineModes(level, model, model.lines[0]!);
  const plausible = plausibleEnds(file, model, level);
  let comparisons = 0;
  for (const j of candidates) {
    if (j < 0 || j + k >= fileLines.length || !plausible(j)) continue;
    comparisons += (k + 1) * modes.length;
    if (comparisons > MAX_LINE_COMPARISONS || found.matches.length > limit) {
      found.stopped = true;
      return;
    }
    let uneven = false;
    for (const mode of modes) {
      const p = new Pairing(file, level);
      const first = firstLine(p, model, model.lines[0]!, fileLines[j]!, mode);
      if (first === null) continue;
      let ok = true;
      for (let i = 1; i < k && ok; i++) ok = wholeLine(p, model, model.lines[i]!, fileLines[j + i]!);
      if (!ok) continue;
      const last = lastLine(p, model, model.lines[k]!, fileLines[j + k]!);
      if (last === null) continue;
      const reindent = level.indent ? inferReindent(p.indents) : 'same';
      if (reindent === undefined) {
        uneven = true;
        continue;
      }
      found.matches.push({
        start: first.start,
        end: last.end,
        firstLine: j,
        lastLine: j + k,
        shape: { leadToken: first.leadToken, trailToken: last.trailToken },
        tokens: p.tokens,
        texts: p.texts,
        reindent,
        trailDrift: p.trailDrift,
        differences: p.differences,
        endsLine: endsLine(file, j + k, last.end),
      });
      uneven = false;
      break;
    }
    if (uneven) found.uneven.push(j);
  }
}

/**
 * A quick test, on canonical text, that the first and last lines of old_string can sit at
 * file lines j and j+k: most places fail it without their units being paired.
 */
function plausibleEnds(file: FileText, model: ModelText, level: Level): (j: number) => boolean {
  const { canon } = level;
  const k = model.lines.length - 1;
  const content = file.content(canon);
  const text = file.text;
  const region = (j: number) => {
    const f = file.lines[j]!;
    return indentOf(text, f) + content[j]! + (level.trailing ? '' : trailingOf(text, f));
  };
  const m0 = model.lines[0]!;
  const suffix = canonText(model.text.slice(m0.start, level.trailing ? m0.contentEnd : m0.end), canon);
  const whole = firstLineModes(level, model, m0).includes('whole')
    ? canonText(contentOf(model.text, m0), canon)
    : null;
  const mk = model.lines[k]!;
  const open = mk.start === mk.end || (level.indent && isBlankLine(mk));
  const prefix = canonText(
    level.indent ? contentOf(model.text, mk) : model.text.slice(mk.start, mk.contentEnd),
    canon,
  );
  return (j) => {
    const firstFits = (whole !== null && content[j] === whole) || region(j).endsWith(suffix);
    if (!firstFits) return false;
    if (open) return true;
    return level.indent ? content[j + k]!.startsWith(prefix) : region(j + k).startsWith(prefix);
  };
}

function singleLine(file: FileText, model: ModelText, level: Level, found: Found, limit: number): void {
  const m = model.lines[0]!;
  const lead = indentOf(model.text, m);
  const trail = trailingOf(model.text, m);
  // Without a tolerance for whitespace, a single line matches only exactly (already tried).
  if (!level.trailing && !level.canon.nfc) return;
  if (level.trailing && isBlankLine(m)) return; // nothing but whitespace: nothing to anchor it
  const quotedText = level.indent
    ? contentOf(model.text, m)
    : model.text.slice(m.start, level.trailing ? m.contentEnd : m.end);
  const quoted = units(quotedText);
  const needle = canonText(quotedText, level.canon);
  const text = file.text;
  for (const [j, f] of file.lines.entries()) {
    const from = level.indent ? f.indentEnd : f.start;
    const to = level.trailing ? f.contentEnd : f.end;
    if (level.indent && lead !== '' && isBlankLine(f)) continue;
    const region = text.slice(from, to);
    const haystack = canonText(region, level.canon);
    for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) {
      if (found.matches.length > limit) {
        found.stopped = true;
        return;
      }
      // At the start of the content, the whole line with its indentation paired (an indented
      // old_string only there); elsewhere a piece of the line.
      const leadToken = level.indent && at === 0;
      if (level.indent && lead !== '' && !leadToken) break;
      // At the end of the content, the trailing whitespace is paired (so that it stays on its
      // line whatever new_string adds); old_string's own trailing whitespace must be there.
      const trailToken = level.trailing && at + needle.length === haystack.length;
      if (level.trailing && trail !== '' && !trailToken) continue;
      const start = rawOffset(region, at, level.canon);
      if (start === null) continue;
      const p = new Pairing(file, level);
      if (leadToken) p.indent(lead, f, false);
      let end = from + start;
      for (const unit of units(text.slice(from + start, to)).slice(0, quoted.length)) end += unit.length;
      if (!p.units(quoted, from + start, end)) continue;
      if (trailToken) {
        if (end !== f.contentEnd) continue;
        p.trail(trail, f);
        end = f.end;
      }
      const reindent = leadToken ? inferReindent(p.indents) : 'same';
      if (reindent === undefined) {
        found.uneven.push(j);
        continue;
      }
      found.matches.push({
        start: leadToken ? f.start : from + start,
        end,
        firstLine: j,
        lastLine: j,
        shape: { leadToken, trailToken },
        tokens: p.tokens,
        texts: p.texts,
        reindent,
        trailDrift: p.trailDrift,
        differences: p.differences,
        endsLine: endsLine(file, j, end),
      });
    }
  }
}

/** The offset in `raw` of the unit whose canonical form starts at `at`; null inside a unit. */
function rawOffset(raw: string, at: number, canon: Canon): number | null {
  if (canonKeepsOffsets(raw, canon)) return at;
  let canonical = 0;
  let offset = 0;
  for (const unit of units(raw)) {
    if (canonical === at) return offset;
    if (canonical > at) return null;
    canonical += canonUnit(unit, canon).length;
    offset += unit.length;
  }
  return canonical === at ? offset : null;
}

/** Start lines j where old_string's middle lines (1..k-1) equal the file's lines j+1…, by KMP. */
function middleOccurrences(file: FileText, model: ModelText, level: Level): number[] {
  const fileKeys = lineKeys(file.text, file.lines, level, file.content(level.canon));
  const middle = model.lines.slice(1, -1);
  const wanted = lineKeys(
    model.text,
    middle,
    level,
    middle.map((line) => canonText(contentOf(model.text, line), level.canon)),
  );
  const failure = new Array<number>(wanted.length).fill(0);
  for (let i = 1, k = 0; i < wanted.length; i++) {
    while (k > 0 && wanted[i] !== wanted[k]) k = failure[k - 1]!;
    if (wanted[i] === wanted[k]) k++;
    failure[i] = k;
  }
  const starts: number[] = [];
  for (let i = 0, k = 0; i < fileKeys.length; i++) {
    while (k > 0 && fileKeys[i] !== wanted[k]) k = failure[k - 1]!;
    if (fileKeys[i] === wanted[k]) k++;
    if (k === wanted.length) {
      starts.push(i - wanted.length); // the line before the middle ones
      k = failure[k - 1]!;
    }
  }
  return starts;
}

/** A whole line as `level` compares it (indentation kept apart where the level pairs it). */
function lineKeys(text: string, lines: Line[], level: Level, content: string[]): string[] {
  return lines.map((line, i) => {
    if (level.indent) return isBlankLine(line) ? '\0' : content[i]!;
    const lead = indentOf(text, line);
    if (level.trailing) return lead + content[i]!;
    return lead + content[i]! + trailingOf(text, line);
  });
}

function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
}
