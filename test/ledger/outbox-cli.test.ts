/** `qrvend outbox` end to end: the built CLI against a real ledger file in a temp dir. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ManualClock, openStaticSession, openTest, settlementBody, tempLedgerPath } from './helpers.js';
import { CHILD_DEADLINE_MS, TEST_DEADLINE_MS } from '../support/deadlines.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

function qrvend(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [MAIN, ...args], {
    encoding: 'utf8',
    timeout: CHILD_DEADLINE_MS,
    env: { ...process.env, QRVEND_CONFIG: '' },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function seed(path: string): { deadId: number; pendingId: number } {
  const clock = new ManualClock();
  const ledger = openTest(path, clock);
  const settle = (txId: string) => {
    openStaticSession(ledger, txId);
    ledger.recordVendApproved(txId, { seq: 1, item: 4, price: 1.5 });
    ledger.recordVendResult(txId, 1, 'success');
    return ledger.settleSession(txId, settlementBody(txId, 1.5, 1)).outboxId!;
  };
  const deadId = settle('TX-CLI-DEAD');
  ledger.outbox.deadLetter(ledger.outbox.get(deadId)!, clock.ms, 'declined 8: format error', 8);
  clock.advance(60_000);
  const pendingId = settle('TX-CLI-PENDING');
  ledger.close();
  return { deadId, pendingId };
}

test(
  'qrvend outbox lists pending, dead and recent rows; bodies only with --bodies',
  { timeout: TEST_DEADLINE_MS },
  () => {
    const tmp = tempLedgerPath();
    try {
      const site = join(tmp.dir, 'site.json');
      writeFileSync(site, JSON.stringify({ store: { path: tmp.path } }));
      const { deadId, pendingId } = seed(tmp.path);

      const all = qrvend(['outbox', '--config', site, '--json']);
      assert.equal(all.status, 0, all.stderr);
      const listing = JSON.parse(all.stdout) as {
        pending: number;
        dead: number;
        oldestPendingAt: string;
        rows: Array<Record<string, unknown>>;
      };
      assert.equal(listing.pending, 1);
      assert.equal(listing.dead, 1);
      assert.equal(listing.oldestPendingAt, '2025-01-15T12:01:00.000Z');
      assert.deepEqual(
        listing.rows.map((r) => [r.id, r.status]),
        [
          [pendingId, 'pending'],
          [deadId, 'dead'],
        ],
      );
      assert.ok(
        listing.rows.every((r) => !('body' in r)),
        'no bodies unless asked',
      );

      const dead = JSON.parse(qrvend(['outbox', '--config', site, '--json', '--dead', '--bodies']).stdout) as {
        rows: Array<Record<string, unknown>>;
      };
      assert.equal(dead.rows.length, 1);
      assert.equal(dead.rows[0]?.lastCode, 8);
      assert.equal(JSON.parse(String(dead.rows[0]?.body)).BasicInfo.TransactionId, 'TX-CLI-DEAD');

      const text = qrvend(['outbox', '--config', site, '--pending']);
      assert.equal(text.status, 0);
      assert.match(text.stdout, /1 pending, 1 dead/);
      assert.match(text.stdout, /TX-CLI-PENDING/);
      assert.doesNotMatch(text.stdout, /TX-CLI-DEAD/);

      const recent = JSON.parse(qrvend(['outbox', '--config', site, '--json', '--recent', '1']).stdout) as {
        rows: unknown[];
      };
      assert.equal(recent.rows.length, 1);
    } finally {
      tmp.cleanup();
    }
  },
);

test(
  'qrvend outbox retry moves a dead row back to pending; bad ids and a missing ledger fail clearly',
  { timeout: TEST_DEADLINE_MS },
  () => {
    const tmp = tempLedgerPath();
    try {
      const site = join(tmp.dir, 'site.json');
      writeFileSync(site, JSON.stringify({ store: { path: tmp.path } }));
      const missing = qrvend(['outbox', '--config', site]);
      assert.equal(missing.status, 1);
      assert.match(missing.stderr, /LEDGER_NOT_FOUND: no ledger at /);

      const { deadId, pendingId } = seed(tmp.path);
      const retried = qrvend(['outbox', 'retry', String(deadId), '--config', site, '--json']);
      assert.equal(retried.status, 0, retried.stderr);
      assert.deepEqual(JSON.parse(retried.stdout), {
        ok: true,
        id: deadId,
        txId: 'TX-CLI-DEAD',
        op: 'Settlement',
        status: 'pending',
      });
      const after = JSON.parse(qrvend(['outbox', '--config', site, '--json']).stdout) as {
        pending: number;
        dead: number;
      };
      assert.deepEqual([after.pending, after.dead], [2, 0]);

      const notDead = qrvend(['outbox', 'retry', String(pendingId), '--config', site]);
      assert.equal(notDead.status, 64);
      assert.match(notDead.stderr, /is pending, not dead/);
      const unknown = qrvend(['outbox', 'retry', '999', '--config', site]);
      assert.equal(unknown.status, 1);
      assert.match(unknown.stderr, /OUTBOX_NOT_FOUND: outbox row 999 does not exist/);
      const garbage = qrvend(['outbox', 'retry', 'x1', '--config', site]);
      assert.equal(garbage.status, 64);
      assert.match(garbage.stderr, /must be a positive whole number, got "x1"/);
    } finally {
      tmp.cleanup();
    }
  },
);
