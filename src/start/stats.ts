/** Counters of the Start endpoint, for doctor, health messages and tests. */
import type { StartAnswer } from './answers.js';

export interface StartEndpointStats {
  /** Requests whose head was parsed (every answered request, cut-off ones included). */
  requests: number;
  /** Starts answered Approved (the accept hook resolved). */
  accepted: number;
  /** Declined answers by Status.Code, e.g. { "9": 3, "996": 1 }. */
  declinedByCode: Record<string, number>;
  /** Answers by HTTP status, e.g. { "200": 10, "429": 4 }. */
  byHttpStatus: Record<string, number>;
  /** Requests whose client went away before the body arrived. */
  aborted: number;
  /** Connections the HTTP parser refused (malformed, headers too slow or too large). */
  clientErrors: number;
  /** Clients the rate limiter currently remembers. */
  trackedClients: number;
  /** Connections refused at accept time (per-source cap, suspect share, total). */
  connectionsRefused: number;
  /** Connections open now, and the source addresses the connection guard tracks. */
  openConnections: number;
  trackedSources: number;
  /** Starts that came through `qrvend relay` (counted in requests and the answers too). */
  relayed: number;
  /**
   * Relayed Starts refused because the relay's deadline had passed (on arrival, or right before
   * the Start would have been recorded): nothing recorded, nothing started, Declined 30.
   */
  relayedTooLate: number;
  /** Relayed Starts answered Approved and never confirmed by the relay: closed with nothing authorized. */
  relayedDropped: number;
  /** Relayed Starts refused for their voucher (unsigned, unknown key, scope, window, replay). */
  relayedUnvouched: number;
}

export class StartStatsCounter {
  private readonly counts: Omit<StartEndpointStats, 'trackedClients' | 'openConnections' | 'trackedSources'> = {
    requests: 0,
    accepted: 0,
    declinedByCode: {},
    byHttpStatus: {},
    aborted: 0,
    clientErrors: 0,
    connectionsRefused: 0,
    relayed: 0,
    relayedTooLate: 0,
    relayedDropped: 0,
    relayedUnvouched: 0,
  };

  relayedDropped(): void {
    this.counts.relayedDropped += 1;
  }

  relayedUnvouched(): void {
    this.counts.relayedUnvouched += 1;
  }

  relayedRequest(): void {
    this.counts.relayed += 1;
  }

  relayedTooLate(): void {
    this.counts.relayedTooLate += 1;
  }

  connectionRefused(): void {
    this.counts.connectionsRefused += 1;
  }

  request(): void {
    this.counts.requests += 1;
  }

  aborted(): void {
    this.counts.aborted += 1;
  }

  clientError(): void {
    this.counts.clientErrors += 1;
  }

  answered(answer: StartAnswer): void {
    const status = String(answer.httpStatus);
    this.counts.byHttpStatus[status] = (this.counts.byHttpStatus[status] ?? 0) + 1;
    const { Verdict, Code } = answer.body.Status;
    if (Verdict === 'Approved') this.counts.accepted += 1;
    else if (Code != null)
      this.counts.declinedByCode[String(Code)] = (this.counts.declinedByCode[String(Code)] ?? 0) + 1;
  }

  snapshot(trackedClients: number, guard: { openConnections: number; trackedSources: number }): StartEndpointStats {
    return {
      openConnections: guard.openConnections,
      trackedSources: guard.trackedSources,
      ...this.counts,
      declinedByCode: { ...this.counts.declinedByCode },
      byHttpStatus: { ...this.counts.byHttpStatus },
      trackedClients,
    };
  }
}
