import type { Command } from 'commander';

export function register(parent: Command): void {
  const relay = parent
    .command('relay')
    .description(
      'run the Start relay: one HTTPS Start URL for a whole fleet, forwarding ' +
        'each Start to its machine over the fleet broker (docs/relay.md)',
    )
    // Not a required option: `qrvend relay registry sign` needs none, and commander checks the parent's too.
    .option(
      '-c, --config <file>',
      "the relay's configuration file (keys under relay., see config/relay.example.json); required to run",
    )
    .option('--check', 'check the configuration and exit (0 when valid, 78 naming each bad key)')
    .action(async (opts: { config?: string; check?: boolean }) => {
      if (opts.config === undefined) {
        const { ErrorCodes, QrvendError } = await import('../../core/errors.js');
        throw new QrvendError(ErrorCodes.CLI_USAGE, "qrvend relay needs --config FILE (the relay's configuration)", {
          hint: 'qrvend relay --config /etc/qrvend/relay.json',
        });
      }
      const { runRelayProcess } = await import('../../relay/cli.js');
      process.exitCode = await runRelayProcess({ configFile: opts.config, checkOnly: opts.check === true });
    });
  const registry = relay
    .command('registry')
    .description(
      "the operator's signed registry of machines: which machine owns which TerminalId and UniQR (docs/relay.md)",
    );
  registry
    .command('step-back')
    .description(
      'take an older registry on purpose: verify relay.registryFile and make its version the newest this relay ' +
        'accepts (relay.stateDir), then reload the relay; run it as the relay user (docs/relay.md)',
    )
    // --config is the parent's option (commander gives it to `relay`, wherever it is written).
    .action(async (_opts: unknown, command: Command) => {
      const { config } = command.optsWithGlobals<{ config?: string }>();
      if (config === undefined) {
        const { ErrorCodes, QrvendError } = await import('../../core/errors.js');
        throw new QrvendError(ErrorCodes.CLI_USAGE, 'qrvend relay registry step-back needs --config FILE', {
          hint: 'sudo -u qrvend qrvend relay registry step-back --config /etc/qrvend/relay.json',
        });
      }
      const { stepBackRegistry } = await import('../../relay/registry-cli.js');
      stepBackRegistry(config);
    });
  registry
    .command('sign')
    .description(
      'sign a registry file ({"machines":[{"machineId","terminalId","uniQr"}]}) with an operator key of scope registry',
    )
    .requiredOption('--key <file>', 'the operator private key (PKCS#8 PEM, from qrvend fleet keygen)')
    .requiredOption('--key-id <id>', "the key's id in the relay's trust file")
    .option('--days <n>', 'how long the signed registry is valid, in days (at most 400)', '365')
    .argument('<in>', 'the registry to sign (JSON)')
    .argument('<out>', 'where to write the signed registry (written atomically, mode 0644)')
    .action(async (input: string, output: string, opts: { key: string; keyId: string; days: string }) => {
      const { signRegistryFile } = await import('../../relay/registry-cli.js');
      signRegistryFile({ input, output, keyFile: opts.key, keyId: opts.keyId, days: opts.days });
    });
}
