/**
 * The configuration schema: every key qrvend reads, with its type, range and default meaning.
 * `config/default.json` supplies every value; a site file layered over it may change any of them
 * but may not add keys (objects are strict), so a typo is refused at start instead of ignored.
 */
import { z } from 'zod';
import { LOG_LEVELS } from '../core/log.js';
import { LANGUAGES } from './languages.js';
import { TOPIC_LEVEL, TOPIC_PREFIX } from '../fleet/contract/topics.js';
import { BOARD_KEY_NAMES } from './board-keys.js';
import { PROFILE_NAMES, resolveProfile } from './mdb-profiles.js';

const int = (min: number, max: number) => z.number().int().min(min).max(max);
/** A GPIO chip: a /dev/gpiochipN path or a chip label (letters, digits, - _ . : @ ,). */
const GpioChip = z.union([
  z.string().regex(/^\/dev\/gpiochip\d{1,3}$/, 'a chip path looks like /dev/gpiochip0'),
  z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.:@,-]{0,31}$/, 'a chip label (gpiodetect shows them), e.g. pinctrl-rp1'),
]);
/** A GPIO line: its name from the device tree (GPIO17) or its offset on the chip. */
const GpioLine = z.union([int(0, 1_023), z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.:\[\]-]{0,31}$/, 'a line name as gpioinfo prints it, e.g. GPIO17')]);
const text = (max: number) => z.string().max(max);
const nonEmpty = (max: number) => z.string().min(1).max(max);

/**
 * A file path the daemon opens. Absolute only: a relative path resolves against whatever working
 * directory the process happened to start in (issue 20 item 10: the daemon looped forever).
 */
export const AbsolutePath = z
  .string()
  .min(1)
  .max(4096)
  .refine((s) => s.startsWith('/'), 'must be an absolute path (starting with /)')
  .refine((s) => !s.includes('\0'), 'must not contain a NUL byte');

/**
 * `mdb.port`: a device path that no tool can read as anything but a path (issue 20 item 12: a
 * path with `!!SYSTEM:` reached socat as an address), or `sim`. Absolute, letters, digits and
 * `/ _ . -` only; not limited to /dev because test rigs and some USB adapters use symlinks
 * elsewhere (a pty pair's link in a temporary directory, /run/...).
 */
export const DEVICE_PATH = /^\/[A-Za-z0-9/_.-]+$/;
export const MdbPort = z
  .string()
  .max(4096)
  .refine((s) => s === 'sim' || (DEVICE_PATH.test(s) && !s.split('/').includes('..')), 'must be "sim" or an absolute device path like /dev/serial0 (letters, digits and / _ . - only, no ..)');

/** `host:port`, IPv6 hosts in brackets: `[::1]:8080`. */
export const ListenAddress = z.string().refine((s) => {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(s);
  return m !== null && Number(m[2]) <= 65535;
}, 'must be host:port with a port 0..65535, e.g. 127.0.0.1:8080');

const CountryInfoConfig = z.strictObject({
  Alpha2Code: z.string().length(2),
  Alpha3Code: z.string().length(3),
  NumericCode: z.string().regex(/^\d{3}$/, 'must be 3 digits'),
  Name: z.string(),
  Intra: z.string(),
});

const GeoLocationConfig = z.strictObject({
  Address: text(255).optional(),
  City: text(255).optional(),
  CountryCode: z.string().optional(),
  State: z.string().optional(),
  ZipCode: text(255).optional(),
  Latitude: z.number().min(-90).max(90).optional(),
  Longitude: z.number().min(-180).max(180).optional(),
});

/** CustomData values are strings holding JSON text (seed: "Each value is a string holding JSON text"). */
const JsonText = z.string().refine((text) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}, 'must be a string holding JSON text, e.g. "{\\"region\\":\\"north\\"}"');

/** A colour as #rrggbb. */
const Hex = z.string().regex(/^#[0-9a-fA-F]{6}$/, 'colours are written #rrggbb');
/** The colours of `display.colors` (config.set names only these: src/config/remote-keys.ts). */
export const DISPLAY_COLOR_NAMES = ['background', 'text', 'accent', 'error', 'muted'] as const;

function isSupportedLocale(tag: string): boolean {
  try {
    return Intl.NumberFormat.supportedLocalesOf([tag]).length === 1;
  } catch {
    return false;
  }
}

const CatalogItem = z.strictObject({
  name: nonEmpty(255),
  /** The product's name in other display languages (display.language), e.g. { "de": "Wasser" }. */
  names: z.partialRecord(z.enum(LANGUAGES), nonEmpty(255)).default({}),
  measurement: int(0, 1_000_000).default(1),
  unitOfMeasurement: nonEmpty(50).default('Unit'),
  /** Minimum age for this item, sent as BasicInfo.AgeLimitation. */
  ageLimit: int(0, 120).nullable().default(null),
});

/** Loopback hosts: the only ones plain http:// may reach (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (host === 'localhost' || host === '::1' || host === '0:0:0:0:0:0:0:1') return true;
  const v4 = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  return v4 !== null && v4.slice(1).every((n) => Number(n) <= 255);
}

/** Design section 3: HTTPS to the gateway; plain HTTP only to a loopback address. */
export function isAllowedGatewayUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return true; // the URL rule itself reports it
  }
  return parsed.protocol === 'https:' || (parsed.protocol === 'http:' && isLoopbackHost(parsed.hostname));
}

/** Design section 10: TLS to the broker; plain MQTT (or WebSocket) only to a loopback address. */
export function isAllowedFleetUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol === 'mqtts:' || parsed.protocol === 'wss:') return true;
  return (parsed.protocol === 'mqtt:' || parsed.protocol === 'ws:') && isLoopbackHost(parsed.hostname);
}

/** How the Start endpoint is reached: what doctor reports, and `refused` when the config must not start. */
export type StartTransport = 'none' | 'https' | 'loopback' | 'tls-proxy' | 'refused';

export function startEndpointTransport(start: { listen: string | null; certFile: string | null; behindTlsProxy: boolean }): StartTransport {
  if (start.listen === null) return 'none';
  if (start.certFile !== null) return 'https';
  // ListenAddress checked the shape: host:port, an IPv6 host in brackets.
  const host = /^(\[[^\]]+\]|[^:]+):\d+$/.exec(start.listen)?.[1] ?? '';
  if (isLoopbackHost(host)) return 'loopback';
  return start.behindTlsProxy ? 'tls-proxy' : 'refused';
}

/**
 * Why `amount` is no amount of a currency with `decimalPlaces` decimals, or null: below its smallest
 * unit (the gateway would be asked for 0), or with more decimals than it has (the amount asked and
 * the amount the machine shows and accounts would differ). Floats carry 0.1 as 0.1000000000000000055,
 * so "more decimals" means not within a millionth of a minor unit.
 */
export function minorUnitProblem(amount: number, decimalPlaces: number): string | null {
  const minor = amount * 10 ** decimalPlaces;
  const unit = (1 / 10 ** decimalPlaces).toFixed(decimalPlaces);
  if (minor < 1 - 1e-6) {
    return `${amount} is below the smallest unit of the currency (${unit} with machine.decimalPlaces ${decimalPlaces})`;
  }
  if (Math.abs(minor - Math.round(minor)) > 1e-6) {
    return `${amount} has more decimals than the currency's ${decimalPlaces} (machine.decimalPlaces)`;
  }
  return null;
}

export const ConfigSchema = z
  .strictObject({
    gateway: z.strictObject({
      /** https:// (http:// only to a loopback address: a simulator or a local TLS proxy). */
      baseUrl: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL, e.g. https://gw.example.com:443' }),
      /** Whole-request deadline for one gateway call. */
      timeoutMs: int(100, 120_000),
      /** TCP (and TLS) connect deadline. */
      connectTimeoutMs: int(50, 60_000),
      /** Extra CA bundle (PEM) for a private gateway certificate; null = system CAs. */
      caFile: AbsolutePath.nullable(),
    }),
    start: z.strictObject({
      /** host:port of the Start endpoint; null = no inbound port (Starts come through `qrvend relay` only, docs/relay.md). */
      listen: ListenAddress.nullable(),
      integratorName: nonEmpty(100).regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, dot, dash, underscore only'),
      /** File holding the 64-character SecretToken (never put the token itself in config). */
      secretTokenFile: AbsolutePath,
      /** PEM certificate and key for HTTPS; both null = plain HTTP (loopback, or behind a TLS proxy). */
      certFile: AbsolutePath.nullable(),
      keyFile: AbsolutePath.nullable(),
      /**
       * The site says a TLS proxy terminates HTTPS in front of this machine: plain HTTP on a
       * non-loopback `listen` is then allowed. A site-file setting only: never settable by the fleet.
       */
      behindTlsProxy: z.boolean(),
      maxBodyBytes: int(512, 1_048_576),
      /** Per-client token bucket: sustained requests per second and burst. */
      rateLimit: z.strictObject({ perSecond: int(1, 10_000), burst: int(1, 100_000) }),
      /** Connections one source address may hold at once (slow-header senders cannot take them all). */
      maxConnectionsPerSource: int(1, 64),
    }),
    machine: z.strictObject({
      /** MachineInfo.TerminalId and the Start TerminalId this machine answers to; null = HwSerial. */
      terminalId: text(255).min(1).nullable(),
      /** The machine's UniQR: printed on the sticker, shown on the idle screen, accepted in Start. */
      uniQr: nonEmpty(255),
      id: z.number().int().nullable(),
      name: text(255).nullable(),
      externalId: text(200).nullable(),
      groupId: z.string().nullable(),
      type: text(50).nullable(),
      city: text(255).nullable(),
      region: text(255).nullable(),
      zipCode: text(255).nullable(),
      operatorId: text(255).nullable(),
      /** UTC offset sent as MachineInfo.Offset, e.g. "+02:00"; null = computed from local time. */
      offset: text(255).nullable(),
      decimalPlaces: int(0, 3),
      currencyCode: z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 alpha-3 code such as EUR'),
      currencyNumeric: z.string().regex(/^\d{3}$/, 'must be an ISO 4217 numeric-3 code such as 978'),
      country: CountryInfoConfig.nullable(),
      geoLocation: GeoLocationConfig.nullable(),
    }),
    actor: z.strictObject({
      id: z.number().int().nullable(),
      merchantId: text(255).nullable(),
      name: text(255).nullable(),
      operatorId: z.number().int().nullable(),
      operatorName: text(255).nullable(),
      subMerchantId: text(255).nullable(),
      mcc: int(0, 9999).nullable(),
      dynamicUrl: text(255).nullable(),
      country: CountryInfoConfig.nullable(),
      geoLocation: GeoLocationConfig.nullable(),
    }),
    /** CustomData members: each value is a string holding JSON text, agreed with the provider. */
    customData: z.strictObject({
      Actor: JsonText.optional(),
      DirectActor: JsonText.optional(),
      Distributor: JsonText.optional(),
      Machine: JsonText.optional(),
      Operator: JsonText.optional(),
      SoftDecline: JsonText.optional(),
    }),
    device: z.strictObject({
      /** DeviceInfo.Type. */
      type: nonEmpty(100),
      /** Overrides the hardware serial read from the device tree or /proc/cpuinfo. */
      hwSerial: text(255).min(1).nullable(),
    }),
    mdb: z
      .strictObject({
        /** Serial device of the MDB adapter board, or "sim" for the built-in VMC simulator. */
        port: MdbPort,
        baudRate: z.union([z.literal(9600), z.literal(19200), z.literal(38400), z.literal(57600), z.literal(115200), z.literal(230400)]),
        /** Cashless device #1 (address 0x10) or #2 (0x60, beside a card reader at #1); set on the board at every link open. */
        device: z.enum(['cashless1', 'cashless2']).default('cashless1'),
        /** The VMC family (src/config/mdb-profiles.ts): defaults for the keys below that the site leaves out. */
        profile: z.enum(PROFILE_NAMES).default('level3-always-idle'),
        /** Vend requests without a session start a dynamic QR payment (MDB level 3 always-idle). Default: the profile's. */
        alwaysIdle: z.boolean().optional(),
        /** For VMCs without always-idle: open a session with this credit so the consumer can select; null = off. */
        virtualCredit: z.number().positive().nullable().optional(),
        /** Close and reopen an idle virtual-credit session this often, before the VMC drops it; null = never. */
        sessionRefreshMs: int(5_000, 3_600_000).nullable().optional(),
        /** Several vends in one virtual-credit session; false = the session ends after each vend. */
        multiVend: z.boolean().optional(),
        /** The reader's advertised maximum response time (seconds) sent to the VMC. */
        maxResponseTimeS: int(5, 255).optional(),
        /** A static QR session with no vend request for this long is ended by the reader. */
        sessionIdleTimeoutMs: int(5_000, 600_000).optional(),
        /** After approving a vend, how long to wait for the VMC's success or failure. */
        vendResultTimeoutMs: int(5_000, 600_000).optional(),
        /** Ask the VMC (through the board) to report sales paid by other devices. */
        cashSale: z.boolean().optional(),
        /** The board's own timeouts, sent only when set (mdb-timeout-idle, mdb-timeout), in seconds. */
        boardTimeouts: z
          .strictObject({ idleS: int(0, 86_400).nullable().default(null), messageS: int(1, 86_400).nullable().default(null) })
          .default({ idleS: null, messageS: null }),
        /**
         * A VMC that resets the reader `count` times within `windowS` is in a reset loop: the reader is
         * held off the bus (30 s, doubling up to 15 min) and VMC_RESET_LOOP raised (src/mdb/vmc-watch.ts).
         */
        resetLoop: z
          .strictObject({ count: int(2, 1000).default(3), windowS: int(10, 86_400).default(600) })
          .default({ count: 3, windowS: 600 }),
        /** The board firmware's names for its SETCONF keys, where they differ from src/config/board-keys.ts. */
        boardKeys: z.partialRecord(z.enum(BOARD_KEY_NAMES), z.string().regex(/^[a-z0-9-]{1,40}$/, 'board key names are lowercase letters, digits and -')).default({}),
        /** No line from the board for this long means the link is suspect (the board sends r,ACK on every poll). */
        linkWatchdogMs: int(500, 600_000),
        /** Reopen backoff after the device vanished. */
        reopenMinMs: int(50, 60_000),
        reopenMaxMs: int(100, 600_000),
        /** Lines longer than this are dropped (and counted) as noise. */
        maxLineLength: int(64, 65_536),
      })
      // The profile's values fill what the site left out. The output has only input keys, so a
      // parsed configuration parses again to itself.
      .transform(({ alwaysIdle, virtualCredit, sessionRefreshMs, multiVend, maxResponseTimeS, sessionIdleTimeoutMs, vendResultTimeoutMs, cashSale, ...rest }) => ({
        ...rest,
        ...resolveProfile(rest.profile, { alwaysIdle, virtualCredit, sessionRefreshMs, multiVend, maxResponseTimeS, sessionIdleTimeoutMs, vendResultTimeoutMs, cashSale }),
      })),
    store: z.strictObject({
      /** The SQLite ledger file. */
      path: AbsolutePath,
      /** How long a Settlement/Cancel/Void is retried before it is dead-lettered. */
      retryWindowHours: int(1, 24 * 90),
      /** How long drained outbox rows are kept before they are pruned. */
      retentionDays: int(1, 3650),
      /** Outbox requests in flight at once (one per TransactionId at most). */
      concurrency: int(1, 64),
      backoffBaseMs: int(10, 3_600_000),
      backoffCapMs: int(100, 86_400_000),
    }),
    display: z.strictObject({
      /** Framebuffer device, e.g. /dev/fb0; null = none. */
      framebuffer: AbsolutePath.nullable(),
      /** PNG file rewritten on every screen change (headless machines, diagnostics); null = none. */
      png: AbsolutePath.nullable(),
      /** Also draw screens as text on the terminal (demo, technicians). */
      terminal: z.boolean(),
      /** Size of the PNG when there is no framebuffer to take it from. */
      width: int(64, 8192),
      height: int(64, 8192),
      /** Language of every consumer-facing word (src/display/catalog). */
      language: z.enum(LANGUAGES).default('en'),
      /** BCP 47 locale for amounts (e.g. de-AT); null = the language's usual one. */
      locale: z
        .string()
        .max(35)
        .refine((tag) => isSupportedLocale(tag), 'display.locale must be a BCP 47 locale this Node knows, e.g. de-DE')
        .nullable()
        .default(null),
      /**
       * How long the reader may stay not enabled (at a start, before the VMC enables it; or when
       * the VMC disables it) with a neutral "One moment" screen before "Out of order" shows.
       */
      readerGraceS: int(0, 600).default(30),
      /** Panel mounted turned by this many degrees clockwise. */
      rotate: z.union([z.literal(0), z.literal(90), z.literal(180), z.literal(270)]).default(0),
      /** Operator logo on the idle screen (PNG or SVG file); null = none. */
      logo: z.string().min(1).max(4096).nullable().default(null),
      /** Receipt QR on the thank-you screen: a URL with {txId}; null = no receipt QR. */
      receiptUrl: z.string().min(1).max(1024).refine((u) => u.includes('{txId}'), 'display.receiptUrl must contain {txId}').nullable().default(null),
      /** Colours as #rrggbb (the QR itself is always black on white). */
      colors: z
        .strictObject({
          background: Hex.default('#ffffff'),
          text: Hex.default('#1a1a1a'),
          accent: Hex.default('#0a7d32'),
          error: Hex.default('#c62828'),
          muted: Hex.default('#5f6368'),
        })
        .default({ background: '#ffffff', text: '#1a1a1a', accent: '#0a7d32', error: '#c62828', muted: '#5f6368' }),
    }),
    staticQr: z.strictObject({
      /** Amount requested by Authorization (capped by the consumer's Balance when given). */
      preauthAmount: z.number().positive().max(1_000_000),
      /**
       * true: the Authorization carries AgeLimitation = the highest catalog ageLimit, so an approval
       * vouches for every item; false: age-restricted items are denied inside static QR sessions.
       */
      verifyAge: z.boolean(),
    }),
    dynamicQr: z.strictObject({
      /** Give up on a dynamic QR payment after this long; must be below mdb.maxResponseTimeS. */
      paymentTimeoutMs: int(1_000, 255_000),
      pollIntervalMs: int(100, 60_000),
      /** GenerateQR ChannelId, when the provider assigned one. */
      channelId: z.string().nullable(),
    }),
    /** Product catalog by MDB item number. */
    catalog: z.record(z.string().regex(/^\d{1,5}$/, 'catalog keys are MDB item numbers'), CatalogItem),
    gpio: z
      .strictObject({
        /**
         * auto = rpio on a Raspberry Pi 1-4, the kernel's character device on any other board with one,
         * mock where neither exists; off = no GPIO at all (docs/devices.md).
         */
        backend: z.enum(['auto', 'rpio', 'chardev', 'mock', 'off']),
        /** The name before gpio.backend (pi = rpio); kept so older configs still load (docs/devices.md). */
        mode: z.enum(['auto', 'pi', 'mock', 'off']).optional(),
        /** Physical (board) pin numbers for rpio; null = not wired. */
        statusLedPin: int(1, 40).nullable(),
        boardResetPin: int(1, 40).nullable(),
        backlightPin: int(1, 40).nullable(),
        /** chardev: the chip, by path (/dev/gpiochip0) or label (pinctrl-rp1); null = the first chip. */
        chip: GpioChip.nullable(),
        /** chardev: a line by name from the device tree (GPIO17) or offset on the chip; null = not wired. */
        statusLedLine: GpioLine.nullable(),
        boardResetLine: GpioLine.nullable(),
        backlightLine: GpioLine.nullable(),
        /** How long the reset line is held low; the adapter boards want >= 10 ms. */
        resetPulseMs: int(10, 5_000),
        /** No second pulse sooner than this after one, so a board that boots slowly is not reset in a loop. */
        resetHoldOffS: int(5, 3_600),
      })
      .superRefine((g, ctx) => {
        const fromMode = g.mode === undefined || g.mode === 'auto' ? null : g.mode === 'pi' ? 'rpio' : g.mode;
        if (fromMode !== null && g.backend !== 'auto' && g.backend !== fromMode) {
          ctx.addIssue({ code: 'custom', path: ['mode'], message: `gpio.mode "${g.mode}" disagrees with gpio.backend "${g.backend}": remove gpio.mode (gpio.backend replaced it)` });
        }
      })
      .transform(({ mode, ...g }) => ({
        ...g,
        backend: g.backend === 'auto' && mode !== undefined && mode !== 'auto' ? (mode === 'pi' ? 'rpio' : mode) : g.backend,
      })),
    /** The fleet link (design section 10, docs/fleet.md): off while url is null. */
    fleet: z.strictObject({
      /** mqtts:// or wss:// (plain mqtt:// or ws:// only to a loopback host: a local broker or a test). */
      url: z
        .string()
        .max(2048)
        .refine((u) => /^(mqtts?|wss?):\/\/[^\s]+$/.test(u), 'must be an mqtts:// or wss:// URL, e.g. mqtts://broker.example.com:8883')
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
          /** Highest staticQr.preauthAmount the fleet may set; null = the site's own staticQr.preauthAmount (the fleet can only lower it). */
          maxPreauthAmount: z.number().positive().max(1_000_000).nullable().default(null),
        })
        .default({ maxPreauthAmount: null }),
    }),
    /** Remote updates (design section 12, docs/updates.md). */
    updates: z
      .strictObject({
        /** Where downloads and update state are kept; null = an `updates` folder beside store.path. */
        dir: AbsolutePath.nullable().default(null),
        /** CA bundle (PEM) for the artifact server's certificate; null = system CAs (the gateway's TLS rules). */
        caFile: AbsolutePath.nullable().default(null),
        /** Data cap per update: bytes fetched (including retries after cuts) beyond which the download is abandoned. */
        maxDownloadBytes: int(1024 * 1024, 2 * 1024 * 1024 * 1024).default(512 * 1024 * 1024),
        /** How long a downloaded update may wait for an idle machine before UPDATE_DEFERRED is raised (it keeps waiting). */
        maxDeferralS: int(60, 30 * 86_400).default(86_400),
        /** How long the new version's trial has to report healthy before it is rolled back. */
        healthyWithinS: int(30, 3_600).default(180),
      })
      .default({ dir: null, caFile: null, maxDownloadBytes: 512 * 1024 * 1024, maxDeferralS: 86_400, healthyWithinS: 180 }),
    /** The VMC's own audit over its DEX jack (design section 13, docs/dex.md): off while port is null. */
    dex: z
      .strictObject({
        /** Serial device wired to the DEX jack (a USB-RS232 adapter or a UART with a level shifter); null = no audit. */
        port: MdbPort.refine((s) => s !== 'sim', 'must be an absolute device path like /dev/ttyUSB0').nullable().default(null),
        /** Which protocol the VMC speaks; auto = detect at the first read and remember it. */
        protocol: z.enum(['auto', 'dex-ucs', 'ddcmp']).default('auto'),
        /** Scheduled reads every this many seconds; 0 = on demand only (dex.read, `qrvend dex read`). */
        intervalS: int(0, 7 * 86_400).default(86_400),
        /** Largest audit file accepted, bytes. */
        maxFileBytes: int(1024, 4 * 1024 * 1024).default(1024 * 1024),
        /** Cashless vends by which the VMC's DA/DB count and the ledger may differ over one interval before AUDIT_MISMATCH. */
        reconcileToleranceVends: int(0, 1_000).default(0),
      })
      .default({ port: null, protocol: 'auto', intervalS: 86_400, maxFileBytes: 1024 * 1024, reconcileToleranceVends: 0 }),
    log: z.strictObject({
      level: z.enum(LOG_LEVELS),
      /** How often the daemon logs a `stats` line (event-loop delay, reader counters, memory); 0 = never. */
      statsIntervalMs: z.number().int().min(0).max(86_400_000),
      /**
       * Tick of the event-loop delay sampler behind the stats line. Each tick wakes the machine loop:
       * 1 ms is ~1,000 wake-ups a second (1.8 % of a core on an idle machine, issue 17), 100 ms is 10
       * (stalls longer than a tick are still caught; shorter ones only when they overlap one). The
       * bench sets 1 for its event-loop figure.
       */
      loopDelayResolutionMs: z.number().int().min(1).max(1000).default(100),
    }),
  })
  .superRefine((cfg, ctx) => {
    // The last Inquiry may take up to gateway.timeoutMs after the payment timeout, and the reader
    // itself denies a vend 1 s before its advertised maximum response time (src/mdb/reader/config.ts):
    // the payment side must answer before either.
    const budgetMs = cfg.mdb.maxResponseTimeS * 1000 - 1000;
    if (cfg.dynamicQr.paymentTimeoutMs + cfg.gateway.timeoutMs > budgetMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['dynamicQr', 'paymentTimeoutMs'],
        message: `plus gateway.timeoutMs (${cfg.gateway.timeoutMs} ms) must be at most mdb.maxResponseTimeS (${cfg.mdb.maxResponseTimeS} s) minus 1 s, or the reader denies the vend first`,
      });
    }
    if (!isAllowedGatewayUrl(cfg.gateway.baseUrl)) {
      ctx.addIssue({
        code: 'custom',
        path: ['gateway', 'baseUrl'],
        message: 'must be https:// (the gateway is reached over HTTPS; http:// is accepted only for a loopback host such as 127.0.0.1, a simulator or a local TLS proxy)',
      });
    }
    if (cfg.start.listen === null && (cfg.fleet.url === null || !cfg.fleet.acceptRelayedStart)) {
      // No inbound port and no relay: no wallet could ever reach this machine with a Start.
      ctx.addIssue({
        code: 'custom',
        path: ['start', 'listen'],
        message: 'null (no inbound port) needs the Start relay: set fleet.url and keep fleet.acceptRelayedStart true (docs/relay.md), or give start.listen a host:port',
      });
    }
    if (startEndpointTransport(cfg.start) === 'refused') {
      // Starts carry the SecretToken: plain HTTP off this machine only when the site says a TLS proxy is in front (issue 31 item 13).
      ctx.addIssue({
        code: 'custom',
        path: ['start', 'listen'],
        message: `${cfg.start.listen} is not a loopback address and start.certFile is null: Starts, SecretToken included, would cross the network in plain HTTP. Set start.certFile and start.keyFile (HTTPS), listen on 127.0.0.1, or, when a TLS proxy of the site terminates HTTPS in front of this machine, set start.behindTlsProxy to true in the site file`,
      });
    }
    const preauth = minorUnitProblem(cfg.staticQr.preauthAmount, cfg.machine.decimalPlaces);
    if (preauth !== null) ctx.addIssue({ code: 'custom', path: ['staticQr', 'preauthAmount'], message: preauth });
    if (cfg.mdb.reopenMaxMs < cfg.mdb.reopenMinMs) {
      ctx.addIssue({ code: 'custom', path: ['mdb', 'reopenMaxMs'], message: 'must be >= mdb.reopenMinMs' });
    }
    if (cfg.store.backoffCapMs < cfg.store.backoffBaseMs) {
      ctx.addIssue({ code: 'custom', path: ['store', 'backoffCapMs'], message: 'must be >= store.backoffBaseMs' });
    }
    if (cfg.fleet.url !== null && !isAllowedFleetUrl(cfg.fleet.url)) {
      ctx.addIssue({
        code: 'custom',
        path: ['fleet', 'url'],
        message: 'must be mqtts:// or wss:// (the broker is reached over TLS; mqtt:// and ws:// are accepted only for a loopback host such as 127.0.0.1)',
      });
    }
    if ((cfg.fleet.certFile === null) !== (cfg.fleet.keyFile === null)) {
      ctx.addIssue({ code: 'custom', path: ['fleet', 'keyFile'], message: 'fleet.certFile and fleet.keyFile go together' });
    }
    if ((cfg.fleet.username === null) !== (cfg.fleet.passwordFile === null)) {
      ctx.addIssue({ code: 'custom', path: ['fleet', 'passwordFile'], message: 'fleet.username and fleet.passwordFile go together' });
    }
    if ((cfg.start.certFile === null) !== (cfg.start.keyFile === null)) {
      ctx.addIssue({ code: 'custom', path: ['start', 'keyFile'], message: 'start.certFile and start.keyFile go together' });
    }
  });

export type QrvendConfig = z.infer<typeof ConfigSchema>;
export type CatalogEntry = z.infer<typeof CatalogItem>;
