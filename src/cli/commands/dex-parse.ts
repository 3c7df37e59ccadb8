import type { Command } from 'commander';

/** `qrvend dex parse FILE [--json]`: check and parse an EVA-DTS audit file (docs/dex.md). */
export function register(dex: Command): void {
  dex
    .command('parse')
    .description('check an EVA-DTS audit file (G85, SE counts, DXS/DXE) and print what it says: machine, totals, products, events')
    .argument('<file>', 'the audit file, as `qrvend dex read --out` wrote it or as a handheld collected it')
    .option('--json', 'print JSON')
    .action(async (file: string, opts: { json?: boolean }) => {
      const { readAuditFileForCli } = await import('../../dex/file/read-for-cli.js');
      const { examineAuditFile } = await import('../../dex/file/index.js');
      const { formatAuditJson, formatAuditText } = await import('../../dex/file/format.js');
      const result = examineAuditFile(readAuditFileForCli(file));
      process.stdout.write(opts.json ? formatAuditJson(result) : formatAuditText(result));
      // A file that fails its check is still printed (a technician wants to see it), but scripts must notice.
      if (!result.check.ok) process.exitCode = 1;
    });
}
