/**
 * The relay's map from TerminalId/UniQR to machine: identity from the operator's registry, online
 * and acceptsRelayedStart from the retained status, believed only when the machine signed it with
 * its registry key (docs/relay.md, "What the relay believes"); a status claiming another machine's
 * identifiers is ignored for that claim and raised.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey } from 'node:crypto';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/core/log.js';
import { MachineDirectory } from '../../src/relay/directory.js';
import type { Registry, RegistryMachine } from '../../src/relay/registry.js';
import { generateMachineKey } from '../../src/trust/machine-key.js';
import { machineKeyring, MachineSigner, STATUS_LIFETIME_MS } from '../../src/trust/machine-sig.js';
import { publicKeyFromRaw } from '../../src/trust/keys.js';

const T = { timeout: 5_000 };
const made = new Map<string, ReturnType<typeof generateMachineKey>>();
const keyOf = (machineId: string) => made.get(machineId) ?? made.set(machineId, generateMachineKey()).get(machineId)!;
/** One signer per machine, as one agent start: its statements counted up. */
const signers = new Map<string, MachineSigner>();
function signerOf(machineId: string, fresh = false): MachineSigner {
  let s = signers.get(machineId);
  if (s === undefined || fresh) {
    s = new MachineSigner(machineId, keyOf(machineId).entry.id, createPrivateKey(keyOf(machineId).privatePem));
    s.nextConnection();
    signers.set(machineId, s);
  }
  return s;
}
const online = (
  machineId: string,
  terminalId: string,
  uniQr: string | null,
  accepts = true,
  signer: MachineSigner | null = signerOf(machineId),
  nowMs = Date.now(),
) =>
  Buffer.from(
    JSON.stringify({
      online: true,
      machineId,
      terminalId,
      uniQr,
      version: '1',
      startedAt: 'x',
      reader: 'enabled',
      readerDisabledRemotely: false,
      gateway: 'online',
      outbox: { pending: 0, dead: 0 },
      alarms: [],
      acceptsRelayedStart: accepts,
      at: 'x',
      ...(signer
        ? { machineSig: signer.status({ online: true, acceptsRelayedStart: accepts, terminalId, uniQr }, nowMs) }
        : {}),
    }),
  );
const offline = (signer: MachineSigner) =>
  Buffer.from(
    JSON.stringify({
      online: false,
      machineSig: signer.status(
        { online: false, acceptsRelayedStart: false, terminalId: null, uniQr: null },
        Date.now(),
      ),
    }),
  );

/** The registry as registry.ts builds it; each machine with its own key unless `keyless`. */
function registryOf(given: RegistryMachine[], keyless: string[] = []): Registry {
  const machines = given.map((m) =>
    keyless.includes(m.machineId) || m.machineKeys ? m : { ...m, machineKeys: [keyOf(m.machineId).entry] },
  );
  const byMachineId = new Map(machines.map((m) => [m.machineId, m]));
  return {
    machines: machines.length,
    keyId: 'k',
    issuedAt: 1,
    expiresAt: 2,
    byTerminalId: new Map(machines.map((m) => [m.terminalId, m.machineId])),
    byUniQr: new Map(machines.filter((m) => m.uniQr !== null).map((m) => [m.uniQr!, m.machineId])),
    byMachineId,
    withoutKey: machines.filter((m) => m.machineKeys === undefined).length,
    keysOf: (id) => {
      const keys = byMachineId.get(id)?.machineKeys;
      return keys === undefined
        ? null
        : machineKeyring(keys.map((k) => ({ id: k.id, key: publicKeyFromRaw(k.publicKey) })));
    },
  };
}

const REGISTRY = registryOf([
  { machineId: 'M1', terminalId: 'T1', uniQr: 'Q1' },
  { machineId: 'M2', terminalId: 'T2', uniQr: 'Q2' },
]);

function directory(max = 10, registry: () => Registry = () => REGISTRY, now: () => number = Date.now) {
  const lines: string[] = [];
  const log = createLogger({
    level: 'debug',
    destination: new Writable({ write: (c: Buffer, _e, done) => (lines.push(c.toString()), done()) }),
  });
  return { d: new MachineDirectory(max, registry, log, now), lines };
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

test('a machine of the registry with no status, or gone (its signed last will), is found offline', T, () => {
  const { d } = directory();
  const unseen = d.find('T2', undefined);
  assert.ok(unseen.kind === 'found' && !unseen.machine.online);
  const agent = signerOf('M1', true);
  // armed when the connection opened
  const will = JSON.stringify({ online: false, machineSig: agent.will(Date.now()) });
  d.update('M1', online('M1', 'T1', 'Q1', true, agent));
  assert.equal(d.onlineCount, 1);
  d.update('M1', Buffer.from(will));
  const found = d.find(undefined, 'Q1');
  assert.ok(found.kind === 'found' && !found.machine.online && !found.machine.acceptsRelayedStart);
  assert.equal(d.onlineCount, 0);
});

test(
  "a status claiming another machine's TerminalId or UniQR moves " +
    'nothing and is raised; an unregistered machine is never routed to',
  T,
  () => {
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
    assert.equal(
      lines.filter((l) => l.includes('"relay.impostor"') && l.includes('"level":"warn"')).length,
      1,
      'one warn line',
    );
    d.update('M9', online('M9', 'T9', null));
    assert.equal(d.find('T9', undefined).kind, 'unknown');
    assert.equal(d.claims.unregistered, 1);
  },
);

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

test(
  'an unsigned status, online or offline, or an emptied retained one, ' +
    'is not believed: counted per reason, the held status stays',
  T,
  () => {
    const { d, lines } = directory();
    d.update('M1', online('M1', 'T1', 'Q1'));
    d.update('M1', Buffer.from('{"online":false}')); // a forged last will: anyone could have written it
    d.update('M1', online('M1', 'T1', 'Q1', false, null)); // "does not take relayed Starts", unsigned
    d.update('M1', Buffer.alloc(0)); // the retained status cleared
    assert.equal(d.statusRefused.unsigned, 3);
    const found = d.find('T1', undefined);
    assert.ok(found.kind === 'found' && found.machine.online && found.machine.acceptsRelayedStart);
    assert.ok(lines.some((l) => l.includes('"relay.status.refused"') && l.includes('"reason":"unsigned"')));
  },
);

test("a status signed by another machine's key, or altered after signing, is not believed", T, () => {
  const { d } = directory();
  d.update('M1', online('M1', 'T1', 'Q1'));
  // M2's key signing an offline status for M1: its key id is not one of M1's.
  const m2 = signerOf('M2');
  const foreign = JSON.parse(offline(m2).toString()) as { machineSig: unknown };
  d.update('M1', Buffer.from(JSON.stringify({ online: false, machineSig: foreign.machineSig })));
  assert.equal(d.statusRefused['unknown-key'], 1);
  // M1's own signature over "accepts", presented with "does not accept".
  const altered = JSON.parse(online('M1', 'T1', 'Q1', true).toString()) as Record<string, unknown>;
  d.update('M1', Buffer.from(JSON.stringify({ ...altered, acceptsRelayedStart: false })));
  assert.equal(d.statusRefused['bad-signature'], 1);
  const found = d.find('T1', undefined);
  assert.ok(found.kind === 'found' && found.machine.online && found.machine.acceptsRelayedStart);
});

test(
  'an older signed status replayed is stale: neither a past ' +
    "goodbye nor a past connection's will marks the machine offline",
  T,
  () => {
    const { d } = directory();
    const agent = signerOf('M1', true);
    const goodbye = offline(agent); // seq 1
    const oldWill = Buffer.from(JSON.stringify({ online: false, machineSig: agent.will(Date.now()) })); // connection 1
    agent.nextConnection(); // the machine reconnected
    d.update('M1', online('M1', 'T1', 'Q1', true, agent));
    d.update('M1', goodbye);
    d.update('M1', oldWill);
    assert.equal(d.statusRefused.stale, 2);
    const found = d.find('T1', undefined);
    assert.ok(found.kind === 'found' && found.machine.online);
    // The machine's own newer goodbye is believed.
    d.update('M1', offline(agent));
    const gone = d.find('T1', undefined);
    assert.ok(gone.kind === 'found' && !gone.machine.online);
  },
);

test('a signed status past its window is no longer believed: the machine is offline until it signs again', T, () => {
  let now = Date.now();
  const { d } = directory(
    10,
    () => REGISTRY,
    () => now,
  );
  d.update('M1', online('M1', 'T1', 'Q1', true, signerOf('M1', true), now));
  assert.ok(d.find('T1', undefined).kind === 'found');
  now += STATUS_LIFETIME_MS + 31_000;
  const stale = d.find('T1', undefined);
  assert.ok(stale.kind === 'found' && !stale.machine.online);
  assert.equal(d.onlineCount, 0);
  d.update('M1', online('M1', 'T1', 'Q1', true, signerOf('M1'), now));
  const back = d.find('T1', undefined);
  assert.ok(back.kind === 'found' && back.machine.online);
});

test(
  'a machine the registry gives no key cannot be believed: found keyless, its signed status refused as no-machine-key',
  T,
  () => {
    const registry = registryOf([{ machineId: 'M1', terminalId: 'T1', uniQr: null }], ['M1']);
    const { d } = directory(10, () => registry);
    d.update('M1', online('M1', 'T1', null));
    assert.equal(d.statusRefused['no-machine-key'], 1);
    const found = d.find('T1', undefined);
    assert.ok(found.kind === 'found' && found.machine.keyless === true && !found.machine.online);
  },
);

test('rotation: a status signed by a key taken out of the registry is forgotten; the new key is believed', T, () => {
  let current = REGISTRY;
  const { d } = directory(10, () => current);
  d.update('M1', online('M1', 'T1', 'Q1', true, signerOf('M1', true)));
  const next = generateMachineKey();
  current = registryOf([{ machineId: 'M1', terminalId: 'T1', uniQr: 'Q1', machineKeys: [next.entry] }]);
  d.rejudge();
  const gone = d.find('T1', undefined);
  assert.ok(gone.kind === 'found' && !gone.machine.online);
  const rotated = new MachineSigner('M1', next.entry.id, createPrivateKey(next.privatePem));
  rotated.nextConnection();
  d.update('M1', online('M1', 'T1', 'Q1', true, rotated));
  const back = d.find('T1', undefined);
  assert.ok(back.kind === 'found' && back.machine.online);
});

test(
  'a key id the new registry gives to another public key: the status its old key signed is forgotten at once',
  T,
  () => {
    let current = REGISTRY;
    const { d } = directory(10, () => current);
    d.update('M1', online('M1', 'T1', 'Q1', true, signerOf('M1', true)));
    const before = d.find('T1', undefined);
    assert.ok(before.kind === 'found' && before.machine.online);
    // The same id, another key (a registry made by hand: registry.ts now refuses such an id when it loads one).
    const other = generateMachineKey();
    const reused = { id: keyOf('M1').entry.id, publicKey: other.entry.publicKey };
    current = registryOf([{ machineId: 'M1', terminalId: 'T1', uniQr: 'Q1', machineKeys: [reused] }]);
    d.rejudge();
    const after = d.find('T1', undefined);
    assert.ok(after.kind === 'found' && !after.machine.online, 'the old key no longer speaks for M1');
  },
);
