/**
 * Where the console may send a webhook (docs/security.md "Webhook receivers"): HTTPS, or plain
 * HTTP to a loopback address; never to an address inside the operator's network unless the
 * configuration allows private networks, and never to link-local (cloud metadata at
 * 169.254.169.254), unspecified or multicast addresses. The address is checked on every
 * connection, after the name is resolved, so a name that resolves elsewhere later (DNS
 * rebinding) is refused then too.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { ErrorCodes, QrvendError } from '../../core/errors.js';

export interface ReceiverPolicy {
  /** Allow RFC 1918, unique-local and shared (CGNAT) addresses: receivers inside the operator's network. */
  allowPrivate: boolean;
}

function blockList(entries: [string, number, 'ipv4' | 'ipv6'][]): BlockList {
  const list = new BlockList();
  for (const [net, prefix, type] of entries) list.addSubnet(net, prefix, type);
  return list;
}

const LOOPBACK = blockList([
  ['127.0.0.0', 8, 'ipv4'],
  ['::1', 128, 'ipv6'],
]);
const NEVER = blockList([
  ['0.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['224.0.0.0', 3, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
]);
const PRIVATE = blockList([
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['fc00::', 7, 'ipv6'],
]);

/** An IPv4 address written as IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it is. */
function plainAddress(address: string): { address: string; type: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped !== null) return { address: mapped[1]!, type: 'ipv4' };
  return { address, type: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

export function isLoopback(address: string): boolean {
  const a = plainAddress(address);
  return LOOPBACK.check(a.address, a.type);
}

/** Why the console will not connect to `address`, or null when it may. */
export function refusedAddress(address: string, policy: ReceiverPolicy): string | null {
  const a = plainAddress(address);
  if (LOOPBACK.check(a.address, a.type)) return null;
  if (NEVER.check(a.address, a.type)) return `${address} is a link-local, unspecified or multicast address`;
  if (!policy.allowPrivate && PRIVATE.check(a.address, a.type)) {
    return `${address} is inside a private network (webhooks.allowPrivateNetworks is false)`;
  }
  return null;
}

const refused = (why: string) =>
  new QrvendError(ErrorCodes.CONSOLE_RECEIVER_REFUSED, `webhook receiver refused: ${why}`, {
    hint: 'give an https:// URL of a receiver on the internet (or http:// on loopback); docs/security.md',
  });

/** The URL's own checks, before any connection: https, or http to a loopback address; no credentials. */
export function checkReceiverUrl(text: string, policy: ReceiverPolicy): URL {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw refused(`${JSON.stringify(text.slice(0, 80))} is not a URL`);
  }
  if (text.length > 2048) throw refused('the URL is longer than 2,048 characters');
  if (url.username !== '' || url.password !== '') throw refused('a URL with a user or password in it');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = isIP(host) !== 0;
  if (url.protocol === 'http:') {
    if (!(literal && isLoopback(host)) && host !== 'localhost') throw refused('plain http:// only to loopback');
  } else if (url.protocol !== 'https:') throw refused(`${url.protocol} is not https:`);
  if (literal) {
    const why = refusedAddress(host, policy);
    if (why !== null) throw refused(why);
  }
  return url;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for the HTTP client that refuses an address the policy does not allow, on every connection. */
export function guardedLookup(policy: ReceiverPolicy, resolve: typeof dnsLookup = dnsLookup) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const list = addresses as LookupAddress[];
      for (const a of list) {
        const why = refusedAddress(a.address, policy);
        if (why !== null)
          return callback(Object.assign(new Error(`${hostname}: ${why}`), { code: 'EREFUSEDADDR' }), '');
      }
      if (options.all === true) return callback(null, list);
      const first = list[0];
      if (first === undefined)
        return callback(Object.assign(new Error(`${hostname}: no address`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };
}
