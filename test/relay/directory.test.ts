/** The relay's map from TerminalId/UniQR to machine, built from retained status messages. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MachineDirectory } from '../../src/relay/directory.js';

const T = { timeout: 5_000 };
const online = (machineId: string, terminalId: string, uniQr: string | null, accepts = true) =>
  Buffer.from(
    JSON.stringify({
      online: true, machineId, terminalId, uniQr, version: '1', startedAt: 'x', reader: 'enabled', readerDisabledRemotely: false,
      gateway: 'online', outbox: { pending: 0, dead: 0 }, alarms: [], acceptsRelayedStart: accepts, at: 'x',
    }),
  );

test('found by TerminalId, by UniQR, or by both when they agree; conflict and unknown otherwise', T, () => {
  const d = new MachineDirectory(10);
  d.update('M1', online('M1', 'T1', 'Q1'));
  d.update('M2', online('M2', 'T2', 'Q2'));
  assert.equal(d.find('T1', undefined).kind, 'found');
  assert.equal(d.find(undefined, 'Q2').kind, 'found');
  assert.equal(d.find('T1', 'Q1').kind, 'found');
  assert.equal(d.find('T1', 'Q2').kind, 'conflict');
  assert.equal(d.find('T9', undefined).kind, 'unknown');
  assert.equal(d.find(undefined, 'Q9').kind, 'unknown');
  // A UniQR the relay has not seen, with a known TerminalId: the machine judges it (it answers 50 itself).
  assert.equal(d.find('T1', 'Q9').kind, 'found');
});

test('the last will keeps the identifiers and marks the machine offline; an empty retained message forgets it', T, () => {
  const d = new MachineDirectory(10);
  d.update('M1', online('M1', 'T1', 'Q1'));
  d.update('M1', Buffer.from('{"online":false}'));
  const found = d.find(undefined, 'Q1');
  assert.ok(found.kind === 'found' && !found.machine.online && !found.machine.acceptsRelayedStart);
  assert.equal(d.onlineCount, 0);
  d.update('M1', Buffer.alloc(0));
  assert.equal(d.find('T1', undefined).kind, 'unknown');
  assert.equal(d.size, 0);
  // Seen only by its last will: found by machineId (= TerminalId by default).
  d.update('T7', Buffer.from('{"online":false}'));
  assert.equal(d.find('T7', undefined).kind, 'found');
});

test('a moved identifier follows its machine; bad, foreign and surplus statuses are dropped and counted', T, () => {
  const d = new MachineDirectory(2);
  d.update('M1', online('M1', 'T1', 'Q1'));
  d.update('M1', online('M1', 'T1b', null));
  assert.equal(d.find('T1', undefined).kind, 'unknown');
  assert.equal(d.find(undefined, 'Q1').kind, 'unknown');
  assert.equal(d.find('T1b', undefined).kind, 'found');
  d.update('M2', Buffer.from('not json'));
  d.update('M2', online('M3', 'T3', null));
  assert.equal(d.dropped.invalid, 2);
  d.update('M2', online('M2', 'T2', null));
  d.update('M3', online('M3', 'T3', null));
  assert.equal(d.dropped.full, 1);
  assert.equal(d.size, 2);
});
