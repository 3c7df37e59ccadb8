/**
 * The Start endpoint's socket-level bounds: used by the server (src/start/server.ts) and the
 * guarded listener under it (src/start/guarded-server.ts), so neither imports the other for them.
 */

/** Socket-level bounds. Not in the config: they protect the machine, they are not site policy. */
export interface StartServerLimits {
  /** Whole request head must arrive within this (slow-header senders are cut off with 408). */
  headersTimeoutMs: number;
  /** Whole body must arrive within this after the head (slow-body senders are cut off with 408). */
  bodyTimeoutMs: number;
  /** Node's bound on receiving a whole request; a backstop to the two above. */
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** An idle socket (no bytes either way) is closed after this. */
  idleSocketTimeoutMs: number;
  /** Connections open at once; further ones are dropped at accept. */
  maxConnections: number;
  /** Connections one source address may hold at once (start.maxConnectionsPerSource). */
  maxConnectionsPerSource: number;
  /** Share of maxConnections that sources which misbehaved lately may hold together. */
  suspectShare: number;
  /** How long a source stays suspect after a slow head, a slow body or knocking at its cap. */
  suspectForMs: number;
  maxHeaderBytes: number;
  /** After refusing a body it did not read, the connection is kept this long so the client can read the answer. */
  lingerMs: number;
  /** close() waits this long for answers in progress before dropping connections. */
  closeGraceMs: number;
}
