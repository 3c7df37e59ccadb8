/**
 * The live channel (Server-Sent Events on /live): "something changed" at most once a second,
 * and a comment every 25 s so proxies keep the stream open. Bounded in connections; an
 * operator's page then refreshes its #live section (assets/live-script.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SECURITY_HEADERS } from './http-kit.js';

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

  /** No room for another stream: the route answers 503 instead of attaching. */
  get full(): boolean {
    return this.streams.size >= MAX_STREAMS;
  }

  /** Takes over a response the server let go of (fastify's `reply.hijack()`) and keeps it open. */
  attach(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'text/event-stream; charset=utf-8' });
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
