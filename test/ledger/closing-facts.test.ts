/**
 * What a closing request repeats from its authorization (docs/decisions/money-conformance.md): the ledger keeps the
 * PaymentInfo text, MachineAuTime and AgeLimitation, so recovery after a restart builds the very
 * bodies a live flow would. Real SQLite files; the production body builders.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { loadConfig } from '../../src/config/load.js';
import { createRequestBuilders } from '../../src/gateway/envelope.js';
import { memberText } from '../../src/gateway/wire/index.js';
import { outboxBodies } from '../../src/flows/bodies.js';
import { openLedger, recoverLedger, SCHEMA_VERSION } from '../../src/ledger/index.js';
import { readOutbox } from '../../src/ledger/admin.js';
import { tempLedgerPath } from './helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const { config } = loadConfig({ env: {} });
const PI = '{"SrvTranId":"S-1", "AuthAmount":5.00,"AuthCode":"A1"}';
/** Builders whose clock is far from the authorization time: a body stamped with "now" would show it. */
const builders = createRequestBuilders(
  config,
  { hwSerial: 'HW', fwVersion: 'test', type: 'qrvend' },
  () => new Date(2030, 0, 1, 0, 0, 0),
);
const bodies = outboxBodies(() => builders, { preauthAmount: 5, decimalPlaces: 2 });

test(
  'recovery after a restart: Settlement and Void carry the recorded PaymentInfo bytes, MachineAuTime and AgeLimitation',
  { timeout: TEST_DEADLINE_MS },
  () => {
    const tmp = tempLedgerPath();
    try {
      let ledger = openLedger({ path: tmp.path, decimalPlaces: 2 });
      ledger.acceptStart({ txId: 'S-1aaaaaaa', appUserId: 'u', balance: null });
      ledger.markAuthorizing('S-1aaaaaaa', 5, { machineAuTime: '150125120000', ageLimit: 18 });
      ledger.markAuthorized('S-1aaaaaaa', PI, 5);
      ledger.openSession('S-1aaaaaaa');
      ledger.recordVendApproved('S-1aaaaaaa', { seq: 1, item: 30, price: 1.5 });
      ledger.recordVendResult('S-1aaaaaaa', 1, 'success');
      ledger.requestQr({
        txId: 'D-1aaaaaaa',
        amount: 2.5,
        item: 30,
        requestId: null,
        machineAuTime: '150125121500',
        ageLimit: 18,
      });
      ledger.recordQrIssued('D-1aaaaaaa', { SrvTranId: 'Q', RRN: 'R' });
      ledger.recordPaid('D-1aaaaaaa', '{"SrvTranId":"Q","RRN":"R","AuthAmount":2.50}', 250);
      ledger.close();

      ledger = openLedger({ path: tmp.path, decimalPlaces: 2 });
      const report = recoverLedger(ledger, bodies);
      assert.deepEqual(report.failed, []);
      assert.equal(ledger.getTransaction('D-1aaaaaaa')?.authAmount, 2.5, 'what was paid is kept');
      ledger.close();
      const rows = readOutbox(tmp.path, { limit: 10 }).rows;
      const settlement = rows.find((r) => r.op === 'Settlement')!.body;
      assert.equal(memberText(settlement, 'PaymentInfo'), PI, 'byte for byte');
      assert.equal(JSON.parse(settlement).BasicInfo.MachineAuTime, '150125120000');
      assert.equal(JSON.parse(settlement).BasicInfo.AgeLimitation, 18);
      assert.match(settlement, /"Amount":1\.50,/);
      const voided = rows.find((r) => r.op === 'Void')!.body;
      assert.equal(memberText(voided, 'PaymentInfo'), '{"SrvTranId":"Q","RRN":"R","AuthAmount":2.50}');
      assert.equal(JSON.parse(voided).BasicInfo.MachineAuTime, '150125121500');
      assert.equal(JSON.parse(voided).BasicInfo.AgeLimitation, 18);
    } finally {
      tmp.cleanup();
    }
  },
);

test(
  'a ledger from before machine_au_time/age_limit is migrated; its ' +
    'open transactions close with the time they were created',
  { timeout: TEST_DEADLINE_MS },
  () => {
    const tmp = tempLedgerPath();
    try {
      const created = new Date(2025, 0, 15, 9, 30, 5).getTime();
      let ledger = openLedger({ path: tmp.path, decimalPlaces: 2, now: () => created });
      ledger.acceptStart({ txId: 'S-old-aaaa', appUserId: 'u', balance: null });
      ledger.markAuthorizing('S-old-aaaa', 5);
      ledger.markAuthorized('S-old-aaaa', PI, 5);
      ledger.close();
      // Back to schema 1, before migration 2 added machine_au_time and age_limit (migration 3 used_tx_ids, 4
      // fleet_events,
      // 5 the event locators; its other changes, the rebuilt tables, read the same; 6 cash_sales).
      const db = new Database(tmp.path);
      db.exec(
        'ALTER TABLE transactions DROP COLUMN machine_au_time; ALTER TABLE transactions DROP ' +
          'COLUMN age_limit; DROP TABLE IF EXISTS used_tx_ids; DROP TABLE IF EXISTS fleet_events;' +
          ' ALTER TABLE transactions DROP COLUMN first_event_id; ALTER TABLE transactions DROP ' +
          'COLUMN last_event_id; DROP TABLE IF EXISTS cash_sales; DROP TABLE IF EXISTS dex_audits;',
      );
      db.pragma('user_version = 1');
      db.close();

      ledger = openLedger({ path: tmp.path, decimalPlaces: 2 });
      const check = new Database(tmp.path, { readonly: true });
      try {
        assert.equal(check.pragma('user_version', { simple: true }), SCHEMA_VERSION);
      } finally {
        check.close();
      }
      assert.equal(ledger.getTransaction('S-old-aaaa')?.machineAuTime, null);
      recoverLedger(ledger, bodies);
      ledger.close();
      const cancel = readOutbox(tmp.path, { limit: 10 }).rows.find((r) => r.op === 'Cancel')!.body;
      assert.equal(JSON.parse(cancel).BasicInfo.MachineAuTime, '150125093005');
      assert.equal(memberText(cancel, 'PaymentInfo'), PI);
    } finally {
      tmp.cleanup();
    }
  },
);
