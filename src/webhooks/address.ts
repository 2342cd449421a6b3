// Where a webhook may be sent: https only, and never to loopback, private, link-local or other
// internal addresses, checked on the URL when it is set and on the address actually connected to
// (a DNS answer may change between the two). WEBHOOKS_ALLOW_PRIVATE lifts both for development.

import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

const internalV4 = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  internalV4.addSubnet(net, bits, 'ipv4');

// Of global unicast (2000::/3), what is not a host on the internet: IETF protocol assignments
// (Teredo, which hides an IPv4 address, among them).
const specialV6 = new BlockList();
specialV6.addSubnet('2001::', 23, 'ipv6');

/** The sixteen bytes of an IPv6 address (a zone, `%eth0`, aside). */
function ipv6Bytes(address: string): number[] {
  let text = address.split('%')[0]!.toLowerCase();
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const groups = (part: string) => (part ? part.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  const words = [...front, ...new Array(8 - front.length - back.length).fill(0), ...back];
  return words.flatMap((w) => [w >> 8, w & 0xff]);
}

/** The IPv4 address in bytes `at`…`at + 3`. */
const v4At = (bytes: number[], at: number) => bytes.slice(at, at + 4).join('.');

const startsWith = (bytes: number[], prefix: number[]) => prefix.every((b, i) => bytes[i] === b);

/**
 * Whether an IPv6 address is one a delivery must not reach. Only global unicast (2000::/3) may be
 * reached, and an address that carries an IPv4 address is judged by it: IPv4-mapped
 * (`::ffff:a.b.c.d`), NAT64's well-known prefix (`64:ff9b::a.b.c.d`, RFC 6052) and 6to4
 * (`2002:aabb:ccdd::`, RFC 3056).
 */
function isInternalV6(address: string): boolean {
  const bytes = ipv6Bytes(address);
  const zeros = (n: number) => new Array(n).fill(0);
  if (startsWith(bytes, [...zeros(10), 0xff, 0xff])) return internalV4.check(v4At(bytes, 12), 'ipv4');
  if (startsWith(bytes, [0x00, 0x64, 0xff, 0x9b, ...zeros(8)]))
    return internalV4.check(v4At(bytes, 12), 'ipv4');
  if (startsWith(bytes, [0x20, 0x02])) return internalV4.check(v4At(bytes, 2), 'ipv4');
  if ((bytes[0]! & 0xe0) !== 0x20) return true;
  return specialV6.check(address.split('%')[0]!, 'ipv6');
}

/** Whether `address` (an IP) is one a delivery must not reach. */
function isInternalAddress(address: string): boolean {
  const family = isIP(address.split('%')[0]!);
  if (family === 4) return internalV4.check(address, 'ipv4');
  return family === 6 && isInternalV6(address);
}

const FOR_DEVELOPMENT = 'WEBHOOKS_ALLOW_PRIVATE=true lifts this, for development and tests only';

/** Why `url` may not receive deliveries, or undefined when it may. */
export function refusedUrl(url: string, allowPrivate: boolean): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not an absolute URL';
  }
  if (parsed.username || parsed.password) return 'must not carry credentials';
  if (parsed.protocol !== 'https:' && !(allowPrivate && parsed.protocol === 'http:'))
    return `must be https${parsed.protocol === 'http:' ? ` (${FOR_DEVELOPMENT})` : ''}`;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && (isInternalAddress(host) || /^localhost$|\.localhost$/i.test(host)))
    return `must not name a loopback, private or link-local address (${FOR_DEVELOPMENT})`;
  return undefined;
}

/** A DNS lookup on `resolve` (dns.lookup, or a test's) that refuses internal addresses. */
export function publicOnly(resolve: typeof dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as { address: string; family: number }[];
      const refused = list.find((a) => isInternalAddress(a.address));
      if (refused) {
        const denied = Object.assign(
          new Error(`${hostname} resolves to an internal address (${refused.address}); ${FOR_DEVELOPMENT}`),
          { code: 'EADDRNOTALLOWED' },
        );
        return callback(denied, '', 0);
      }
      if ((options as { all?: boolean }).all)
        return (callback as (e: null, a: typeof list) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** The lookup deliveries connect with unless private targets are allowed. */
export const publicOnlyLookup = publicOnly(dnsLookup);
