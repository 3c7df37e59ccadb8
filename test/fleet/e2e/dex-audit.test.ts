/**
 * The machine audit end to end (docs/decisions/dex-audit.md): the real daemon with its DEX line on a pty pair, the
 * DEX VMC simulator (DEX/UCS) serving the annotated fixtures, a real MQTT broker and the real
 * ledger file. A signed dex.read reads, stores and publishes the audit; the second read's interval
 * is reconciled with the ledger (no qrvend vends: AUDIT_MISMATCH with both figures). DDCMP found
 * through the daemon and three failed reads in a row wait on the protocols' timers: the slow tier's
 * dex-read-failures.slow.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import Database from 'better-sqlite3';
import { createRig, until } from '../../../rigs/rig.js';
import { startTestBroker } from '../../../rigs/broker/index.js';
import { startDexSim } from '../../../src/sim/dex/vmc.js';
import { createPtyPair } from '../../support/pty.js';
import { PREFIX, protocolFor, startWatcher } from './support/fleet-watcher.js';
import { testKey, writeTrustFile } from '../support/operator-keys.js';
import { formatEventLine } from '../../../src/fleet/operator/index.js';
import type { FleetEvent } from '../../../src/fleet/contract/index.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const MACHINE = 'M-DEX-1';
const fixture = (name: string) => readFileSync(new URL(`../../../../test/fixtures/dex/${name}`, import.meta.url));
const ops = testKey('ops', ['read', 'operate']);

test(
  'a signed dex.read reads the VMC over DEX/UCS, stores the audit, publishes it in parts and reconciles the next one',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const broker = await startTestBroker();
    const scratch = mkdtempSync(join(tmpdir(), 'qrvend-dex-e2e-'));
    const dexPty = await createPtyPair();
    const sim = await startDexSim({
      path: dexPty.vmcPath,
      protocol: 'dex-ucs',
      files: [fixture('vmc-a1.dex'), fixture('vmc-a2.dex')],
      behaviour: 'normal',
    });
    const trustFile = writeTrustFile(scratch, [ops]);
    const rig = await createRig({
      config: {
        fleet: {
          url: broker.url,
          topicPrefix: PREFIX,
          machineId: MACHINE,
          protocolVersion: protocolFor(broker),
          healthIntervalS: 5,
          trustFile,
        },
        // On demand only: the test decides when the VMC is read.
        dex: { port: dexPty.agentPath, protocol: 'auto', intervalS: 0 },
      },
    });
    const watcher = await startWatcher(broker.url, protocolFor(broker), MACHINE, ops);
    try {
      await rig.startAgent();
      await until(() => watcher.lastStatus()?.online === true, 10_000, 'the retained status online');

      const first = await watcher.command('dex.read', {}, 60_000);
      assert.equal(first.ok, true, JSON.stringify(first));
      const r1 = (first as { result: Record<string, any> }).result;
      assert.equal(r1.protocol, 'dex-ucs');
      assert.equal(r1.bytes, fixture('vmc-a1.dex').length);
      assert.deepEqual(r1.check, { ok: true, reason: null });
      assert.equal(r1.interval.kind, 'first');
      const part = (await watcher.waitForEvent(
        (e) => e.kind === 'audit' && e.auditId === r1.auditId,
        20_000,
        'the first audit event',
      )) as Extract<FleetEvent, { kind: 'audit' }>;
      assert.deepEqual(Buffer.from(part.raw, 'base64'), fixture('vmc-a1.dex'), 'the file byte for byte');
      assert.equal((part.summary as any).machine.serial, 'VM2024001');
      assert.match(
        formatEventLine(MACHINE, part),
        /audit  \S+ part 1\/1  serial VM2024001, \d+ bytes dex-ucs, check ok, NEW SERIES/,
      );

      const second = await watcher.command('dex.read', {}, 60_000);
      assert.equal(second.ok, true, JSON.stringify(second));
      const r2 = (second as { result: Record<string, any> }).result;
      assert.equal(r2.interval.kind, 'sales');
      assert.deepEqual(r2.interval.sales.cashless1, { value: 1800, count: 12 });
      assert.equal(r2.reconciliation.status, 'mismatch');
      const alarm = await watcher.waitForEvent(
        (e) => e.kind === 'alarm' && e.code === 'AUDIT_MISMATCH' && e.state === 'raised',
        20_000,
        'the AUDIT_MISMATCH alarm',
      );
      assert.match(
        JSON.stringify(alarm),
        /the VMC counted 12 vends \(DA2, value 1800 at 2 decimals\), qrvend's ledger 0/,
      );
      await watcher.waitForEvent(
        (e) => e.kind === 'audit' && e.auditId === r2.auditId,
        20_000,
        'the second audit event',
      );
      assert.equal(sim.served, 2);

      // Delivered events leave the ledger once the broker acknowledged them (read beside the running daemon: WAL).
      const queuedAudits = () => {
        const db = new Database(join(rig.dir, 'ledger.sqlite'), { readonly: true });
        try {
          return (
            db.prepare(`SELECT COUNT(*) AS n FROM fleet_events WHERE body LIKE '{"kind":"audit"%'`).get() as {
              n: number;
            }
          ).n;
        } finally {
          db.close();
        }
      };
      await until(() => queuedAudits() === 0, 20_000, 'the acknowledged audit events to leave the ledger');
      await rig.stopAgent('SIGTERM');
      const db = new Database(join(rig.dir, 'ledger.sqlite'), { readonly: true });
      try {
        const rows = db.prepare('SELECT audit_id, raw, check_ok, series FROM dex_audits ORDER BY id').all() as {
          audit_id: string;
          raw: Buffer;
          check_ok: number;
          series: number;
        }[];
        assert.deepEqual(
          rows.map((r) => [r.audit_id, r.check_ok, r.series]),
          [
            [r1.auditId, 1, 1],
            [r2.auditId, 1, 1],
          ],
        );
        assert.deepEqual(rows[1]!.raw, fixture('vmc-a2.dex'));
      } finally {
        db.close();
      }
    } finally {
      await watcher.close();
      await rig.close();
      await sim.close();
      await dexPty.close();
      await broker.close();
      rmSync(scratch, { recursive: true, force: true });
    }
  },
);

test(
  'scheduled reads (dex.intervalS) read a VMC that resets its ' +
    'interval counters on read: one series, sales from lifetime counters',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const broker = await startTestBroker();
    const dexPty = await createPtyPair();
    const files = [fixture('vmc-a1.dex'), fixture('vmc-a2.dex'), fixture('vmc-a3-reset-on-read.dex')];
    const sim = await startDexSim({ path: dexPty.vmcPath, protocol: 'dex-ucs', files, behaviour: 'normal' });
    const rig = await createRig({
      config: {
        fleet: {
          url: broker.url,
          topicPrefix: PREFIX,
          machineId: 'M-DEX-2',
          protocolVersion: protocolFor(broker),
          healthIntervalS: 5,
        },
        dex: { port: dexPty.agentPath, protocol: 'dex-ucs', intervalS: 1 },
      },
    });
    const watcher = await startWatcher(broker.url, protocolFor(broker), 'M-DEX-2');
    try {
      await rig.startAgent();
      const audits = () =>
        watcher.events.filter((e): e is Extract<FleetEvent, { kind: 'audit' }> => e.kind === 'audit');
      await until(() => audits().length >= 3, 60_000, 'three scheduled audit reads');
      const [a1, a2, a3] = audits()
        .slice(0, 3)
        .map((e) => e.summary as Record<string, any>);
      assert.deepEqual([a1!.trigger, a2!.trigger, a3!.trigger], ['schedule', 'schedule', 'schedule']);
      assert.deepEqual([a1!.interval.kind, a2!.interval.kind, a3!.interval.kind], ['first', 'sales', 'sales']);
      assert.deepEqual([a1!.series, a2!.series, a3!.series], [1, 1, 1]);
      // a3's "since reset" figures were cleared by the VMC after the second read; its lifetime ones give the day's 3.
      assert.deepEqual(a3!.interval.sales.cashless1, { value: 390, count: 3 });
    } finally {
      await watcher.close();
      await rig.close();
      await sim.close();
      await dexPty.close();
      await broker.close();
    }
  },
);
