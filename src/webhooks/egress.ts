/**
 * The egress guard of docs/webhooks.mdx: a webhook may only reach public unicast addresses, unless
 * `DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE=1`. The check runs on the address the connection is made
 * to, inside the socket's own DNS lookup, so a name that resolves to a public address when an
 * endpoint is saved and to a private one later (DNS rebinding) is still refused. Which addresses
 * are public is decided in one place for webhooks and repositories alike (../public-address.ts).
 */
import { type LookupAddress, lookup } from 'node:dns';
import { ipLiteral, isPublicAddress } from '../public-address.ts';

/** Why a destination was refused; the message says what to do about it. */
export class EgressRefused extends Error {
  constructor(host: string, address: string) {
    super(
      `${host === address ? address : `${host} resolves to ${address}, which`} is a loopback, private, ` +
        'link-local or otherwise non-public address; webhooks only go to public addresses ' +
        '(set DOCWRIGHT_WEBHOOK_ALLOW_PRIVATE=1 on the server to allow it)',
    );
    this.name = 'EgressRefused';
  }
}

/**
 * Refuses, before any lookup, what can be judged from the URL alone: an IP literal that is not
 * public and names that always mean this machine (`localhost`, `*.localhost`).
 */
export function checkUrlHost(url: URL): void {
  const literal = ipLiteral(url.hostname);
  if (literal !== undefined) {
    if (!isPublicAddress(literal)) throw new EgressRefused(literal, literal);
    return;
  }
  const name = url.hostname.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) throw new EgressRefused(name, '127.0.0.1');
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for `http.request` that resolves every address of the name and refuses the
 * connection when any of them is not public (a name with one public and one private address
 * could otherwise be steered to the private one).
 */
export function guardedLookup(
  hostname: string,
  options: { all?: boolean; family?: number | string },
  callback: LookupCallback,
): void {
  lookup(hostname, { ...options, all: true } as { all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (refused) return callback(new EgressRefused(hostname, refused.address), []);
    if (options.all) return callback(null, addresses);
    const first = addresses[0]!;
    callback(null, first.address, first.family);
  });
}
