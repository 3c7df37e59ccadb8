/**
 * The round trip on the machine's own command topic that a configuration trial needs before it is
 * confirmed (docs/decisions/fleet-trust.md item 4): "connected" is not "reachable". A change of identity, prefix or
 * credentials can leave the link connected yet deaf (the broker's ACL drops what the machine
 * subscribes to, or its publishes), and then the fleet can never reach the machine again.
 *
 * The machine publishes `{"probe": <nonce>}` on `<prefix>/<machineId>/cmd/_probe` (the ACL's one
 * write permission on its own command topics) and waits for it to come back through its own
 * `cmd/+` subscription. The probe is not a command: the worker hands it here before the command
 * dispatcher, so it runs nothing and is never answered; a probe whose nonce is not this start's
 * (another client's, an old one) is ignored.
 */
import { randomBytes } from 'node:crypto';

/** The name after `cmd/`; underscore: never a command name (src/fleet/contract/topics.ts). */
export const PROBE_NAME = '_probe';
export const probeTopic = (prefix: string, machineId: string) => `${prefix}/${machineId}/cmd/${PROBE_NAME}`;

/** A probe is tiny; anything larger on that topic is not ours. */
const MAX_PROBE_BYTES = 256;
const RESEND_MS = 5_000;

/** True when `payload` is this start's probe. Pure; whatever arrives, never throws. */
export function isOwnProbe(payload: Buffer, nonce: string): boolean {
  if (payload.length > MAX_PROBE_BYTES) return false;
  try {
    const value = JSON.parse(payload.toString('utf8')) as unknown;
    return typeof value === 'object' && value !== null && (value as { probe?: unknown }).probe === nonce;
  } catch {
    return false;
  }
}

export interface Probe {
  /** The subscription to `cmd/+` is in place: (re)send until the probe is back. */
  subscribed(): void;
  /** A message on the probe topic arrived. */
  received(payload: Buffer): void;
  readonly returned: boolean;
  stop(): void;
}

export function createProbe(o: { publish(payload: string): void; onReturned(): void }): Probe {
  const nonce = randomBytes(16).toString('hex');
  const body = JSON.stringify({ probe: nonce });
  let returned = false;
  let timer: NodeJS.Timeout | null = null;
  const stop = () => {
    if (timer !== null) clearInterval(timer);
    timer = null;
  };
  return {
    subscribed() {
      if (returned) return;
      o.publish(body);
      // A probe lost with a broken connection is sent again; the nonce stays, so any copy counts.
      timer ??= setInterval(() => o.publish(body), RESEND_MS);
      timer.unref();
    },
    received(payload) {
      if (returned || !isOwnProbe(payload, nonce)) return;
      returned = true;
      stop();
      o.onReturned();
    },
    get returned() {
      return returned;
    },
    stop,
  };
}
