/**
 * The building blocks of the configuration schema (src/config/schema.ts): ranges, paths, addresses,
 * the URL and transport rules the sections share.
 */
import { z } from 'zod';
import { LANGUAGES } from '../languages.js';

export const int = (min: number, max: number) => z.number().int().min(min).max(max);
/** A GPIO chip: a /dev/gpiochipN path or a chip label (letters, digits, - _ . : @ ,). */
export const GpioChip = z.union([
  z.string().regex(/^\/dev\/gpiochip\d{1,3}$/, 'a chip path looks like /dev/gpiochip0'),
  z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.:@,-]{0,31}$/, 'a chip label (gpiodetect shows them), e.g. pinctrl-rp1'),
]);
/** A GPIO line: its name from the device tree (GPIO17) or its offset on the chip. */
export const GpioLine = z.union([
  int(0, 1_023),
  z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.:\[\]-]{0,31}$/, 'a line name as gpioinfo prints it, e.g. GPIO17'),
]);
export const text = (max: number) => z.string().max(max);
export const nonEmpty = (max: number) => z.string().min(1).max(max);

/**
 * A file path the daemon opens. Absolute only: a relative path resolves against whatever working
 * directory the process happened to start in (docs/decisions/hardening.md item 10: the daemon looped forever).
 */
export const AbsolutePath = z
  .string()
  .min(1)
  .max(4096)
  .refine((s) => s.startsWith('/'), 'must be an absolute path (starting with /)')
  .refine((s) => !s.includes('\0'), 'must not contain a NUL byte');

/**
 * `mdb.port`: a device path that no tool can read as anything but a path (docs/decisions/hardening.md item 12: a
 * path with `!!SYSTEM:` reached socat as an address), or `sim`. Absolute, letters, digits and
 * `/ _ . -` only; not limited to /dev because test rigs and some USB adapters use symlinks
 * elsewhere (a pty pair's link in a temporary directory, /run/...).
 */
export const DEVICE_PATH = /^\/[A-Za-z0-9/_.-]+$/;
export const MdbPort = z
  .string()
  .max(4096)
  .refine(
    (s) => s === 'sim' || (DEVICE_PATH.test(s) && !s.split('/').includes('..')),
    'must be "sim" or an absolute device path like /dev/serial0 (letters, digits and / _ . - only, no ..)',
  );

/** `host:port`, IPv6 hosts in brackets: `[::1]:8080`. */
export const ListenAddress = z.string().refine((s) => {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(s);
  return m !== null && Number(m[2]) <= 65535;
}, 'must be host:port with a port 0..65535, e.g. 127.0.0.1:8080');

export const CountryInfoConfig = z.strictObject({
  Alpha2Code: z.string().length(2),
  Alpha3Code: z.string().length(3),
  NumericCode: z.string().regex(/^\d{3}$/, 'must be 3 digits'),
  Name: z.string(),
  Intra: z.string(),
});

export const GeoLocationConfig = z.strictObject({
  Address: text(255).optional(),
  City: text(255).optional(),
  CountryCode: z.string().optional(),
  State: z.string().optional(),
  ZipCode: text(255).optional(),
  Latitude: z.number().min(-90).max(90).optional(),
  Longitude: z.number().min(-180).max(180).optional(),
});

/** CustomData values are strings holding JSON text (seed: "Each value is a string holding JSON text"). */
export const JsonText = z.string().refine((text) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}, 'must be a string holding JSON text, e.g. "{\\"region\\":\\"north\\"}"');

/** A colour as #rrggbb. */
export const Hex = z.string().regex(/^#[0-9a-fA-F]{6}$/, 'colours are written #rrggbb');
/** The colours of `display.colors` (config.set names only these: src/config/remote-keys.ts). */
export const DISPLAY_COLOR_NAMES = ['background', 'text', 'accent', 'error', 'muted'] as const;

export function isSupportedLocale(tag: string): boolean {
  try {
    return Intl.NumberFormat.supportedLocalesOf([tag]).length === 1;
  } catch {
    return false;
  }
}

export const CatalogItem = z.strictObject({
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

/** docs/decisions/gateway-interface.md: HTTPS to the gateway; plain HTTP only to a loopback address. */
export function isAllowedGatewayUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return true; // the URL rule itself reports it
  }
  return parsed.protocol === 'https:' || (parsed.protocol === 'http:' && isLoopbackHost(parsed.hostname));
}

/** docs/decisions/fleet-link.md: TLS to the broker; plain MQTT (or WebSocket) only to a loopback address. */
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

export function startEndpointTransport(start: {
  listen: string | null;
  certFile: string | null;
  behindTlsProxy: boolean;
}): StartTransport {
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
