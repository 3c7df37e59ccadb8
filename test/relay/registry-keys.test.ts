/**
 * The machines' keys in the operator's registry (src/relay/registry.ts, docs/relay.md "What the relay
 * believes"): signed with the rest, one key for one machine only, a registry without them still
 * loaded (those machines counted and refused at Start time).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  generateSigningKey,
  keyringOf,
  loadPrivateKey,
  MAX_DOCUMENT_LIFETIME_MS,
  signStatement,
} from '../../src/trust/index.js';
import { generateMachineKey } from '../../src/trust/machine-key.js';
import { loadRegistry, REGISTRY_KIND, RegistryError, signRegistry } from '../../src/relay/registry.js';
import { randomBytes } from 'node:crypto';
import { startSimMachines } from '../../rigs/relay/machines.js';
import { createRelayRig, postStart, until } from './support/relay-rig.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

test(
  'machineKeys are signed with the registry; a key given to two ' +
    'machines, or one id twice, is refused; no key is counted',
  T,
  (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-registry-keys-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const operator = generateSigningKey();
    writeFileSync(join(dir, 'op.pem'), operator.privatePem, { mode: 0o600 });
    const sign = { keyId: 'ops', key: loadPrivateKey(join(dir, 'op.pem')), nowMs: Date.now(), lifetimeMs: 3600_000 };
    const keyring = keyringOf({ keys: [{ id: 'ops', publicKey: operator.publicKey, scopes: ['registry'] }] }, null);
    const a = generateMachineKey();
    const b = generateMachineKey();
    const machines = [
      { machineId: 'M1', terminalId: 'T1', uniQr: null, machineKeys: [a.entry, b.entry] }, // rotating: old and new
      { machineId: 'M2', terminalId: 'T2', uniQr: null },
    ];
    const file = join(dir, 'registry.json');
    writeFileSync(file, JSON.stringify(signRegistry({ machines }, sign)));
    const registry = loadRegistry(file, keyring, Date.now());
    assert.equal(registry.withoutKey, 1);
    assert.deepEqual([...registry.keysOf('M1')!.byId.keys()], [a.entry.id, b.entry.id]);
    assert.equal(registry.keysOf('M2'), null);
    // A key moved onto another machine after signing: the signature no longer holds.
    const signed = JSON.parse(JSON.stringify(signRegistry({ machines }, sign)));
    signed.machines[1].machineKeys = [b.entry];
    writeFileSync(file, JSON.stringify(signed));
    assert.throws(() => loadRegistry(file, keyring, Date.now()), /signature is not accepted/);
    assert.throws(
      () => signRegistry({ machines: [machines[0], { ...machines[1], machineKeys: [b.entry] }] }, sign),
      (err) => err instanceof RegistryError && /one machine key is listed for M1 and M2/.test(err.message),
    );
    assert.throws(
      () =>
        signRegistry({ machines: [{ ...machines[0], machineKeys: [a.entry, { ...b.entry, id: a.entry.id }] }] }, sign),
      /machine key id .* is listed twice for M1/,
    );
    assert.throws(
      () =>
        signRegistry(
          { machines: [{ ...machines[0], machineKeys: [a.entry, b.entry, generateMachineKey().entry] }] },
          sign,
        ),
      /machineKeys/,
    );
  },
);

test('a machine key id that is not derived from its key is refused, when signing and when loading', T, (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-registry-keys-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const operator = generateSigningKey();
  writeFileSync(join(dir, 'op.pem'), operator.privatePem, { mode: 0o600 });
  const sign = { keyId: 'ops', key: loadPrivateKey(join(dir, 'op.pem')), nowMs: Date.now(), lifetimeMs: 3600_000 };
  const keyring = keyringOf({ keys: [{ id: 'ops', publicKey: operator.publicKey, scopes: ['registry'] }] }, null);
  const a = generateMachineKey();
  const named = (id: string) => [{ machineId: 'M1', terminalId: 'T1', uniQr: null, machineKeys: [{ ...a.entry, id }] }];
  assert.throws(
    () => signRegistry({ machines: named('m-chosen-by-hand') }, sign),
    (err) =>
      err instanceof RegistryError &&
      err.message.includes(`the machine key id m-chosen-by-hand of M1 is not its key's (${a.entry.id})`),
  );
  // Signed by a signer that did not check (an older qrvend, a script): the relay refuses it all the same.
  const file = join(dir, 'registry.json');
  const machines = named('m-chosen-by-hand');
  const signature = signStatement(REGISTRY_KIND, { machines }, { ...sign, maxLifetimeMs: MAX_DOCUMENT_LIFETIME_MS });
  writeFileSync(file, JSON.stringify({ machines, signature }));
  assert.throws(() => loadRegistry(file, keyring, Date.now()), /m-chosen-by-hand of M1 is not its key's/);
  writeFileSync(file, JSON.stringify(signRegistry({ machines: named(a.entry.id) }, sign)));
  assert.equal(loadRegistry(file, keyring, Date.now()).keysOf('M1')?.byId.has(a.entry.id), true);
});

test(
  'a machine the registry lists without a key gets no Start: ' +
    'Declined 30 (no-machine-key), though it signs and is online',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    const machines = [
      { machineId: 'KEYLESS', terminalId: 'TERM-KL', uniQr: null },
      { machineId: 'KEYED', terminalId: 'TERM-KD', uniQr: null },
    ];
    const rig = await createRelayRig({ machines });
    t.after(() => rig.close());
    rig.kit.writeRegistry(machines, { keyless: ['KEYLESS'] });
    const answered: string[] = [];
    const sims = await startSimMachines({
      url: rig.broker.url,
      protocolVersion: rig.protocolVersion,
      signer: rig.kit.machineSigner,
      machines,
      answer: async (m, args) => {
        answered.push(m);
        const { TransactionId } = JSON.parse((args as { body: string }).body) as { TransactionId: string };
        return {
          ok: true,
          result: {
            httpStatus: 200,
            contentType: 'application/json; charset=utf-8',
            body: JSON.stringify({ Status: { Verdict: 'Approved' }, TransactionId }),
          },
        };
      },
    });
    t.after(() => sims.close());
    const relay = await rig.startRelay();
    await until(
      () => relay.link.stats().statusRefused['no-machine-key'] === 1 && relay.link.stats().online === 1,
      10_000,
      'the keyed machine believed, the keyless refused',
    );
    const start = (terminalId: string) =>
      postStart(
        relay.origin,
        JSON.stringify({
          AppUserId: 'u',
          SecretToken: rig.kit.token,
          TransactionId: randomBytes(16).toString('hex'),
          TerminalId: terminalId,
        }),
      );
    const keyless = await start('TERM-KL');
    assert.equal(keyless.json.Status.Code, 30);
    assert.equal(relay.stats().server.byOutcome['no-machine-key'], 1);
    assert.equal((await start('TERM-KD')).json.Status.Verdict, 'Approved');
    assert.deepEqual(answered, ['KEYED'], 'nothing was sent to the keyless machine');
    assert.equal(relay.registry.state().withoutKey, 1);
    assert.ok(rig.logs.some((l) => l.includes('"relay.registry.keyless"')));
  },
);
