/**
 * What a webhook body may build before it is parsed (docs/automations.mdx, "Events from code
 * hosts"). `JSON.parse` of 20 MB of `[[[…]]]` builds ten million nested arrays: seconds of a
 * blocked event loop and hundreds of MiB. One pass over the text, outside strings, counting
 * brackets and commas, refuses such a body first, in time linear in its length (about 30 ms for
 * the largest body read, 25 MiB) and without allocating.
 */

/**
 * Deepest nesting of arrays and objects accepted. Real payloads of GitHub, GitLab and Gitea are
 * about 6 levels deep; no host documents a limit of its own.
 */
export const MAX_EVENT_JSON_DEPTH = 256;

/**
 * Most arrays and objects accepted. A push carries at most 20 commits (GitHub and GitLab cap the
 * list), a pull request a few hundred objects; 100,000 parse in tens of milliseconds.
 */
export const MAX_EVENT_JSON_CONTAINERS = 100_000;

/** Most values in arrays and objects accepted (commas + 1, roughly): a million is a few dozen MiB parsed. */
export const MAX_EVENT_JSON_VALUES = 1_000_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;

/**
 * Why `text` is not worth parsing, or undefined. It judges only size and shape: a text it lets
 * through may still be invalid JSON, which `JSON.parse` then says.
 */
export function jsonBoundsProblem(text: string): string | undefined {
  let depth = 0;
  let containers = 0;
  let values = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > MAX_EVENT_JSON_DEPTH) return `it is nested more than ${MAX_EVENT_JSON_DEPTH} levels deep`;
      if (++containers > MAX_EVENT_JSON_CONTAINERS) {
        return `it holds more than ${MAX_EVENT_JSON_CONTAINERS} arrays and objects`;
      }
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    } else if (c === COMMA && ++values > MAX_EVENT_JSON_VALUES) {
      return `it holds more than ${MAX_EVENT_JSON_VALUES} values`;
    }
  }
  return undefined;
}
