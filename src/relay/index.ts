/** `qrvend relay` (design section 10, "Start relay"): the broker link and the HTTP server, wired. */
import type { Logger } from '../core/log.js';
import { connectBrokerLink, type BrokerLink, type BrokerLinkStats } from './broker-link.js';
import type { RelayConfig } from './config.js';
import { startRelayServer, type RelayCounters } from './server.js';

export { loadRelayConfig, validateRelayConfig, RelayConfigSchema, type RelayConfig } from './config.js';
export { MachineDirectory } from './directory.js';

export interface Relay {
  /** scheme://host:port; the Start URL is <origin>/payment/v2/transactions/Gateway/<integratorName>/start. */
  readonly origin: string;
  readonly port: number;
  readonly link: BrokerLink;
  stats(): { link: BrokerLinkStats; server: RelayCounters };
  close(): Promise<void>;
}

export async function startRelay(config: RelayConfig, log: Logger): Promise<Relay> {
  const link = connectBrokerLink(config, log);
  let server;
  try {
    server = await startRelayServer(config, link, log);
  } catch (err) {
    await link.close();
    throw err;
  }
  return {
    origin: server.origin,
    port: server.port,
    link,
    stats: () => ({ link: link.stats(), server: server.counters() }),
    async close() {
      await server.close();
      await link.close();
    },
  };
}
