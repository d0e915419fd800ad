/**
 * The one redactor of docwright: removes secrets from text before it reaches a log line, a job
 * event, a provider's or a code host's error message. Code keeps secrets out in the first place;
 * this is the second line. `createRedactor` knows a fixed list of secrets (a run's project
 * credentials); a `SecretRegistry` learns them as they are decrypted or minted (a process's
 * logs, a GitHub host's minted tokens) and also removes anything shaped like a credential.
 */

export type Redact = (text: string) => string;

export const REDACTED = '[redacted]';

/** Secrets shorter than this are ignored: replacing two-letter strings would wreck every message. */
const MIN_SECRET_LENGTH = 4;
/** Base64 fragments shorter than this are not searched for (they would match by chance). */
const MIN_FRAGMENT_LENGTH = 8;

/** User names code hosts pair with a token in HTTP Basic credentials. */
const TOKEN_USERS = ['x-access-token', 'oauth2', 'git', 'token', 'x-token-auth', 'x-oauth-basic', 'user'];

/** `scheme://userinfo@` — whatever the userinfo holds. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@'"<>]+@/gi;

const BASE64_CHAR = /[A-Za-z0-9+/_-]/;

const base64 = (bytes: Buffer) => bytes.toString('base64');
const base64url = (bytes: Buffer) => bytes.toString('base64url');

/**
 * The parts of base64 encodings of any byte string containing `secret` that depend on the
 * secret alone: one per alignment of the secret within 3-byte groups. Every base64 encoding
 * of `anything + secret + anything` contains one of them, whatever the prefix (a user name).
 */
function base64Fragments(secret: Buffer): string[] {
  const fragments: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const padded = Buffer.concat([Buffer.alloc(offset), secret]);
    const start = Math.ceil((8 * offset) / 6);
    const end = Math.floor((8 * (offset + secret.length)) / 6);
    for (const encode of [base64, base64url]) {
      const fragment = encode(padded).slice(start, end);
      if (fragment.length >= MIN_FRAGMENT_LENGTH) fragments.push(fragment);
    }
  }
  return fragments;
}

/** Every occurrence of `needle` in `text`, as [start, end) ranges. */
function occurrences(text: string, needle: string, ranges: [number, number][]): void {
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) {
    ranges.push([at, at + needle.length]);
  }
}

/** What a redactor or a finder looks for: each secret's literal forms, and its base64 fragments. */
function secretNeedles(secrets: Iterable<string | null | undefined>, minLength = MIN_SECRET_LENGTH) {
  const literal = new Set<string>();
  const fragments = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length < minLength) continue;
    literal.add(secret);
    literal.add(encodeURIComponent(secret));
    const bytes = Buffer.from(secret, 'utf8');
    literal.add(base64(bytes));
    literal.add(base64url(bytes));
    for (const user of TOKEN_USERS) {
      const pair = Buffer.from(`${user}:${secret}`, 'utf8');
      // The credential of a Basic header (`Basic <this>`).
      literal.add(base64(pair));
    }
    for (const fragment of base64Fragments(bytes)) fragments.add(fragment);
  }
  return { literal, fragments };
}

/**
 * A function that tells which of `secrets` a text holds, in any form the redactor removes (the
 * secret, its base64 and URL-encoded forms). Secrets shorter than `minLength` are not looked for.
 */
export function createSecretFinder(
  secrets: Iterable<string | null | undefined>,
  minLength = MIN_SECRET_LENGTH,
): (text: string) => string[] {
  const bySecret = [...new Set(secrets)].flatMap((secret) => {
    if (typeof secret !== 'string' || secret.length < minLength) return [];
    const { literal, fragments } = secretNeedles([secret], minLength);
    return [{ secret, needles: [...literal, ...fragments] }];
  });
  return (text) =>
    typeof text !== 'string'
      ? []
      : bySecret
          .filter(({ needles }) => needles.some((needle) => text.includes(needle)))
          .map((s) => s.secret);
}

/**
 * A function that replaces, in any text: each secret; its base64 and base64url forms, those
 * of `user:secret` for any user name (the whole base64 run around it goes, e.g. a Basic
 * header's credential), and its URL-encoded form; and (unless `userinfo` is false) the
 * userinfo of any `scheme://user:pass@` URL — each with `[redacted]`.
 */
export function createRedactor(
  secrets: Iterable<string | null | undefined>,
  options: {
    /** Also replace any URL's userinfo (default); false for text that shows files as they are (a diff). */
    userinfo?: boolean;
  } = {},
): Redact {
  const { literal, fragments } = secretNeedles(secrets);

  return (text: string): string => {
    if (typeof text !== 'string' || text === '') return text;
    const ranges: [number, number][] = [];
    for (const needle of literal) occurrences(text, needle, ranges);
    for (const fragment of fragments) {
      for (let at = text.indexOf(fragment); at >= 0; at = text.indexOf(fragment, at + 1)) {
        // Widen to the whole base64 run (and its padding) the fragment sits in.
        let start = at;
        while (start > 0 && BASE64_CHAR.test(text[start - 1]!)) start--;
        let end = at + fragment.length;
        while (end < text.length && BASE64_CHAR.test(text[end]!)) end++;
        while (end < text.length && text[end] === '=') end++;
        ranges.push([start, end]);
      }
    }
    let result = text;
    if (ranges.length > 0) {
      ranges.sort((a, b) => a[0] - b[0]);
      let out = '';
      let cursor = 0;
      let open: [number, number] | null = null;
      for (const range of ranges) {
        if (open && range[0] <= open[1]) {
          open[1] = Math.max(open[1], range[1]);
          continue;
        }
        if (open) {
          out += text.slice(cursor, open[0]) + REDACTED;
          cursor = open[1];
        }
        open = [range[0], range[1]];
      }
      if (open) out += text.slice(cursor, open[0]) + REDACTED;
      result = out + text.slice(open ? open[1] : cursor);
    }
    return options.userinfo === false ? result : result.replace(URL_USERINFO, `$1${REDACTED}@`);
  };
}

/**
 * A copy of `value` with `redact` applied to every string in it: object keys' values, array
 * items, and errors (message, stack, cause and own properties; the copy keeps the error's
 * class, so `instanceof` and `code` still work). Other objects (Dates, Buffers…) are kept.
 */
export function redactDeep<T>(value: T, redact: Redact): T {
  const seen = new WeakMap<object, unknown>();
  const walk = (item: unknown, depth: number): unknown => {
    if (typeof item === 'string') return redact(item);
    if (item === null || typeof item !== 'object' || depth > 32) return item;
    if (seen.has(item)) return seen.get(item);
    if (Array.isArray(item)) {
      const copy: unknown[] = [];
      seen.set(item, copy);
      for (const element of item) copy.push(walk(element, depth + 1));
      return copy;
    }
    if (item instanceof Error) {
      const copy = Object.create(Object.getPrototypeOf(item)) as Record<string, unknown>;
      seen.set(item, copy);
      for (const key of Reflect.ownKeys(item)) {
        const { enumerable } = Object.getOwnPropertyDescriptor(item, key)!;
        // Read accessors (V8's `stack`) too, and store plain values.
        const element = walk(Reflect.get(item, key), depth + 1);
        Object.defineProperty(copy, key, { value: element, enumerable, writable: true, configurable: true });
      }
      return copy;
    }
    const prototype = Object.getPrototypeOf(item);
    if (prototype !== Object.prototype && prototype !== null) return item;
    const copy: Record<string, unknown> = prototype === null ? Object.create(null) : {};
    seen.set(item, copy);
    for (const [key, element] of Object.entries(item)) copy[key] = walk(element, depth + 1);
    return copy;
  };
  return walk(value, 0) as T;
}

/** How many distinct secrets a registry remembers; the oldest go first (rotated tokens). */
const REGISTRY_CAPACITY = 1000;

/**
 * The secrets a process has handled, for redacting text whose producer could not know them
 * (log lines). Secrets are added as they are decrypted or minted; the redactor is rebuilt
 * lazily after a change, so redacting stays cheap.
 */
export class SecretRegistry {
  readonly #secrets = new Set<string>();
  #redact: Redact | null = null;

  /** Remembers `secrets` (non-strings and empty values are ignored). */
  add(...secrets: readonly unknown[]): void {
    for (const secret of secrets) {
      if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH || this.#secrets.has(secret))
        continue;
      this.#secrets.add(secret);
      this.#redact = null;
      if (this.#secrets.size > REGISTRY_CAPACITY) this.#secrets.delete(this.#secrets.values().next().value!);
    }
  }

  get size(): number {
    return this.#secrets.size;
  }

  /**
   * `text` with every remembered secret (and its encodings), any URL's userinfo (see
   * createRedactor) and anything shaped like a credential (see CREDENTIAL_SHAPES) replaced.
   */
  readonly redact: Redact = (text) => {
    if (typeof text !== 'string' || text === '') return text;
    this.#redact ??= createRedactor([...this.#secrets, ...[...this.#secrets].map(jsonEscaped)]);
    let result = this.#redact(text);
    for (const [shape, replacement, marker] of CREDENTIAL_SHAPES) {
      if (marker === undefined || result.includes(marker)) result = result.replace(shape, replacement);
    }
    return result;
  };
}

/**
 * Credentials recognised by their shape, which a process may see without holding them:
 * docwright's own (API keys, dashboard session tokens, webhook secrets: a key sent in a query
 * string), a bearer token in a quoted header, provider keys (`sk-…`, `pk-…`, `rk-…`) and the
 * masked keys providers echo back in their errors (`sk-abc***xyz`).
 */
const CREDENTIAL_SHAPES: [shape: RegExp, replacement: string, marker?: string][] = [
  [/\b(?:dwk_[0-9A-Za-z]{38}|dws_[A-Za-z0-9_-]{43}|whsec_[A-Za-z0-9+/]{24,}={0,2})/g, REDACTED],
  [/Bearer\s+[^\s"',]+/gi, `Bearer ${REDACTED}`],
  [/\b(sk|pk|rk)-[A-Za-z0-9_*-]{4,}/g, REDACTED],
  // Bounded on both sides: an unbounded run before `***` would make a long word quadratic.
  [/[A-Za-z0-9_-]{0,100}\*{3,}[A-Za-z0-9_-]{0,100}/g, REDACTED, '***'],
];

/** The form a secret takes inside a JSON string (a PEM key's newlines become `\n`). */
const jsonEscaped = (secret: string) => JSON.stringify(secret).slice(1, -1);

/**
 * Every secret this process has decrypted or minted. The logger redacts its lines with it:
 * logs are per process, so the set of secrets that could reach them is too.
 */
export const processSecrets = new SecretRegistry();
