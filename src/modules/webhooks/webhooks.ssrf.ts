import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { validation } from '../../errors.js';

/**
 * Whether a destination address is refused: anything but a globally routable unicast address
 * (loopback, private, link-local with 169.254.0.0/16, CGNAT, unique-local, multicast, unspecified,
 * reserved, documentation...), an IPv4-mapped IPv6 address judged as the IPv4 address it carries.
 * Every other IPv6 form that carries an IPv4 address is refused whatever it carries: IPv4-compatible
 * (::a.b.c.d, deprecated, `[::127.0.0.1]` in a URL), NAT64, 6to4 and Teredo (ranges other than unicast).
 */
export function blockedAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
    else if (v6.parts.slice(0, 6).every((p) => p === 0)) return true;
  }
  return parsed.range() !== 'unicast';
}

export class BlockedDestination extends Error {}

/** The host of a URL, IPv6 brackets removed. */
export const hostOf = (url: string) => new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * Every address `host` resolves to, refused if any is blocked. An IP literal is its own address; a
 * name that does not resolve (yet) is not refused here: its deliveries fail until it does.
 */
export async function checkHost(host: string, allowPrivate: boolean): Promise<void> {
  if (allowPrivate) return;
  if (ipaddr.isValid(host)) {
    if (blockedAddress(host)) throw new BlockedDestination(`${host} is not a public address`);
    return;
  }
  let addresses: dns.LookupAddress[];
  try {
    addresses = await dns.promises.lookup(host, { all: true, verbatim: true });
  } catch {
    return;
  }
  const bad = addresses.find((a) => blockedAddress(a.address));
  if (bad) throw new BlockedDestination(`${host} resolves to ${bad.address}, which is not a public address`);
}

/**
 * The DNS lookup of a delivery's connection: it resolves once and connects to an address it has
 * checked, so a name that changes its answer between a check and the connection (DNS rebinding)
 * reaches no private address.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const usable = allowPrivate ? addresses : addresses.filter((a) => !blockedAddress(a.address));
      const chosen = usable[0];
      if (!chosen) return callback(new BlockedDestination(`${hostname} resolves to no public address`), '', 0);
      if (options.all) return callback(null, [chosen]);
      callback(null, chosen.address, chosen.family);
    });
  };
}

/**
 * A URL that may be posted to, as given for the body field `field`: absolute http(s), no
 * credentials, and (unless `allowPrivate`) a host that is and resolves only to public addresses;
 * 400 naming the field otherwise. Answers it normalised.
 */
export async function destinationUrl(raw: string, allowPrivate: boolean, field: string): Promise<string> {
  let parsed: URL;
  try {
    parsed = new URL(raw.trim());
  } catch {
    throw validation([{ field, message: 'must be an absolute http or https URL' }]);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw validation([{ field, message: 'must be an http or https URL' }]);
  if (parsed.username || parsed.password) throw validation([{ field, message: 'must not carry credentials' }]);
  try {
    await checkHost(hostOf(parsed.href), allowPrivate);
  } catch (err) {
    if (err instanceof BlockedDestination) throw validation([{ field, message: `${err.message}: refused (THREATMON_WEBHOOK_ALLOW_PRIVATE allows it)` }]);
    throw err;
  }
  return parsed.href;
}
