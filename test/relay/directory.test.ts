/**
 * The relay's map from TerminalId/UniQR to machine: identity from the operator's registry, online
 * and acceptsRelayedStart from the retained status; a status claiming another machine's identifiers
 * is ignored for that claim and raised.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/core/log.js';
import { MachineDirectory } from '../../src/relay/directory.js';
import type { Registry, RegistryMachine } from '../../src/relay/registry.js';

const T = { timeout: 5_000 };
const online = (machineId: string, terminalId: string, uniQr: string | null, accepts = true) =>
  Buffer.from(
    JSON.stringify({
      online: true, machineId, terminalId, uniQr, version: '1', startedAt: 'x', reader: 'enabled', readerDisabledRemotely: false,
      gateway: 'online', outbox: { pending: 0, dead: 0 }, alarms: [], acceptsRelayedStart: accepts, at: 'x',
    }),
  );

function registryOf(machines: RegistryMachine[]): Registry {
  return {
    machines: machines.length,
    keyId: 'k',
    issuedAt: 1,
    expiresAt: 2,
    byTerminalId: new Map(machines.map((m) => [m.terminalId, m.machineId])),
    byUniQr: new Map(machines.filter((m) => m.uniQr !== null).map((m) => [m.uniQr!, m.machineId])),
    byMachineId: new Map(machines.map((m) => [m.machineId, m])),
  };
}

const REGISTRY = registryOf([
  { machineId: 'M1', terminalId: 'T1', uniQr: 'Q1' },
  { machineId: 'M2', terminalId: 'T2', uniQr: 'Q2' },
]);

function directory(max = 10, registry: () => Registry = () => REGISTRY) {
  const lines: string[] = [];
  const log = createLogger({ level: 'debug', destination: new Writable({ write: (c: Buffer, _e, done) => (lines.push(c.toString()), done()) }) });
  return { d: new MachineDirectory(max, registry, log), lines };
}

test('found by TerminalId, by UniQR, or by both when they agree; conflict and unknown otherwise', T, () => {
  const { d } = directory();
  d.update('M1', online('M1', 'T1', 'Q1'));
  d.update('M2', online('M2', 'T2', 'Q2'));
  assert.equal(d.find('T1', undefined).kind, 'found');
  assert.equal(d.find(undefined, 'Q2').kind, 'found');
  assert.equal(d.find('T1', 'Q1').kind, 'found');
  assert.equal(d.find('T1', 'Q2').kind, 'conflict');
  assert.equal(d.find('T9', undefined).kind, 'unknown');
  assert.equal(d.find(undefined, 'Q9').kind, 'unknown');
  // A UniQR the registry does not list, with a known TerminalId: the machine judges it (it answers 50 itself).
  assert.equal(d.find('T1', 'Q9').kind, 'found');
});

test('a machine of the registry with no status, or gone (its last will), is found offline; an empty retained message forgets the status', T, () => {
  const { d } = directory();
  const unseen = d.find('T2', undefined);
  assert.ok(unseen.kind === 'found' && !unseen.machine.online);
  d.update('M1', online('M1', 'T1', 'Q1'));
  d.update('M1', Buffer.from('{"online":false}'));
  const found = d.find(undefined, 'Q1');
  assert.ok(found.kind === 'found' && !found.machine.online && !found.machine.acceptsRelayedStart);
  assert.equal(d.onlineCount, 0);
  d.update('M1', Buffer.alloc(0));
  assert.equal(d.size, 0);
});

test("a status claiming another machine's TerminalId or UniQR moves nothing and is raised; an unregistered machine is never routed to", T, () => {
  const { d, lines } = directory();
  d.update('M1', online('M1', 'T1', 'Q1'));
  d.update('M2', online('M2', 'T1', 'Q1'));
  d.update('M2', online('M2', 'T1', 'Q1')); // the same claim again: counted and logged once
  const byTerminal = d.find('T1', undefined);
  const byQr = d.find(undefined, 'Q1');
  assert.ok(byTerminal.kind === 'found' && byTerminal.machine.machineId === 'M1');
  assert.ok(byQr.kind === 'found' && byQr.machine.machineId === 'M1');
  assert.equal(d.claims.impostor, 1);
  assert.match(d.impostors.get('M2') ?? '', /TerminalId of M1, UniQR of M1/);
  assert.equal(lines.filter((l) => l.includes('"relay.impostor"') && l.includes('"level":"warn"')).length, 1, 'one warn line');
  d.update('M9', online('M9', 'T9', null));
  assert.equal(d.find('T9', undefined).kind, 'unknown');
  assert.equal(d.claims.unregistered, 1);
});

test('bad, foreign and surplus statuses are dropped and counted', T, () => {
  const { d } = directory(2);
  d.update('M2', Buffer.from('not json'));
  d.update('M2', online('M3', 'T3', null));
  assert.equal(d.dropped.invalid, 2);
  d.update('M1', online('M1', 'T1', null));
  d.update('M2', online('M2', 'T2', null));
  d.update('M3', online('M3', 'T3', null));
  assert.equal(d.dropped.full, 1);
  assert.equal(d.size, 2);
});

test('a new registry judges the claims again: an identifier given to the claimant clears its alarm', T, () => {
  let current = REGISTRY;
  const { d } = directory(10, () => current);
  d.update('M2', online('M2', 'T1', null));
  assert.ok(d.impostors.has('M2'));
  current = registryOf([{ machineId: 'M2', terminalId: 'T1', uniQr: null }]);
  d.rejudge();
  assert.ok(!d.impostors.has('M2'));
  const found = d.find('T1', undefined);
  assert.ok(found.kind === 'found' && found.machine.machineId === 'M2');
});
