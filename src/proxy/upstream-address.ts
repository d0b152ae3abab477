// Which addresses an upstream may resolve to: loopback, private, link-local and other special ranges are refused unless
// PROXY_ALLOW_PRIVATE_UPSTREAMS is set (an organization must not reach the service's own network through the proxy).
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

const special = new BlockList();
for (const [net, prefix] of [
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
] as const) special.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) special.addSubnet(net, prefix, 'ipv6');

/** True for an address the proxy must not connect to by default. IPv4-mapped IPv6 addresses are judged as IPv4. */
export function isSpecialAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return special.check(mapped[1], 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return special.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

export class ForbiddenUpstreamAddress extends Error {
  readonly code = 'EUPSTREAMFORBIDDEN';
  constructor(host: string) {
    super(`upstream ${host} resolves to a loopback, private or link-local address (set PROXY_ALLOW_PRIVATE_UPSTREAMS=true to allow)`);
  }
}

/** The hostname of a URL as net.connect sees it (IPv6 literals without brackets). */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** A dns.lookup for http.request that refuses special addresses (checked on the resolved address, so DNS cannot rebind past it). */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as LookupAddress[];
      const allowed = allowPrivate ? list : list.filter((a) => !isSpecialAddress(a.address));
      if (allowed.length === 0) return callback(new ForbiddenUpstreamAddress(hostname) as unknown as NodeJS.ErrnoException, '', 0);
      if (options.all) return callback(null, allowed);
      callback(null, allowed[0].address, allowed[0].family);
    });
  };
}
