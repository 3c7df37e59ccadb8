/**
 * The live channel (Server-Sent Events on /live): "something changed" at most once a second,
 * and a comment every 25 s so proxies keep the stream open. Bounded in connections; an
 * operator's page then refreshes its #live section (assets/live-script.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { CONTENT_SECURITY_POLICY, send } from './http-kit.js';

const MAX_STREAMS = 500;
const COALESCE_MS = 1000;
const HEARTBEAT_MS = 25_000;

export class LiveChannel {
  private readonly streams = new Set<ServerResponse>();
  private timer: NodeJS.Timeout | null = null;
  private readonly heartbeat: NodeJS.Timeout;

  constructor() {
    this.heartbeat = setInterval(() => this.write(': keep-alive\n\n'), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  attach(req: IncomingMessage, res: ServerResponse): void {
    if (this.streams.size >= MAX_STREAMS) {
      send(res, 503, 'text/plain; charset=utf-8', 'too many live pages open\n', { 'Retry-After': '30' });
      return;
    }
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Security-Policy': CONTENT_SECURITY_POLICY,
      'X-Content-Type-Options': 'nosniff',
    });
    res.write('retry: 3000\n\n');
    req.socket.setTimeout(0);
    this.streams.add(res);
    res.on('close', () => this.streams.delete(res));
  }

  /** Something was stored: tell every open page, coalesced. */
  changed(): void {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.write('event: changed\ndata: 1\n\n');
    }, COALESCE_MS);
    this.timer.unref();
  }

  get size(): number {
    return this.streams.size;
  }

  private write(text: string): void {
    for (const res of this.streams) res.write(text);
  }

  close(): void {
    clearInterval(this.heartbeat);
    if (this.timer !== null) clearTimeout(this.timer);
    for (const res of this.streams) res.end();
    this.streams.clear();
  }
}
