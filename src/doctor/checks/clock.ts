/**
 * The clock is sane: date-times sent to the gateway are local time, and TLS needs a clock within
 * the certificate's validity. A Pi has no battery-backed clock, so a missed NTP sync shows as 1970.
 */
import { TEST_CLOCK_ENV } from '../../core/clock.js';
import type { Check } from '../types.js';

const EARLIEST_YEAR = 2024;
/** The gateway's Date header has one-second resolution and the request takes time: allow slack. */
const WARN_SKEW_MS = 2 * 60_000;
const FAIL_SKEW_MS = 60 * 60_000;

function minutes(ms: number): string {
  return `${Math.round(Math.abs(ms) / 60_000)} min`;
}

export const clockCheck: Check = {
  id: 'clock',
  title: 'system clock',
  needsConfig: true,
  async run(ctx) {
    const now = ctx.now();
    const details: Record<string, unknown> = { now: now.toISOString() };
    if (ctx.env[TEST_CLOCK_ENV]) {
      return {
        status: 'WARN',
        summary: `${TEST_CLOCK_ENV} is set: the daemon would run on a test clock offset from the system clock`,
        action: `unset ${TEST_CLOCK_ENV} (it is for tests only)`,
        details: { ...details, testClock: true },
      };
    }
    if (now.getFullYear() < EARLIEST_YEAR) {
      return {
        status: 'FAIL',
        summary: `the clock says ${now.toISOString()}: it was never set`,
        action:
          'check time synchronisation: timedatectl status; systemctl ' +
          'status systemd-timesyncd (NTP must reach the network)',
        details,
      };
    }
    const { gatewayDate, gatewayDateSeenAt } = ctx.facts;
    if (gatewayDate === undefined || gatewayDateSeenAt === undefined) {
      return {
        status: 'OK',
        summary: `${now.toISOString()} (not compared with the gateway: no Date header from it)`,
        details,
      };
    }
    const skewMs = gatewayDateSeenAt.getTime() - gatewayDate.getTime();
    details.gatewayDate = gatewayDate.toISOString();
    details.skewMs = skewMs;
    const direction = skewMs > 0 ? 'ahead of' : 'behind';
    if (Math.abs(skewMs) > FAIL_SKEW_MS) {
      return {
        status: 'FAIL',
        summary: `the clock is ${minutes(skewMs)} ${direction} the gateway's`,
        action:
          'fix time synchronisation (timedatectl status; timedatectl ' +
          'set-ntp true); the gateway may refuse wrong date-times',
        details,
      };
    }
    if (Math.abs(skewMs) > WARN_SKEW_MS) {
      return {
        status: 'WARN',
        summary: `the clock is ${minutes(skewMs)} ${direction} the gateway's`,
        action: 'check NTP: timedatectl status',
        details,
      };
    }
    return {
      status: 'OK',
      summary: `${now.toISOString()}, within ${WARN_SKEW_MS / 60_000} min of the gateway's clock`,
      details,
    };
  },
};
