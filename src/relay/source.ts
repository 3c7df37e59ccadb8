/**
 * Who sent a Start, as the relay's per-source bounds count it (docs/decisions/fleet-trust.md item 10):
 *
 *   - an IPv4 address is one source; an IPv6 address is keyed by its /64, the block one customer
 *     line or one host is given, so a client cannot become 2^64 sources by changing the low bits;
 *   - behind a load balancer (relay.trustForwardedFor) the source is the last X-Forwarded-For entry,
 *     the one the balancer appended, never the balancer's own address.
 */
import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { clientOf } from '../start/respond.js';

/** The 8 groups of an IPv6 address as numbers, or null when it is not one. */
function ipv6Groups(address: string): number[] | null {
  if (isIP(address) !== 6) return null;
  let text = address.split('%')[0]!;
  // A dotted IPv4 tail (::ffff:1.2.3.4) becomes two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, null];
  const left = head === '' ? [] : head.split(':');
  const right = tail === null || tail === '' ? [] : tail.split(':');
  const zeros = tail === null ? 0 : 8 - left.length - right.length;
  const groups = [...left, ...Array<string>(zeros).fill('0'), ...right].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/** The key the per-source bounds count: the IPv4 address, or the IPv6 /64 (`2001:db8:1:2::/64`). */
export function sourceKey(address: string): string {
  const plain = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
  const groups = ipv6Groups(plain);
  if (groups === null) return plain;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The wallet's address: the socket's, or the last X-Forwarded-For entry behind a trusted load balancer. */
export function addressOf(req: IncomingMessage, trustForwardedFor: boolean): string {
  if (trustForwardedFor) {
    const header = req.headers['x-forwarded-for'];
    const value = Array.isArray(header) ? header[header.length - 1] : header;
    const last = value?.split(',').pop()?.trim();
    if (last !== undefined && last.length <= 45 && isIP(last) !== 0)
      return last.startsWith('::ffff:') ? last.slice(7) : last;
  }
  return clientOf(req.socket);
}
