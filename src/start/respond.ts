/**
 * Putting an answer on the wire, and the small socket facts the server logs. Kept apart from
 * server.ts so the server reads as the sequence of a request.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { serialize, type StartAnswer } from './answers.js';

const BASE_HEADERS = {
  'Content-Type': 'application/json; charset=utf-8',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
};

/**
 * Writes an answer. `bodyUnread`: the request body was refused or cut off, so the connection
 * cannot be reused; Node then drains (and discards) what the client still sends before closing,
 * and `lingerMs` bounds how long it may (long enough for the client to read the answer; closing
 * at once with unread input would send a reset that can destroy the answer in flight).
 */
export function writeAnswer(res: ServerResponse, answer: StartAnswer, bodyUnread: boolean, lingerMs: number): void {
  if (res.headersSent || res.destroyed) return;
  const payload = serialize(answer);
  res.writeHead(answer.httpStatus, {
    ...BASE_HEADERS,
    'Content-Length': Buffer.byteLength(payload),
    ...(bodyUnread ? { Connection: 'close' } : {}),
    ...answer.headers,
  });
  res.end(payload);
  if (bodyUnread) {
    const socket = res.socket;
    res.once('finish', () => setTimeout(() => socket?.destroy(), lingerMs).unref());
  }
}

/** Writes an answer straight to a socket the HTTP parser gave up on (no response object exists). */
export function writeRawAnswer(socket: Socket, answer: StartAnswer, lingerMs: number): void {
  const payload = serialize(answer);
  const head = [
    `HTTP/1.1 ${answer.httpStatus} ${answer.reason}`,
    ...Object.entries(BASE_HEADERS).map(([k, v]) => `${k}: ${v}`),
    `Content-Length: ${Buffer.byteLength(payload)}`,
    'Connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${payload}`);
  setTimeout(() => socket.destroy(), lingerMs).unref();
}

/** The rate limit's key: the peer address, IPv4-mapped IPv6 written as IPv4. */
export function clientOf(socket: Socket): string {
  const address = socket.remoteAddress ?? 'unknown';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/** An error for a log line: code and message only (no stack, no request data), token scrubbed. */
export function scrubbedError(err: unknown, secret: string): { code?: string; message: string } {
  const scrub = (text: string): string => (secret.length > 0 ? text.split(secret).join('[redacted]') : text);
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string'
      ? { code: scrub(code), message: scrub(err.message) }
      : { message: scrub(err.message) };
  }
  return { message: scrub(String(err)) };
}
