import type { Command } from 'commander';

export function register(parent: Command): void {
  parent
    .command('relay')
    .description("run the Start relay: one HTTPS Start URL for a whole fleet, forwarding each Start to its machine over the fleet broker (docs/relay.md)")
    .requiredOption('-c, --config <file>', "the relay's configuration file (keys under relay., see config/relay.example.json)")
    .option('--check', 'check the configuration and exit (0 when valid, 78 naming each bad key)')
    .action(async (opts: { config: string; check?: boolean }) => {
      const { runRelayProcess } = await import('../../relay/cli.js');
      process.exitCode = await runRelayProcess({ configFile: opts.config, checkOnly: opts.check === true });
    });
}
