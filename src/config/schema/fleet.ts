/**
 * The fleet link, remote updates, the DEX audit and logging (docs/fleet.md,
 * docs/updates-on-the-machine.md, docs/dex.md, docs/operations.md).
 */
import { z } from 'zod';
import { LOG_LEVELS } from '../../core/log.js';
import { TOPIC_LEVEL, TOPIC_PREFIX } from '../../fleet/contract/topics.js';
import { int, AbsolutePath, MdbPort } from './primitives.js';

/** The fleet link (docs/fleet.md): off while url is null. */
export const FleetSection = z.strictObject({
  /** mqtts:// or wss:// (plain mqtt:// or ws:// only to a loopback host: a local broker or a test). */
  url: z
    .string()
    .max(2048)
    .refine(
      (u) => /^(mqtts?|wss?):\/\/[^\s]+$/.test(u),
      'must be an mqtts:// or wss:// URL, e.g. mqtts://broker.example.com:8883',
    )
    .nullable(),
  /** Every topic is under <topicPrefix>/<machineId>/. */
  topicPrefix: z.string().regex(TOPIC_PREFIX, 'letters, digits and . _ : - in up to 8 levels separated by /'),
  /** null = the TerminalId. */
  machineId: z.string().regex(TOPIC_LEVEL, 'letters, digits and . _ : - only (1 to 128)').nullable(),
  /** MQTT protocol: 5, or 4 (3.1.1) for brokers that speak only that. */
  protocolVersion: z.union([z.literal(4), z.literal(5)]),
  /** CA bundle (PEM) for the broker's certificate; null = system CAs. */
  caFile: AbsolutePath.nullable(),
  /** Client certificate and key (PEM), together or not at all. */
  certFile: AbsolutePath.nullable(),
  keyFile: AbsolutePath.nullable(),
  username: z.string().min(1).max(256).nullable(),
  /** File holding the broker password (never the password itself in config). */
  passwordFile: AbsolutePath.nullable(),
  /** How often `health` is published (QoS 0). */
  healthIntervalS: int(5, 86_400),
  keepaliveS: int(5, 3_600),
  /** Bound on queued non-sale events (alarms) while the broker is away; sales are never dropped. */
  maxQueuedEvents: int(10, 1_000_000),
  /** Take Starts relayed by `qrvend relay` over the fleet link (cmd/start). */
  acceptRelayedStart: z.boolean(),
  /**
   * Where config.set from the fleet keeps its changes (docs/fleet.md): layered over the site
   * file, in the state directory because /etc/qrvend/config.json is a root-owned conffile.
   * Only the defaults and the site file may set it (the overlay cannot move itself).
   */
  configOverlay: AbsolutePath,
  /**
   * The trust file (src/trust/keys.ts, docs/fleet.md "Signed commands"): the operators' Ed25519
   * public keys and their scopes, root-owned. Absent or null: no key, so no command that needs
   * a signature runs.
   */
  trustFile: AbsolutePath.nullable().default('/etc/qrvend/fleet-trust.json'),
  /**
   * The machine's own Ed25519 key (`qrvend fleet keygen --machine`, src/trust/machine-key.ts):
   * it signs the status and replies the Start relay believes (docs/relay.md). Mode 0600, owned
   * by the agent's user, never copied off the machine. null: nothing is signed and the relay
   * refuses this machine's Starts.
   */
  machineKeyFile: AbsolutePath.nullable().default(null),
  /** Take ping, doctor, outbox.list and config.get unsigned (they change nothing). */
  allowUnsignedReads: z.boolean().default(false),
  /** Ceilings on what config.set may set (src/config/remote-keys.ts); only the site file sets them. */
  remoteLimits: z
    .strictObject({
      /**
       * Highest staticQr.preauthAmount the fleet may set; null = the site's own staticQr.preauthAmount (the fleet can
       * only lower it).
       */
      maxPreauthAmount: z.number().positive().max(1_000_000).nullable().default(null),
    })
    .default({ maxPreauthAmount: null }),
});

/** Remote updates (docs/updates.md). */
export const UpdatesSection = z
  .strictObject({
    /** Where downloads and update state are kept; null = an `updates` folder beside store.path. */
    dir: AbsolutePath.nullable().default(null),
    /** CA bundle (PEM) for the artifact server's certificate; null = system CAs (the gateway's TLS rules). */
    caFile: AbsolutePath.nullable().default(null),
    /** Data cap per update: bytes fetched (including retries after cuts) beyond which the download is abandoned. */
    maxDownloadBytes: int(1024 * 1024, 2 * 1024 * 1024 * 1024).default(512 * 1024 * 1024),
    /**
     * How long a downloaded update may wait for an idle machine before UPDATE_DEFERRED is raised (it keeps waiting).
     */
    maxDeferralS: int(60, 30 * 86_400).default(86_400),
    /** How long the new version's trial has to report healthy before it is rolled back. */
    healthyWithinS: int(30, 3_600).default(180),
  })
  .default({ dir: null, caFile: null, maxDownloadBytes: 512 * 1024 * 1024, maxDeferralS: 86_400, healthyWithinS: 180 });

/** The VMC's own audit over its DEX jack (docs/dex.md): off while port is null. */
export const DexSection = z
  .strictObject({
    /** Serial device wired to the DEX jack (a USB-RS232 adapter or a UART with a level shifter); null = no audit. */
    port: MdbPort.refine((s) => s !== 'sim', 'must be an absolute device path like /dev/ttyUSB0')
      .nullable()
      .default(null),
    /** Which protocol the VMC speaks; auto = detect at the first read and remember it. */
    protocol: z.enum(['auto', 'dex-ucs', 'ddcmp']).default('auto'),
    /** Scheduled reads every this many seconds; 0 = on demand only (dex.read, `qrvend dex read`). */
    intervalS: int(0, 7 * 86_400).default(86_400),
    /** Largest audit file accepted, bytes. */
    maxFileBytes: int(1024, 4 * 1024 * 1024).default(1024 * 1024),
    /**
     * Cashless vends by which the VMC's DA/DB count and the ledger may differ over one interval before AUDIT_MISMATCH.
     */
    reconcileToleranceVends: int(0, 1_000).default(0),
  })
  .default({ port: null, protocol: 'auto', intervalS: 86_400, maxFileBytes: 1024 * 1024, reconcileToleranceVends: 0 });

export const LogSection = z.strictObject({
  level: z.enum(LOG_LEVELS),
  /** How often the daemon logs a `stats` line (event-loop delay, reader counters, memory); 0 = never. */
  statsIntervalMs: z.number().int().min(0).max(86_400_000),
  /**
   * Tick of the event-loop delay sampler behind the stats line. Each tick wakes the machine loop:
   * 1 ms is ~1,000 wake-ups a second (1.8 % of a core on an idle machine, docs/decisions/benchmarks.md), 100 ms is 10
   * (stalls longer than a tick are still caught; shorter ones only when they overlap one). The
   * bench sets 1 for its event-loop figure.
   */
  loopDelayResolutionMs: z.number().int().min(1).max(1000).default(100),
});
