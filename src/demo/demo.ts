/**
 * `qrvend demo` (what `npm start` runs): the real agent (machine loop, payment worker, display
 * worker) with the gateway simulator on loopback and the VMC simulator on the in-memory serial
 * line, and a simulated consumer buying through both flows:
 *
 *   1. Static QR: the wallet sends Start, the agent authorizes, two vends succeed, the session
 *      ends and one Settlement carries both.
 *   2. Dynamic QR: a selection, the QR shown in the terminal, paid after two polls, dispensed.
 *   3. Dynamic QR: paid, but the machine fails to dispense: the payment is voided.
 *
 * Then it prints the simulator's ledger and a one-line verdict; exit 0 when every sale was
 * settled exactly once.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../config/load.js';
import type { QrvendConfig } from '../config/schema.js';
import { createLogger, type LogLevel } from '../core/log.js';
import { startDaemon } from '../daemon/daemon.js';
import { startGatewaySimulator, type GatewaySimulator } from '../sim/gateway/index.js';
import { VmcSimulator } from '../sim/vmc/index.js';
import { sendStart } from '../sim/wallet/index.js';
import { checkSales, formatCheck } from '../sim/checker.js';
import type { BoardCommand } from '../mdb/codec/index.js';
import { nextCommand, until } from '../sim/wait.js';

export interface DemoOptions {
  logLevel: LogLevel;
  /** Draw screens (the dynamic QR) in the terminal. */
  showQr: boolean;
  /** Per-step deadline. */
  stepTimeoutMs: number;
  out?: (line: string) => void;
}

export async function runDemo(options: DemoOptions): Promise<number> {
  const say = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-demo-'));
  const tokenFile = join(dir, 'secret-token');
  const secretToken = randomBytes(32).toString('hex');
  writeFileSync(tokenFile, `${secretToken}\n`, { mode: 0o600 });

  const gateway = await startGatewaySimulator({ host: '127.0.0.1', port: 0 });
  const config = demoConfig(options, gateway.url, dir, tokenFile);
  const log = createLogger({ level: options.logLevel, name: 'qrvend' });
  const vmc = new VmcSimulator({ vendPolicy: 'manual', decimalPlaces: config.machine.decimalPlaces, seed: 1 });
  const daemon = startDaemon({ config, log, onSimWire: (wire) => vmc.attach(wire.vmcEnd), statsIntervalMs: 0 });
  const t = options.stepTimeoutMs;
  const run: DemoRun = { say, vmc, t };
  let exitCode = 1;
  try {
    const enabled = nextCommand(vmc, (c) => c.kind === 'enable' && c.enabled, t, 'the reader to be enabled');
    const { startUrl } = await daemon.ready;
    await enabled;
    say(`qrvend demo: agent ready, Start endpoint ${startUrl}, gateway simulator ${gateway.url}`);

    await staticQrSale(run, startUrl, config.start.integratorName, secretToken);
    await dynamicQrSales(run);

    // Let the outbox deliver everything, then compare the two sides.
    await until(
      () =>
        gateway.ledger().summary.openAuthorizations.length === 0 &&
        Object.values(gateway.ledger().transactions).filter((tx) => tx.void !== null).length >= 1,
      t,
      'the outbox to deliver',
    );
    // Stop the agent first so its screens do not interleave with the report.
    await daemon.stop('demo finished');
    exitCode = report(run, gateway, config.machine.decimalPlaces);
  } catch (err) {
    say(`\nVERDICT: FAILED - ${(err as Error).message}`);
    exitCode = 1;
  } finally {
    await daemon.stop('demo finished');
    await vmc.close();
    await gateway.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return exitCode;
}

/** What each step of the demo works with: where it reports, the simulated VMC, the step deadline. */
interface DemoRun {
  say: (line: string) => void;
  vmc: VmcSimulator;
  t: number;
}

function demoConfig(options: DemoOptions, gatewayUrl: string, dir: string, tokenFile: string): QrvendConfig {
  const { config } = loadConfig({
    env: {},
    overrides: {
      gateway: { baseUrl: gatewayUrl, timeoutMs: 3000 },
      start: { listen: '127.0.0.1:0', secretTokenFile: tokenFile, integratorName: 'qrvend-demo' },
      machine: { terminalId: 'DEMO-TERMINAL-1', uniQr: 'QRVEND-DEMO-0001' },
      device: { hwSerial: 'DEMO-HW-0001' },
      mdb: { port: 'sim', linkWatchdogMs: 2000 },
      store: { path: join(dir, 'ledger.sqlite'), backoffBaseMs: 100, backoffCapMs: 1000 },
      display: { terminal: options.showQr },
      staticQr: { preauthAmount: 10 },
      dynamicQr: { pollIntervalMs: 300, paymentTimeoutMs: 15_000 },
      catalog: {
        '12': { name: 'Sparkling water' },
        '7': { name: 'Chocolate bar' },
        '3': { name: 'Coffee' },
        '4': { name: 'Crisps' },
      },
      gpio: { mode: 'off' },
      log: { level: options.logLevel, statsIntervalMs: 0 },
    },
  });
  return config;
}

/** 1. Static QR: two vends in one session, one Settlement. */
async function staticQrSale(
  { say, vmc, t }: DemoRun,
  startUrl: string | null,
  integratorName: string,
  secretToken: string,
): Promise<void> {
  say('\n1. Static QR: the consumer scans the sticker, the wallet sends Start');
  const sessionOpened = nextCommand(vmc, (c) => c.kind === 'start', t, 'the session to open');
  const start = await sendStart({
    url: new URL(startUrl!).origin,
    integratorName,
    secretToken,
    terminalId: 'DEMO-TERMINAL-1',
  });
  if (start.outcome.kind !== 'approved') throw new Error(`Start was not approved: ${JSON.stringify(start.outcome)}`);
  const funds = (await sessionOpened) as Extract<BoardCommand, { kind: 'start' }>;
  say(
    `   Start approved (TransactionId ${start.transactionId}); authorized, MDB session open with ` +
      `${funds.funds.toFixed(2)}`,
  );
  for (const [item, price] of [
    [12, 1.5],
    [7, 2.0],
  ] as const) {
    const approved = nextCommand(vmc, (c) => c.kind === 'vend-approve' || c.kind === 'vend-deny', t, 'the vend answer');
    vmc.select(item, price);
    const answer = await approved;
    if (answer.kind !== 'vend-approve') throw new Error(`vend of item ${item} was denied`);
    vmc.vendSuccess();
    say(`   item ${item} at ${price.toFixed(2)}: approved locally, dispensed`);
  }
  vmc.endSession();
  say('   session complete: Settlement of 3.50 queued in the outbox');
}

/** 2. and 3. Dynamic QR: one sale paid and dispensed, one paid and not dispensed (voided). */
async function dynamicQrSales({ say, vmc, t }: DemoRun): Promise<void> {
  // 2. Dynamic QR, paid after two polls, dispensed.
  say('\n2. Dynamic QR: the consumer selects item 3 at 7.02; the QR is shown');
  await until(() => vmc.records().every((s) => s.end !== 'open'), t, 'the static session to end');
  const paid = nextCommand(
    vmc,
    (c) => c.kind === 'vend-approve' || c.kind === 'vend-deny',
    t,
    'the dynamic QR payment',
  );
  vmc.select(3, 7.02);
  if ((await paid).kind !== 'vend-approve') throw new Error('dynamic QR payment was not approved');
  vmc.vendSuccess();
  say('   paid by the wallet (Inquiry approved on the third poll), dispensed: sale closed');

  // 3. Dynamic QR, paid, dispense fails: Void.
  say('\n3. Dynamic QR: item 4 at 1.20 is paid, but the machine fails to dispense it');
  await until(() => vmc.records().every((s) => s.end !== 'open'), t, 'the previous vend to end');
  const paid2 = nextCommand(
    vmc,
    (c) => c.kind === 'vend-approve' || c.kind === 'vend-deny',
    t,
    'the second dynamic QR payment',
  );
  vmc.select(4, 1.2);
  if ((await paid2).kind !== 'vend-approve') throw new Error('second dynamic QR payment was not approved');
  vmc.vendFailure(3);
  say('   vend failed: Void queued in the outbox, the consumer is refunded');
}

/** The simulator's ledger and the verdict; the exit code (0 when every sale was settled exactly once). */
function report({ say, vmc }: DemoRun, gateway: GatewaySimulator, decimalPlaces: number): number {
  const ledger = gateway.ledger();
  say('\nGateway simulator ledger:');
  for (const tx of Object.values(ledger.transactions)) {
    const closing = tx.settlement
      ? `Settlement ${tx.settlement.amount.toFixed(2)} ${tx.settlement.verdict}`
      : tx.cancel
        ? `Cancel ${tx.cancel.verdict}`
        : tx.void
          ? `Void ${tx.void.amount.toFixed(2)} ${tx.void.verdict}`
          : 'no closing (sale closed by vend success)';
    say(`   ${tx.transactionId.padEnd(34)} ${tx.flow.padEnd(8)} ${tx.state.padEnd(10)} ${closing}`);
  }
  const check = checkSales(vmc.records(), ledger, decimalPlaces);
  say(`\n${formatCheck(check, decimalPlaces)}`);
  say(check.ok ? '\nVERDICT: OK - every sale was settled exactly once' : '\nVERDICT: FAILED - see the figures above');
  return check.ok ? 0 : 1;
}
