/**
 * The audit reads around the processing: the main side's schedule and one-at-a-time rule over a
 * stand-in link, and the payment side's alarms and dex.read answers over a real SQLite ledger.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ErrorCodes, QrvendError } from '../../../src/core/errors.js';
import { silentLogger } from '../../../src/core/log.js';
import type { DexLink, DexRead } from '../../../src/dex/link/index.js';
import { startDexReads } from '../../../src/dex/main-side.js';
import {
  DexAuditService,
  DexCommandError,
  FAILED_READS_BEFORE_ALARM,
  type AuditAlarm,
} from '../../../src/dex/audit/service.js';
import type { MainToPayment, PaymentToMain } from '../../../src/ipc/messages.js';
import { formatEventLine } from '../../../src/fleet/operator/index.js';
import { FleetEvent } from '../../../src/fleet/contract/index.js';
import { ManualClock, openStaticSession, openTest, tempLedgerPath } from '../../ledger/helpers.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const fixture = (name: string) => readFileSync(new URL(`../../../../test/fixtures/dex/${name}`, import.meta.url));
const DEX_CONFIG = {
  port: '/dev/ttyUSB9',
  protocol: 'auto',
  intervalS: 0,
  maxFileBytes: 1024 * 1024,
  reconcileToleranceVends: 0,
} as const;

/** A stand-in link: each read() waits until the test settles it. */
function standInLink() {
  const pending: { resolve: (r: DexRead) => void; reject: (e: Error) => void }[] = [];
  let reads = 0;
  let running = false;
  const link: DexLink = {
    read: () => {
      if (running) return Promise.reject(new QrvendError(ErrorCodes.DEX_BUSY, 'busy'));
      running = true;
      reads++;
      return new Promise<DexRead>((resolve, reject) => pending.push({ resolve, reject })).finally(
        () => (running = false),
      );
    },
    close: async () => {},
  };
  return { link, pending, reads: () => reads };
}

const tick = () => new Promise((r) => setImmediate(r));

test(
  'main side: a command while a read runs is answered DEX_BUSY at once; the read then ends with its bytes',
  T,
  async () => {
    const { link, pending } = standInLink();
    const posted: MainToPayment[] = [];
    const reads = startDexReads({
      dex: DEX_CONFIG,
      link,
      post: (m) => posted.push(m),
      log: silentLogger(),
      wallNow: () => 1234,
    });
    reads.request(1);
    await tick();
    reads.request(2);
    await tick();
    assert.deepEqual(posted, [
      {
        type: 'dex.audit',
        requestId: 2,
        trigger: 'command',
        atMs: 1234,
        read: {
          ok: false,
          code: 'DEX_BUSY',
          message: 'an audit read is already under way; ask again when it has ended',
        },
      },
    ]);
    pending[0]!.resolve({ protocol: 'dex-ucs', bytes: Buffer.from('DXS'), durationMs: 20 });
    await tick();
    await tick();
    assert.deepEqual(posted[1], {
      type: 'dex.audit',
      requestId: 1,
      trigger: 'command',
      atMs: 1234,
      read: { ok: true, protocol: 'dex-ucs', bytes: Buffer.from('DXS'), durationMs: 20 },
    });
    await reads.stop();
  },
);

test('main side: a failed read is posted with its code and the technician-facing message', T, async () => {
  const { link, pending } = standInLink();
  const posted: MainToPayment[] = [];
  const reads = startDexReads({
    dex: DEX_CONFIG,
    link,
    post: (m) => posted.push(m),
    log: silentLogger(),
    wallNow: () => 1,
  });
  reads.request(7);
  await tick();
  pending[0]!.reject(
    new QrvendError(ErrorCodes.DEX_NO_ANSWER, 'the VMC answered neither DEX/UCS nor DDCMP', {
      hint: 'check the cable',
    }),
  );
  await tick();
  await tick();
  const m = posted[0] as Extract<MainToPayment, { type: 'dex.audit' }>;
  assert.equal(m.read.ok, false);
  if (!m.read.ok) {
    assert.equal(m.read.code, 'DEX_NO_ANSWER');
    assert.equal(m.read.message, 'the VMC answered neither DEX/UCS nor DDCMP (check the cable)');
  }
  await reads.stop();
});

function service(opts: { configured?: boolean } = {}) {
  const tmp = tempLedgerPath();
  const clock = new ManualClock();
  const ledger = openTest(tmp.path, clock);
  const toMain: PaymentToMain[] = [];
  const alarms: [AuditAlarm, boolean, string | null][] = [];
  const svc = new DexAuditService({
    ledger,
    device: 'cashless1',
    tolerance: 0,
    configured: opts.configured ?? true,
    toMain: (m) => toMain.push(m),
    observe: (code, active, detail) => alarms.push([code, active, detail]),
    log: silentLogger(),
  });
  const ok = (bytes: Buffer, requestId: number | null = null): Extract<MainToPayment, { type: 'dex.audit' }> => ({
    type: 'dex.audit',
    requestId,
    trigger: requestId === null ? 'schedule' : 'command',
    atMs: clock.ms,
    read: { ok: true, protocol: 'dex-ucs', bytes, durationMs: 1500 },
  });
  const fail = (code: string): Extract<MainToPayment, { type: 'dex.audit' }> => ({
    type: 'dex.audit',
    requestId: null,
    trigger: 'schedule',
    atMs: clock.ms,
    read: { ok: false, code, message: `${code} message` },
  });
  return { ledger, clock, svc, toMain, alarms, ok, fail, close: () => (svc.close(), ledger.close(), tmp.cleanup()) };
}

test(
  `payment side: DEX_READ_FAILED after ${FAILED_READS_BEFORE_ALARM} failed reads ` +
    `in a row (a bad G85 counts, DEX_BUSY does not), cleared by a good one`,
  T,
  () => {
    const s = service();
    try {
      s.svc.handle(s.fail('DEX_NO_ANSWER'));
      s.svc.handle(s.fail('DEX_BUSY'));
      s.svc.handle(s.ok(fixture('bad-g85.dex')));
      assert.deepEqual(
        s.alarms.filter(([c]) => c === 'DEX_READ_FAILED'),
        [],
      );
      s.svc.handle(s.fail('DEX_CRC'));
      const raised = s.alarms.filter(([c, active]) => c === 'DEX_READ_FAILED' && active);
      assert.equal(raised.length, 1);
      assert.match(raised[0]![2]!, /^3 audit reads in a row failed; the last: DEX_CRC: DEX_CRC message/);
      s.svc.handle(s.ok(fixture('vmc-a1.dex')));
      assert.deepEqual(s.alarms.at(-1), ['DEX_READ_FAILED', false, null]);
      assert.equal(s.ledger.dexAudits.recent(10).length, 2, 'both files kept, the damaged one too');
    } finally {
      s.close();
    }
  },
);

test(
  'payment side: AUDIT_MISMATCH raised with both figures, cleared by the next reconciliation that matches',
  T,
  () => {
    const s = service();
    try {
      s.svc.handle(s.ok(fixture('vmc-a1.dex')));
      s.clock.ms += 1000;
      openStaticSession(s.ledger, 'S-svc-000001', 100);
      for (let seq = 1; seq <= 10; seq++) {
        s.ledger.recordVendApproved('S-svc-000001', { seq, item: 11, price: 1.2 });
        s.ledger.recordVendResult('S-svc-000001', seq, 'success');
      }
      s.clock.ms += 86_400_000;
      s.svc.handle(s.ok(fixture('vmc-a2.dex')));
      const last = s.alarms.at(-1)!;
      assert.equal(last[0], 'AUDIT_MISMATCH');
      assert.equal(last[1], true);
      assert.match(last[2]!, /the VMC counted 12 vends .* qrvend's ledger 10 /);
      s.clock.ms += 1000;
      openStaticSession(s.ledger, 'S-svc-000002', 100);
      for (let seq = 1; seq <= 3; seq++) {
        s.ledger.recordVendApproved('S-svc-000002', { seq, item: 11, price: 1.2 });
        s.ledger.recordVendResult('S-svc-000002', seq, 'success');
      }
      s.clock.ms += 86_400_000;
      s.svc.handle(s.ok(fixture('vmc-a3-reset-on-read.dex')));
      assert.deepEqual(s.alarms.at(-1)!.slice(0, 2), ['AUDIT_MISMATCH', false]);
    } finally {
      s.close();
    }
  },
);

test(
  'payment side: dex.read asks the main thread and answers with what was stored; BUSY and no port are refused',
  T,
  async () => {
    const s = service();
    try {
      const answer = s.svc.command();
      assert.deepEqual(s.toMain, [{ type: 'dex.read', requestId: 1 }]);
      s.svc.handle(s.ok(fixture('vmc-a1.dex'), 1));
      const result = (await answer) as Record<string, unknown>;
      assert.equal(result.bytes, fixture('vmc-a1.dex').length);
      assert.deepEqual(result.check, { ok: true, reason: null });
      assert.equal((result.interval as { kind: string }).kind, 'first');
      const busy = s.svc.command();
      s.svc.handle({
        type: 'dex.audit',
        requestId: 2,
        trigger: 'command',
        atMs: s.clock.ms,
        read: { ok: false, code: 'DEX_BUSY', message: 'under way' },
      });
      await assert.rejects(busy, (err: unknown) => err instanceof DexCommandError && err.code === 'BUSY');
    } finally {
      s.close();
    }
    const off = service({ configured: false });
    try {
      await assert.rejects(
        off.svc.command(),
        (err: unknown) =>
          err instanceof DexCommandError && err.code === 'UNAVAILABLE' && /dex\.port is not set/.test(err.message),
      );
      assert.deepEqual(off.toMain, []);
    } finally {
      off.close();
    }
  },
);

test('fleet watch: the audit line of part 0 says serial, size, check, the interval and the reconciliation', T, () => {
  const s = service();
  try {
    s.ledger.fleetEvents.enable({ machineId: 'M1', currencyCode: 'EUR', maxQueuedAlarms: 10 });
    s.svc.handle(s.ok(fixture('vmc-a1.dex')));
    s.clock.ms += 86_400_000;
    s.svc.handle(s.ok(fixture('vmc-a2.dex')));
    const events = s.ledger.fleetEvents.pending(0, 10).map((e) => FleetEvent.parse(JSON.parse(e.body)));
    const lines = events.map((e) =>
      formatEventLine('M1', e)
        .replace(/^\S+ \S+ +/, '')
        .replace(/audit  \S+/, 'audit  <id>'),
    );
    assert.match(
      lines[0]!,
      new RegExp(
        `^M1 +audit  <id> part 1/1  serial VM2024001, ${fixture('vmc-a1.dex').length} bytes ` +
          `dex-ucs, check ok, NEW SERIES \\(the first audit read: the series starts here\\)$`,
      ),
    );
    assert.match(
      lines[1]!,
      new RegExp(
        `^M1 +audit  <id> part 1/1  serial VM2024001, ${fixture('vmc-a2.dex').length} bytes dex-ucs, check ok, ` +
          `vends paid \\+21, cash \\+6, cashless #1 \\+12, cashless #2 \\+3, MISMATCH the VMC counted 12 vends`,
      ),
    );
  } finally {
    s.close();
  }
});
