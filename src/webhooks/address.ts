// Where a webhook may be sent: https only, and never to loopback, private, link-local or other
// internal addresses, checked on the URL when it is set and on the address actually connected to
// (a DNS answer may change between the two). WEBHOOKS_ALLOW_PRIVATE lifts both for development.

import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

// One list per family: a BlockList checks an IPv4 address against IPv6 rules as IPv4-mapped, so one
// shared list with ::ffff:0:0/96 would refuse every IPv4 address.
const internalV4 = new BlockList();
const internalV6 = new BlockList();
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
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  internalV6.addSubnet(net, bits, 'ipv6');

/** Whether `address` (an IP) is one a delivery must not reach. */
function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 6 && address.toLowerCase().startsWith('::ffff:')) {
    const v4 = address.slice(7);
    if (isIP(v4) === 4) return internalV4.check(v4, 'ipv4');
  }
  return family === 4 ? internalV4.check(address, 'ipv4') : internalV6.check(address, 'ipv6');
}

/** Why `url` may not receive deliveries, or undefined when it may. */
export function refusedUrl(url: string, allowPrivate: boolean): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not an absolute URL';
  }
  if (parsed.username || parsed.password) return 'must not carry credentials';
  if (parsed.protocol !== 'https:' && !(allowPrivate && parsed.protocol === 'http:')) return 'must be https';
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && (isInternalAddress(host) || /^localhost$|\.localhost$/i.test(host)))
    return 'must not name a loopback, private or link-local address';
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
          new Error(`${hostname} resolves to an internal address (${refused.address})`),
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
