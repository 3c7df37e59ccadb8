/** Messages between the fleet simulation (the operator side) and its child process of simulated machines. */
export type ToMachines =
  | {
      type: 'start';
      url: string;
      prefix: string;
      machines: number;
      protocol: 4 | 5;
      seed: number;
      connectConcurrency: number;
      /**
       * A module whose `handlers` export (Record<name, CommandHandler>) answers
       * commands beyond ping, e.g. `start` for the relay.
       */
      handlersModule?: string;
    }
  | { type: 'run'; seconds: number; salesPerSecond: number; healthIntervalS: number; alarmsPerSecond: number }
  | { type: 'crash'; count: number }
  | { type: 'close' };

export interface RunFigures {
  wallMs: number;
  salesPublished: number;
  salesAcked: number;
  salesFailed: number;
  alarmEvents: number;
  healthMessages: number;
  statusUpdates: number;
  /** CPU of the machines' process during the run (every message, keepalives, the mqtt client). */
  cpuUserMs: number;
  cpuSystemMs: number;
  /** Bytes all machine connections wrote to the broker during the run. */
  bytesWritten: number;
  /** Mean size of one sale event: the JSON payload, and the whole PUBLISH packet on the wire. */
  salePayloadBytes: number;
  salePacketBytes: number;
}

export type FromMachines =
  | { type: 'ready'; connectMs: number; machines: number }
  | { type: 'ran'; figures: RunFigures }
  | { type: 'crashed'; machineIds: string[] }
  | { type: 'error'; message: string };

/**
 * eventId of a simulated sale: machine, sequence and the publish instant
 * (process.hrtime, ns; monotonic and system-wide on Linux).
 */
export function simEventId(machineId: string, seq: number, hrtimeNs: bigint): string {
  return `${machineId}:${seq}:${hrtimeNs}`;
}

export function publishedAtNs(eventId: string): bigint | null {
  const last = eventId.slice(eventId.lastIndexOf(':') + 1);
  return /^\d{1,20}$/.test(last) ? BigInt(last) : null;
}
