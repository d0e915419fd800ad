/**
 * Links docwright takes from outside (a code host's pull request URL, a model's event) and
 * renders: only absolute http(s) URLs, so that a `javascript:` or `data:` "link" never becomes
 * one.
 */
export function isWebLink(value: unknown): value is string {
  if (typeof value !== 'string' || !URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === 'https:' || protocol === 'http:';
}
