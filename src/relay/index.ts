/**
 * `qrvend relay` (docs/decisions/fleet-link.md, "Start relay"): the registry, the broker link and the HTTP server,
 * wired.
 */
import type { Logger } from '../core/log.js';
import { connectBrokerLink, type BrokerLink, type BrokerLinkStats } from './broker-link.js';
import type { ClaimCounters } from './directory.js';
import type { RelayConfig } from './config.js';
import { loadIntegratorTokens } from './integrators.js';
import { RegistryWatch, type RegistryState } from './registry-watch.js';
import { startRelayServer, type RelayCounters } from './server.js';
import { loadVoucherSigner } from './voucher.js';

export { loadRelayConfig, validateRelayConfig, RelayConfigSchema, type RelayConfig } from './config.js';
export { MachineDirectory } from './directory.js';

export interface Relay {
  /** scheme://host:port; the Start URL is <origin>/payment/v2/transactions/Gateway/<integratorName>/start. */
  readonly origin: string;
  readonly port: number;
  readonly link: BrokerLink;
  readonly registry: RegistryWatch;
  /**
   * Everything for the `relay stats` log line: the machines claiming others' identifiers by name, the registry's key
   * and last error.
   */
  stats(): {
    link: BrokerLinkStats;
    server: RelayCounters;
    registry: RegistryState;
    claims: ClaimCounters & { impostors: Record<string, string> };
  };
  close(): Promise<void>;
}

export async function startRelay(config: RelayConfig, log: Logger): Promise<Relay> {
  // Everything the relay vouches with is read first: a relay that cannot check tokens or find
  // machines by the operator's word does not start (exit 78 naming the key).
  const registry = new RegistryWatch({
    file: config.registryFile,
    trustFile: config.trustFile,
    stateDir: config.stateDir,
    log: log.child({ component: 'registry' }),
  });
  const tokens = loadIntegratorTokens(config.integrators);
  const signer = loadVoucherSigner(config.voucherKey.file, config.voucherKey.keyId);
  const link = connectBrokerLink(config, () => registry.registry, log);
  let server;
  try {
    server = await startRelayServer(config, { link, tokens, signer, registry: () => registry.state() }, log);
  } catch (err) {
    await link.close();
    throw err;
  }
  registry.onChange = () => link.directory.rejudge();
  registry.watch();
  return {
    origin: server.origin,
    port: server.port,
    link,
    registry,
    stats: () => ({
      link: link.stats(),
      server: server.counters(),
      registry: registry.state(),
      claims: { ...link.directory.claims, impostors: Object.fromEntries([...link.directory.impostors].slice(0, 100)) },
    }),
    async close() {
      registry.stop();
      await server.close();
      await link.close();
    },
  };
}
