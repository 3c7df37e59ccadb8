/**
 * `qrvend relay --config FILE`: loads and checks the relay's configuration (a bad one throws
 * CONFIG_INVALID, which the CLI turns into exit 78 with each key path), starts the relay, re-reads
 * the registry of machines on SIGHUP, and stops it gracefully on SIGTERM or SIGINT (answers in
 * progress finish, then the broker link closes).
 */
import { createLogger } from '../core/log.js';
import { loadRelayConfig } from './config.js';
import { startRelay } from './index.js';

export interface RelayProcessOptions {
  configFile: string;
  checkOnly: boolean;
}

export async function runRelayProcess(options: RelayProcessOptions): Promise<number> {
  const config = loadRelayConfig(options.configFile);
  if (options.checkOnly) {
    process.stdout.write(`relay configuration ${options.configFile} is valid\n`);
    return 0;
  }
  const log = createLogger({ level: config.logLevel, name: 'relay' });
  const relay = await startRelay(config, log);
  const statsTimer = setInterval(() => log.info({ event: 'relay.stats', ...relay.stats() }, 'relay stats'), 60_000);
  statsTimer.unref();
  const reread = () => relay.registry.reload('SIGHUP');
  process.on('SIGHUP', reread);
  return new Promise<number>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      process.off('SIGHUP', reread);
      log.info({ signal }, 'relay stopping');
      clearInterval(statsTimer);
      void relay.close().then(
        () => {
          log.info('relay stopped');
          log.flush();
          resolve(0);
        },
        () => resolve(70),
      );
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}
