/** `qrvend sim gateway`: the simulator as a long-running process, stopped by SIGINT/SIGTERM. */
import { readFileSync } from 'node:fs';
import { ListenAddress } from '../../config/schema.js';
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import { createLogger, LOG_LEVELS, type LogLevel } from '../../core/log.js';
import { parseFaultFlag } from './faults.js';
import { startGatewaySimulator } from './server.js';

export interface SimGatewayCliOptions {
  listen: string;
  cert?: string;
  key?: string;
  fault: string[];
  seed: string;
  hangMs: string;
  logLevel: string;
  lenient?: boolean;
}

function usage(message: string): QrvendError {
  return new QrvendError(ErrorCodes.CLI_USAGE, message);
}

function readPem(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new QrvendError(
      ErrorCodes.CONFIG_UNREADABLE,
      `${what} ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      {
        hint: 'give a readable PEM file',
      },
    );
  }
}

export function parseListen(listen: string): { host: string; port: number } {
  if (!ListenAddress.safeParse(listen).success)
    throw usage(`--listen ${listen}: expected host:port, e.g. 127.0.0.1:8090`);
  const i = listen.lastIndexOf(':');
  return { host: listen.slice(0, i).replace(/^\[(.*)\]$/, '$1'), port: Number(listen.slice(i + 1)) };
}

export async function runSimGateway(opts: SimGatewayCliOptions): Promise<void> {
  const { host, port } = parseListen(opts.listen);
  if ((opts.cert === undefined) !== (opts.key === undefined)) throw usage('--cert and --key go together');
  const seed = Number(opts.seed);
  if (!Number.isInteger(seed)) throw usage(`--seed ${opts.seed}: expected an integer`);
  const hangMs = Number(opts.hangMs);
  if (!Number.isInteger(hangMs) || hangMs < 0)
    throw usage(`--hang-ms ${opts.hangMs}: expected a whole number of milliseconds`);
  if (!(LOG_LEVELS as readonly string[]).includes(opts.logLevel))
    throw usage(`--log-level ${opts.logLevel}: expected one of ${LOG_LEVELS.join(', ')}`);
  const faults = opts.fault.map(parseFaultFlag);
  const logger = createLogger({ level: opts.logLevel as LogLevel, name: 'sim-gateway' });
  const tls =
    opts.cert && opts.key ? { cert: readPem(opts.cert, 'certificate'), key: readPem(opts.key, 'key') } : undefined;

  const sim = await startGatewaySimulator({
    host,
    port,
    faults,
    seed,
    hangMs,
    logger,
    lenient: opts.lenient === true,
    ...(tls ? { tls } : {}),
  });
  logger.info(
    { url: sim.url, faults, seed },
    `gateway simulator listening on ${sim.url} (ledger: ${sim.url}/_sim/ledger)`,
  );

  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  const { summary } = sim.ledger();
  await sim.close();
  logger.info({ summary }, 'gateway simulator stopped');
}
