/**
 * The payment gateway is reachable and answering: one plain request to gateway.baseUrl with a
 * short deadline. Any HTTP answer proves the network path, DNS and TLS work (the gateway only
 * takes POSTs to its operations, so a 404 or 405 here is normal); no answer is a failure.
 */
import http from 'node:http';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type { Check, CheckOutcome } from '../types.js';

const DEADLINE_MS = 5_000;

interface Answer {
  status: number;
  date: string | undefined;
}

function ask(url: URL, ca: Buffer | undefined, connectTimeoutMs: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(
      url,
      { method: 'GET', ...(ca ? { ca } : {}), headers: { 'user-agent': 'qrvend-doctor' } },
      (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, date: res.headers.date });
        req.destroy();
      },
    );
    const overall = setTimeout(() => req.destroy(new Error(`no answer within ${DEADLINE_MS} ms`)), DEADLINE_MS);
    req.on('socket', (socket) => {
      // A connect that hangs (packets dropped) fails at the configured connect deadline.
      const connect = setTimeout(
        () => req.destroy(new Error(`no connection within ${connectTimeoutMs} ms`)),
        connectTimeoutMs,
      );
      socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => clearTimeout(connect));
      socket.once('close', () => clearTimeout(connect));
    });
    req.on('close', () => clearTimeout(overall));
    req.on('error', reject);
    req.end();
  });
}

function adviceFor(err: NodeJS.ErrnoException, host: string): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return `nothing listens at ${host}: check gateway.baseUrl (host and port)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the name ${host} does not resolve: check DNS (resolvectl status) and gateway.baseUrl`;
    case 'ENETUNREACH':
    case 'EHOSTUNREACH':
      return 'no route to the gateway: check the network link (ip addr, ip route) and the modem';
    default:
      if (/certificate|self.signed|CERT_/i.test(`${err.code ?? ''} ${err.message}`)) {
        return 'TLS certificate rejected: check the clock (see the clock check) and gateway.caFile for a private CA';
      }
      return 'check the network link, a firewall or proxy on the way, and gateway.baseUrl';
  }
}

export const gatewayCheck: Check = {
  id: 'gateway',
  title: 'payment gateway reachable',
  needsConfig: true,
  async run(ctx, config) {
    const url = new URL(config.gateway.baseUrl);
    const details: Record<string, unknown> = { baseUrl: url.origin };
    let ca: Buffer | undefined;
    if (config.gateway.caFile !== null) {
      try {
        ca = readFileSync(config.gateway.caFile);
      } catch (err) {
        return {
          status: 'FAIL',
          summary: `gateway.caFile ${config.gateway.caFile} cannot be read: ${(err as Error).message}`,
          action: 'fix gateway.caFile',
          details,
        };
      }
    }
    const connectTimeoutMs = Math.min(config.gateway.connectTimeoutMs, DEADLINE_MS);
    const started = Date.now();
    let answer: Answer;
    try {
      answer = await ask(url, ca, connectTimeoutMs);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      return {
        status: 'FAIL',
        summary: `no answer from ${url.origin}: ${e.code ?? e.message}${e.code ? ` (${e.message})` : ''}`,
        action: adviceFor(e, url.host),
        details: { ...details, error: e.code ?? e.message },
      };
    }
    const elapsedMs = Date.now() - started;
    details.httpStatus = answer.status;
    details.elapsedMs = elapsedMs;
    if (answer.date !== undefined && !Number.isNaN(Date.parse(answer.date))) {
      ctx.facts.gatewayDate = new Date(answer.date);
      ctx.facts.gatewayDateSeenAt = ctx.now();
    }
    const outcome: CheckOutcome =
      answer.status >= 500
        ? {
            status: 'WARN',
            summary: `${url.origin} answers, but with HTTP ${answer.status} (${elapsedMs} ms)`,
            action: 'the gateway side reports a problem: if sales fail, contact the provider',
            details,
          }
        : { status: 'OK', summary: `${url.origin} answers (HTTP ${answer.status}, ${elapsedMs} ms)`, details };
    return outcome;
  },
};
