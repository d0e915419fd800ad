/**
 * Which IP addresses are on the public internet: the one classifier behind the webhooks' egress
 * guard (webhooks/egress.ts: only public addresses may be reached) and the repository check
 * (projects/repository.ts: plain http only to addresses that are not public), so that the two
 * can never disagree about an address; and which are link-local or cloud metadata addresses,
 * which repositories may not point at (git/repository-address.ts).
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** IPv6 global unicast (RFC 4291): everything outside it is reserved or special-purpose. */
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
/** NAT64's well-known prefix (RFC 6052): the IPv4 address in its last 32 bits is the one reached. */
const NAT64 = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

/**
 * `::a.b.c.d` with its IPv4 tail as two hex groups. ipaddr.js reads a dotted tail after a bare
 * `::` as IPv4-mapped (`::ffff:a.b.c.d`), so `::127.0.0.1` and `::7f00:1`, one address, would
 * be judged apart.
 */
function hexTail(address: string): string {
  return address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a, b, c, d) => {
    const group = (high: string, low: string) => ((Number(high) << 8) | Number(low)).toString(16);
    return `${group(a, b)}:${group(c, d)}`;
  });
}

/** The IPv4 address an IPv6 one stands for: IPv4-mapped, NAT64 and 6to4 forms. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const parts = address.parts;
  const ipv4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  if (address.isIPv4MappedAddress() || address.match(NAT64)) return ipv4(parts[6]!, parts[7]!);
  if (address.range() === '6to4') return ipv4(parts[1]!, parts[2]!);
  return undefined;
}

/**
 * True for public unicast addresses only. Refused: loopback, RFC 1918, link-local
 * (169.254.169.254, the cloud metadata address), carrier-grade NAT (100.64/10), unique-local,
 * reserved, documentation, multicast and broadcast addresses, anything IPv6 outside global
 * unicast (among them the deprecated IPv4-compatible `::a.b.c.d`, `::/96`, which some systems
 * still route to the IPv4 address, and NAT64's local-use prefix), Teredo, and anything that is
 * not an address. IPv6 forms that carry an IPv4 address to be reached (mapped, NAT64's
 * well-known prefix, 6to4) are judged by that IPv4 address.
 */
export function isPublicAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 4) return ipaddr.IPv4.parse(address).range() === 'unicast';
  if (version !== 6) return false;
  const parsed = ipaddr.IPv6.parse(hexTail(address));
  const ipv4 = embeddedIPv4(parsed);
  if (ipv4) return ipv4.range() === 'unicast';
  return parsed.match(GLOBAL_UNICAST) && parsed.range() === 'unicast';
}

/**
 * Cloud metadata services outside the link-local ranges: Alibaba Cloud's, Azure's platform
 * endpoint (WireServer), Oracle Cloud's older one, and AWS's IPv6 instance metadata.
 */
const METADATA_RANGES = [
  ipaddr.IPv4.parseCIDR('100.100.100.200/32'),
  ipaddr.IPv4.parseCIDR('168.63.129.16/32'),
  ipaddr.IPv4.parseCIDR('192.0.0.192/32'),
];
const METADATA_RANGES_V6 = [ipaddr.IPv6.parseCIDR('fd00:ec2::254/128')];

/**
 * True for link-local addresses (169.254.0.0/16, where most clouds serve instance metadata,
 * and fe80::/10) and the other cloud metadata addresses: what a repository URL may not point at
 * (docs/security.mdx), while private and loopback addresses, where internal hosts live, may.
 * IPv6 forms that carry an IPv4 address are judged by it, as in `isPublicAddress`.
 */
export function isLinkLocalOrMetadata(address: string): boolean {
  const version = isIP(address);
  if (version === 0) return false;
  const ipv4 = version === 4 ? ipaddr.IPv4.parse(address) : embeddedIPv4(ipaddr.IPv6.parse(hexTail(address)));
  if (ipv4) return ipv4.range() === 'linkLocal' || METADATA_RANGES.some((range) => ipv4.match(range));
  const ipv6 = ipaddr.IPv6.parse(hexTail(address));
  return ipv6.range() === 'linkLocal' || METADATA_RANGES_V6.some((range) => ipv6.match(range));
}

/** The host of a URL as an address when it is an IP literal (`[::1]` → `::1`), else undefined. */
export function ipLiteral(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) ? bare : undefined;
}
