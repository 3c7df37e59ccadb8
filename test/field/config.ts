/**
 * What the technician writes into the guest: the site config (only the keys a site changes; the
 * rest are the defaults) and the identity the wallet simulator uses. Values that tie the guest
 * to the host's simulators are the guestfwd address and the forwarded Start port.
 */
import { GUEST_BROKER, GUEST_GATEWAY, GUEST_START_PORT } from './qemu.js';

export const FIELD_IDENTITY = {
  integratorName: 'field-wallet',
  terminalId: 'FIELD-PI-0001',
  uniQr: 'FIELD-UNIQR-0001',
};

/**
 * Dynamic QR price the gateway simulator pays after 9 Inquiries ("7.0N paid after N polls"): a window for the
 * screendump.
 */
export const DYNAMIC_PRICE = 7.09;
export const DYNAMIC_POLL_MS = 3000;

/** Where the technician puts the gateway's private CA on the machine. */
export const GATEWAY_CA_FILE = '/etc/qrvend/gateway-ca.pem';

/**
 * The fleet link's files on the machine (docs/fleet.md): the broker's CA, the machine's broker password, the operators'
 * keys.
 */
export const FLEET_CA_FILE = '/etc/qrvend/fleet-ca.pem';
export const FLEET_PASSWORD_FILE = '/etc/qrvend/fleet-password';
export const FLEET_TRUST_FILE = '/etc/qrvend/fleet-trust.json';
/** The update repository's private CA (updates.caFile): the artifact server's self-signed certificate. */
export const UPDATES_CA_FILE = '/etc/qrvend/updates-ca.pem';
/** The fleet's overlay (fleet.configOverlay, its default) and what a config.set leaves beside it. */
export const FLEET_OVERLAY = '/var/lib/qrvend/fleet-config.json';

export function siteConfig(): Record<string, unknown> {
  return {
    // HTTPS, as in the field (http:// is refused off loopback); the simulator's certificate is
    // self-signed for the guestfwd address and given to the agent as a private CA.
    gateway: { baseUrl: `https://${GUEST_GATEWAY.host}:${GUEST_GATEWAY.port}`, caFile: GATEWAY_CA_FILE },
    // The guest's Start port is reached only through qemu's hostfwd, bound to the host's 127.0.0.1:
    // that forward stands where a site's TLS proxy would, so the site says so (plain HTTP off
    // loopback is refused otherwise, docs/decisions/fleet-trust.md item 13).
    start: {
      listen: `0.0.0.0:${GUEST_START_PORT}`,
      behindTlsProxy: true,
      integratorName: FIELD_IDENTITY.integratorName,
      secretTokenFile: '/etc/qrvend/secret-token',
    },
    machine: { terminalId: FIELD_IDENTITY.terminalId, uniQr: FIELD_IDENTITY.uniQr },
    mdb: { port: '/dev/serial0', alwaysIdle: true },
    store: { path: '/var/lib/qrvend/ledger.sqlite' },
    staticQr: { preauthAmount: 10 },
    dynamicQr: { pollIntervalMs: DYNAMIC_POLL_MS, paymentTimeoutMs: 40_000 },
    display: { framebuffer: '/dev/fb0' },
    gpio: { mode: 'off' },
    // The machine's own broker account (the documented ACL names the machineId as user name).
    fleet: {
      url: `mqtts://${GUEST_BROKER.host}:${GUEST_BROKER.port}`,
      topicPrefix: 'qrvend',
      machineId: FIELD_IDENTITY.terminalId,
      protocolVersion: 5,
      caFile: FLEET_CA_FILE,
      username: FIELD_IDENTITY.terminalId,
      passwordFile: FLEET_PASSWORD_FILE,
      trustFile: FLEET_TRUST_FILE,
    },
    // Remote updates (docs/updates-on-the-machine.md): the repository's private CA.
    updates: { caFile: UPDATES_CA_FILE },
    log: { level: 'info' },
  };
}
