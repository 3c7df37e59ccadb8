/** `qrvend sim wallet`: one Start, its answer printed; exit 0 Approved, 1 Declined, 69 no answer. */
import { ErrorCodes, ExitCodes, QrvendError } from '../../core/errors.js';
import { readTokenFile, sendStart, type SendStartOptions } from './send-start.js';

export interface SimWalletCliOptions {
  url: string;
  integrator: string;
  tokenFile: string;
  terminalId?: string;
  uniQr?: string;
  transactionId?: string;
  balance?: string;
  appUserId?: string;
  caFile?: string;
  json?: boolean;
}

export async function runSimWallet(opts: SimWalletCliOptions): Promise<void> {
  if (opts.terminalId === undefined && opts.uniQr === undefined) {
    throw new QrvendError(ErrorCodes.CLI_USAGE, 'give --terminal-id or --uni-qr to name the machine');
  }
  let balance: number | undefined;
  if (opts.balance !== undefined) {
    balance = Number(opts.balance);
    if (opts.balance.trim() === '' || !Number.isFinite(balance))
      throw new QrvendError(ErrorCodes.CLI_USAGE, `--balance ${opts.balance}: expected a number such as 3.50`);
  }
  const send: SendStartOptions = {
    url: opts.url,
    integratorName: opts.integrator,
    secretToken: readTokenFile(opts.tokenFile),
    ...(opts.terminalId !== undefined ? { terminalId: opts.terminalId } : {}),
    ...(opts.uniQr !== undefined ? { uniQr: opts.uniQr } : {}),
    ...(opts.transactionId !== undefined ? { transactionId: opts.transactionId } : {}),
    ...(balance !== undefined ? { balance } : {}),
    ...(opts.appUserId !== undefined ? { appUserId: opts.appUserId } : {}),
    ...(opts.caFile !== undefined ? { caFile: opts.caFile } : {}),
  };
  const { transactionId, endpoint, outcome } = await sendStart(send);
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ endpoint, transactionId, outcome })}\n`);
  } else if (outcome.kind === 'approved') {
    process.stdout.write(
      `Approved  TransactionId ${transactionId}  (${outcome.elapsedMs} ms)\n${JSON.stringify(outcome.response)}\n`,
    );
  } else if (outcome.kind === 'declined') {
    process.stdout.write(
      `Declined  code ${outcome.code}: ${outcome.message ?? ''}  TransactionId ` +
        `${transactionId}\n${JSON.stringify(outcome.response)}\n`,
    );
  } else {
    process.stdout.write(`No answer: ${outcome.failure} (${outcome.detail})  POST ${endpoint}\n`);
  }
  process.exitCode =
    outcome.kind === 'approved'
      ? ExitCodes.OK
      : outcome.kind === 'declined'
        ? ExitCodes.FAILURE
        : ExitCodes.UNAVAILABLE;
}
