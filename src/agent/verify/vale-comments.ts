/**
 * Vale's in-page switches (vale.sh/docs/formats/markdown, "Comments"): `<!-- vale off -->` and
 * `<!-- vale on -->` around text no rule should read, `<!-- vale Style.Rule = NO -->` (or a whole
 * style, `= YES` to turn it back on) for one rule from there on; in MDX the same inside `{/* … *\/}`.
 * Teams put them where a rule is wrong for their text, so an alert there is no alert.
 */

interface Switch {
  offset: number;
  allOff: boolean;
  off: ReadonlySet<string>;
}

// Bodies are short: a bound keeps a page full of unclosed comments from costing quadratic time.
const COMMENT = /<!--\s*vale\s+([\s\S]{0,300}?)-->|\{\/\*\s*vale\s+([\s\S]{0,300}?)\*\/\}/g;
const ASSIGNMENT = /([\w-]+(?:\.[\w-]+)?)\s*=\s*(YES|NO)\b/g;

/** Whether an alert of `rule` at an offset of the page is switched off. */
export type SwitchedOff = (rule: string, offset: number) => boolean;

/** The page's switches, in order; a page without any answers false at once. */
export function valeSwitches(text: string): SwitchedOff {
  const switches: Switch[] = [];
  let allOff = false;
  let off = new Set<string>();
  for (const match of text.matchAll(COMMENT)) {
    const body = (match[1] ?? match[2] ?? '').trim();
    if (/^off\b/.test(body)) allOff = true;
    else if (/^on\b/.test(body)) allOff = false;
    else {
      off = new Set(off);
      for (const [, name, value] of body.matchAll(ASSIGNMENT)) {
        if (value === 'NO') off.add(name!);
        else off.delete(name!);
      }
    }
    switches.push({ offset: match.index + match[0].length, allOff, off });
  }
  if (switches.length === 0) return () => false;
  return (rule, offset) => {
    let current: Switch | undefined;
    for (const s of switches) {
      if (s.offset > offset) break;
      current = s;
    }
    if (!current) return false;
    return current.allOff || current.off.has(rule) || current.off.has(rule.split('.')[0]!);
  };
}
