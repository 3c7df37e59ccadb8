/**
 * The configuration schema: every key qrvend reads, with its type, range and default meaning.
 * `config/default.json` supplies every value; a site file layered over it may change any of them
 * but may not add keys (objects are strict), so a typo is refused at start instead of ignored.
 */
import { z } from 'zod';
import { GatewaySection, StartSection } from './schema/gateway-start.js';
import { MachineSection, ActorSection, CustomDataSection, DeviceSection } from './schema/machine.js';
import { MdbSection, StoreSection } from './schema/mdb.js';
import { DisplaySection, StaticQrSection, DynamicQrSection, CatalogSection } from './schema/display.js';
import { GpioSection } from './schema/gpio.js';
import { FleetSection, UpdatesSection, DexSection, LogSection } from './schema/fleet.js';
import {
  isAllowedFleetUrl,
  isAllowedGatewayUrl,
  minorUnitProblem,
  startEndpointTransport,
  type CatalogItem,
} from './schema/primitives.js';

export {
  AbsolutePath,
  DEVICE_PATH,
  DISPLAY_COLOR_NAMES,
  isAllowedFleetUrl,
  isAllowedGatewayUrl,
  isLoopbackHost,
  ListenAddress,
  MdbPort,
  minorUnitProblem,
  startEndpointTransport,
  type StartTransport,
} from './schema/primitives.js';

// The messages of the cross-field rules below that need no value from the configuration.
const GATEWAY_URL_RULE =
  'must be https:// (the gateway is reached over HTTPS; http:// is accepted only for a loopback host such as ' +
  '127.0.0.1, a simulator or a local TLS proxy)';
const RELAY_NEEDED_RULE =
  'null (no inbound port) needs the Start relay: set fleet.url and keep fleet.acceptRelayedStart true ' +
  '(docs/relay.md), or give start.listen a host:port';
const FLEET_URL_RULE =
  'must be mqtts:// or wss:// (the broker is reached over TLS; mqtt:// and ws:// are accepted only for a ' +
  'loopback host such as 127.0.0.1)';

export const ConfigSchema = z
  .strictObject({
    gateway: GatewaySection,
    start: StartSection,
    machine: MachineSection,
    actor: ActorSection,
    customData: CustomDataSection,
    device: DeviceSection,
    mdb: MdbSection,
    store: StoreSection,
    display: DisplaySection,
    staticQr: StaticQrSection,
    dynamicQr: DynamicQrSection,
    catalog: CatalogSection,
    gpio: GpioSection,
    fleet: FleetSection,
    updates: UpdatesSection,
    dex: DexSection,
    log: LogSection,
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
        message:
          `plus gateway.timeoutMs (${cfg.gateway.timeoutMs} ms) must be at most mdb.maxResponseTimeS ` +
          `(${cfg.mdb.maxResponseTimeS} s) minus 1 s, or the reader denies the vend first`,
      });
    }
    if (!isAllowedGatewayUrl(cfg.gateway.baseUrl)) {
      ctx.addIssue({
        code: 'custom',
        path: ['gateway', 'baseUrl'],
        message: GATEWAY_URL_RULE,
      });
    }
    if (cfg.start.listen === null && (cfg.fleet.url === null || !cfg.fleet.acceptRelayedStart)) {
      // No inbound port and no relay: no wallet could ever reach this machine with a Start.
      ctx.addIssue({
        code: 'custom',
        path: ['start', 'listen'],
        message: RELAY_NEEDED_RULE,
      });
    }
    if (startEndpointTransport(cfg.start) === 'refused') {
      // Starts carry the SecretToken: plain HTTP off this machine only when the site says a TLS proxy is in front
      // (docs/decisions/fleet-trust.md item 13).
      ctx.addIssue({
        code: 'custom',
        path: ['start', 'listen'],
        message:
          `${cfg.start.listen} is not a loopback address and start.certFile is null: Starts, SecretToken ` +
          `included, would cross the network in plain HTTP. Set start.certFile and start.keyFile (HTTPS), listen on ` +
          `127.0.0.1, or, when a TLS proxy of the site terminates HTTPS in front of this machine, set ` +
          `start.behindTlsProxy to true in the site file`,
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
        message: FLEET_URL_RULE,
      });
    }
    if ((cfg.fleet.certFile === null) !== (cfg.fleet.keyFile === null)) {
      ctx.addIssue({
        code: 'custom',
        path: ['fleet', 'keyFile'],
        message: 'fleet.certFile and fleet.keyFile go together',
      });
    }
    if ((cfg.fleet.username === null) !== (cfg.fleet.passwordFile === null)) {
      ctx.addIssue({
        code: 'custom',
        path: ['fleet', 'passwordFile'],
        message: 'fleet.username and fleet.passwordFile go together',
      });
    }
    if ((cfg.start.certFile === null) !== (cfg.start.keyFile === null)) {
      ctx.addIssue({
        code: 'custom',
        path: ['start', 'keyFile'],
        message: 'start.certFile and start.keyFile go together',
      });
    }
  });

export type QrvendConfig = z.infer<typeof ConfigSchema>;
export type CatalogEntry = z.infer<typeof CatalogItem>;
