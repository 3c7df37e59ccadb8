/** `qrvend dex read`: one read for a technician, the raw file written, what was read printed. */
import { writeFileSync } from 'node:fs';
import { loadConfig, warnRejectedOverlay } from '../../config/load.js';
import { DEVICE_PATH } from '../../config/schema.js';
import { createLogger } from '../../core/log.js';
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import { escapeForTerminal } from '../../core/terminal-text.js';
import { dexFactsPathFor, openDexLink } from './index.js';
import { examineAuditFile } from '../file/index.js';
import { formatAuditText } from '../file/format.js';

export interface DexReadOptions {
  config?: string;
  port?: string;
  protocol?: string;
  out?: string;
}

const usage = (message: string): never => {
  throw new QrvendError(ErrorCodes.CLI_USAGE, message);
};

export async function runDexRead(opts: DexReadOptions): Promise<void> {
  const loaded = loadConfig({ file: opts.config });
  warnRejectedOverlay(loaded.overlay);
  const { config } = loaded;
  const port =
    opts.port ?? config.dex.port ?? usage('no DEX port: give --port /dev/ttyUSB0 or set dex.port in the configuration');
  if (!DEVICE_PATH.test(port) || port.split('/').includes('..'))
    usage('--port must be an absolute device path like /dev/ttyUSB0 (letters, digits and / _ . - only)');
  const given = opts.protocol ?? config.dex.protocol;
  const protocol =
    given === 'auto' || given === 'dex-ucs' || given === 'ddcmp'
      ? given
      : usage(`--protocol must be auto, dex-ucs or ddcmp, got ${escapeForTerminal(given)}`);
  const out = opts.out ?? `dex-${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '')}.txt`;
  const log = createLogger({ level: 'warn' });
  const link = openDexLink({
    port,
    protocol,
    factsPath: dexFactsPathFor(config.store.path),
    maxFileBytes: config.dex.maxFileBytes,
    log,
  });
  const read = await link.read();
  writeFileSync(out, read.bytes, { mode: 0o640 });
  const name = read.protocol === 'dex-ucs' ? 'DEX/UCS' : 'DDCMP';
  process.stdout.write(
    `read ${read.bytes.length} bytes over ${name} from ${escapeForTerminal(port)} in ` +
      `${(read.durationMs / 1000).toFixed(1)} s; written to ${escapeForTerminal(out)}\n`,
  );
  // What the file says, as `qrvend dex parse` prints it (src/dex/file).
  process.stdout.write(formatAuditText(examineAuditFile(read.bytes)));
}
