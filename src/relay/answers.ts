/**
 * The answers the relay writes itself (docs/relay.md): the machine's answer passed on as it came,
 * and Declined 30 "machine not responding" with the reason the relay could not get one.
 */
import type { ServerResponse } from 'node:http';
import { DeclineCodes } from '../gateway/protocol/codes.js';
import { declined, type Echo, type StartAnswer } from '../start/answers.js';
import type { RelayedStartResult } from '../fleet/contract/index.js';
import type { RequestOutcome } from './broker-link.js';

const MACHINE_NOT_RESPONDING = 'machine not responding';

export function writeResult(res: ServerResponse, result: RelayedStartResult): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(result.httpStatus, {
    // Checked to be a JSON type (answer-check.ts); written in the one spelling the machine uses.
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(result.body),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...(result.retryAfterS === undefined ? {} : { 'Retry-After': String(result.retryAfterS) }),
  });
  res.end(result.body);
}

/** Status and code of the machine's answer, for the log line only. */
export function verdictOf(result: RelayedStartResult): { verdict?: string; code?: number } {
  try {
    const status = (JSON.parse(result.body) as { Status?: { Verdict?: unknown; Code?: unknown } }).Status;
    return {
      ...(typeof status?.Verdict === 'string' ? { verdict: status.Verdict.slice(0, 16) } : {}),
      ...(typeof status?.Code === 'number' ? { code: status.Code } : {}),
    };
  } catch {
    return {};
  }
}

type NotResponding =
  | Exclude<RequestOutcome['kind'], 'answer' | 'too-large'>
  | 'offline'
  | 'no-machine-key'
  | 'not-accepting'
  | 'machine-busy'
  | 'breaker-open'
  | 'nonconforming';

export function notResponding(kind: NotResponding, echo: Echo): StartAnswer {
  const why: Record<NotResponding, string> = {
    offline: 'the machine is offline',
    'no-machine-key': 'the machine cannot be believed',
    'not-accepting': 'the machine does not take relayed Starts',
    'machine-busy': 'too many Starts are waiting for this machine; retry',
    'breaker-open': 'the machine has not answered lately; retry later',
    nonconforming: 'the machine gave no valid answer',
    timeout: 'no answer from the machine in time',
    'broker-down': 'the machine cannot be reached now',
    overloaded: 'too many Starts waiting; retry',
    refused: 'the machine could not take the Start',
  };
  return declined(DeclineCodes.MachineNotResponding, `${MACHINE_NOT_RESPONDING}: ${why[kind]}`, echo, 200, kind);
}
