/**
 * Request headers as the inbound webhook surface may hold them: a fetch `Headers`, or Node's
 * `IncomingHttpHeaders` (names in lower case, a repeated header as a list or joined by commas).
 */
export type HeaderSource = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * The value of header `name` (any case), trimmed: undefined when absent, null when it was sent
 * more than once (a list of several values). Node joins most repeated headers with ", ", which
 * the callers' strict formats then refuse.
 */
export function headerValue(headers: HeaderSource, name: string): string | null | undefined {
  const key = name.toLowerCase();
  let value: string | readonly string[] | null | undefined;
  if (headers instanceof Headers) value = headers.get(key);
  else value = headers[key] ?? Object.entries(headers).find(([k]) => k.toLowerCase() === key)?.[1];
  if (value === null || value === undefined) return undefined;
  if (typeof value !== 'string') {
    if (value.length === 0) return undefined;
    if (value.length > 1) return null;
    value = value[0]!;
  }
  return value.trim();
}
