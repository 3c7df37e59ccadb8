/**
 * Runs the checks in order, each under its own deadline so a hung device or network can never
 * hang the doctor, and a check that throws is reported as FAIL rather than ending the run.
 */
import { createDoctorContext, type ContextOptions } from './context.js';
import type { Check, CheckOutcome, CheckResult, CheckStatus, DoctorContext, DoctorReport } from './types.js';
import { configCheck } from './checks/config.js';
import { secretTokenCheck } from './checks/secret-token.js';
import { startEndpointCheck } from './checks/start-endpoint.js';
import { serialCheck } from './checks/serial.js';
import { boardCheck } from './checks/board.js';
import { readerCheck } from './checks/reader.js';
import { vmcCheck } from './checks/vmc.js';
import { gatewayCheck } from './checks/gateway.js';
import { clockCheck } from './checks/clock.js';
import { diskCheck } from './checks/disk.js';
import { ledgerCheck } from './checks/ledger.js';
import { outboxCheck } from './checks/outbox.js';
import { displayCheck } from './checks/display.js';
import { fleetTrustCheck } from './checks/fleet-trust.js';
import { gpioCheck } from './checks/gpio.js';

/** The order matters: board and reader read what serial found; clock reads the gateway's Date. */
export const ALL_CHECKS: readonly Check[] = [
  configCheck,
  secretTokenCheck,
  startEndpointCheck,
  serialCheck,
  boardCheck,
  readerCheck,
  vmcCheck,
  gatewayCheck,
  clockCheck,
  diskCheck,
  ledgerCheck,
  outboxCheck,
  displayCheck,
  gpioCheck,
  fleetTrustCheck,
];

export interface DoctorOptions extends ContextOptions {
  /** Default ALL_CHECKS. */
  checks?: readonly Check[];
  /** Deadline per check; default 15 s. */
  checkTimeoutMs?: number;
}

async function runOne(check: Check, ctx: DoctorContext, timeoutMs: number): Promise<CheckOutcome> {
  if (check.needsConfig && ctx.config === null) {
    return {
      status: 'WARN',
      summary: 'skipped: the configuration did not load',
      action: 'fix the configuration check first',
    };
  }
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<CheckOutcome>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          status: 'FAIL',
          summary: `the check did not finish within ${timeoutMs / 1000} s`,
          action: 'run the doctor again; if it persists, see qrvend-logs',
        }),
      timeoutMs,
    );
  });
  try {
    const work = check.needsConfig ? check.run(ctx, ctx.config!) : check.run(ctx);
    return await Promise.race([work, deadline]);
  } catch (err) {
    return {
      status: 'FAIL',
      summary: `the check itself failed: ${(err as Error)?.message ?? String(err)}`,
      action: 'report this with the doctor output',
    };
  } finally {
    clearTimeout(timer);
  }
}

export async function runDoctor(options: DoctorOptions = {}): Promise<DoctorReport> {
  const ctx = createDoctorContext(options);
  const timeoutMs = options.checkTimeoutMs ?? 15_000;
  const results: CheckResult[] = [];
  for (const check of options.checks ?? ALL_CHECKS) {
    const outcome = await runOne(check, ctx, timeoutMs);
    results.push({ id: check.id, title: check.title, ...outcome });
  }
  const counts: Record<CheckStatus, number> = { OK: 0, WARN: 0, FAIL: 0 };
  for (const r of results) counts[r.status] += 1;
  return { ok: counts.FAIL === 0, counts, results };
}

/** 0 when nothing failed (warnings allowed), 1 otherwise. */
export function doctorExitCode(report: DoctorReport): 0 | 1 {
  return report.ok ? 0 : 1;
}
