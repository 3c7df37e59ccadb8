import type { Command } from 'commander';
import { ExitCodes, isQrvendError } from '../../core/errors.js';

/** One JSON refusal on stdout: `--json` always answers in JSON (docs/dex.md). */
function printJsonRefusal(error: { code: string; message: string; hint?: string | undefined }): void {
  process.stdout.write(`${JSON.stringify({ ok: false, error })}\n`);
}

/** `qrvend dex parse FILE [--json]`: check and parse an EVA-DTS audit file (docs/dex.md). */
export function register(dex: Command): void {
  const parse = dex
    .command('parse')
    .description(
      'check an EVA-DTS audit file (G85, SE counts, DXS/DXE) and print what it says: machine, totals, products, events',
    )
    .argument('<file>', 'the audit file, as `qrvend dex read --out` wrote it or as a handheld collected it')
    .option('--json', 'print JSON, refusals too ({"ok":false,"error":{"code":...}})');
  // A usage mistake with --json (no file named, an unknown option) is answered in JSON too; the exit code stays 64.
  const json = () => parse.opts<{ json?: boolean }>().json === true;
  parse.configureOutput({
    outputError: (text, write) => {
      if (json()) printJsonRefusal({ code: 'CLI_USAGE', message: text.replace(/^error: /, '').trim() });
      else write(text);
    },
    writeErr: (text) => (json() ? undefined : process.stderr.write(text)),
  });
  parse.action(async (file: string, opts: { json?: boolean }) => {
    const { readAuditFileForCli } = await import('../../dex/file/read-for-cli.js');
    const { examineAuditFile } = await import('../../dex/file/index.js');
    const { formatAuditJson, formatAuditText } = await import('../../dex/file/format.js');
    let bytes: Buffer;
    try {
      bytes = readAuditFileForCli(file);
    } catch (err) {
      if (!isQrvendError(err)) {
        if (!opts.json) throw err;
        printJsonRefusal({ code: 'INTERNAL', message: `unexpected error: ${(err as Error)?.message ?? String(err)}` });
        process.exitCode = ExitCodes.SOFTWARE;
        return;
      }
      if (opts.json) printJsonRefusal({ code: err.code, message: err.message, hint: err.hint });
      else process.stderr.write(`qrvend: ${err.describe()}\n`);
      // A file that cannot be read, or is too large to be an audit, is a usage error (exit 64), as it always was.
      process.exitCode = ExitCodes.USAGE;
      return;
    }
    const result = examineAuditFile(bytes);
    process.stdout.write(opts.json ? formatAuditJson(result) : formatAuditText(result));
    // A file that fails its check is still printed (a technician wants to see it), but scripts must notice.
    if (!result.check.ok) process.exitCode = ExitCodes.FAILURE;
  });
}
