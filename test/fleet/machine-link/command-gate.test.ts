/**
 * The dispatch decisions of command-gate.ts (docs/decisions/fleet-trust.md item 1): who may
 * run which command, in which order the checks cost.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyringOf, rawPublicKey, type Keyring } from '../../../src/trust/keys.js';
import { MAX_NONCES, NonceBook } from '../../../src/trust/nonce-book.js';
import { signStatement } from '../../../src/trust/signed.js';
import { COMMAND_SCOPES, COMMAND_STATEMENT_KIND, commandStatement } from '../../../src/fleet/contract/scopes.js';
import { COMMAND_NAMES, type CommandName } from '../../../src/fleet/contract/topics.js';
import {
  admitNonce,
  decideCommand,
  type GateDecision,
  type GatePolicy,
} from '../../../src/fleet/machine-link/command-gate.js';
import { spenderOf } from '../../../src/fleet/machine-link/key-budgets.js';
import { signCommand, testKey } from '../support/operator-keys.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
const MACHINE = 'VM-1';
const ops = testKey('ops', ['read', 'operate']);
const cfg = testKey('cfg', ['configure']);
const keyring = keyringOf(
  { keys: [ops, cfg].map((k) => ({ id: k.keyId, publicKey: rawPublicKey(k.publicKey), scopes: k.scopes })) },
  null,
);
const policy: GatePolicy = { keyring, allowUnsignedReads: false };

function decide(
  name: CommandName,
  args: unknown,
  signature: unknown,
  over: Partial<GatePolicy> = {},
  clockUnsynced = false,
  verify = () => true,
): GateDecision {
  return decideCommand(
    { ...policy, ...over },
    { machineId: MACHINE, name, args, signature, nowMs: NOW, clockUnsynced },
    verify,
  );
}
const reason = (d: GateDecision) => (d.kind === 'refuse' ? d.reason : d.kind);

test("every command has a scope; start is the relayed-Start code's", T, () => {
  for (const name of COMMAND_NAMES) assert.ok(COMMAND_SCOPES[name] !== undefined, name);
  assert.deepEqual(
    Object.entries(COMMAND_SCOPES)
      .map(([n, s]) => `${n}:${s}`)
      .sort(),
    [
      'config.get:read',
      'config.set:configure',
      'dex.read:operate',
      'doctor:read',
      'outbox.list:read',
      'outbox.retry:operate',
      'ping:read',
      'reader.disable:operate',
      'reader.enable:operate',
      'service.restart:operate',
      'start.confirm:start',
      'start:start',
      'update.offer:update',
    ],
  );
  // Relayed Starts pass through untouched, signed or not: the relay vouches for them, not an operator.
  assert.equal(decide('start', {}, undefined).kind, 'relayed-start');
  assert.equal(decide('start', {}, undefined, { keyring: null }).kind, 'relayed-start');
  assert.equal(decide('start.confirm', {}, undefined).kind, 'relayed-start');
});

test(
  "the relay's voucher key (scope start) signs no operator command: whoever takes the relay cannot steer a machine",
  T,
  () => {
    const relay = testKey('relay-1', ['start']);
    const withRelay = keyringOf(
      { keys: [ops, cfg, relay].map((k) => ({ id: k.keyId, publicKey: rawPublicKey(k.publicKey), scopes: k.scopes })) },
      null,
    );
    const set = { set: { staticQr: { preauthAmount: 1 } } };
    for (const [name, args] of [
      ['config.set', set],
      ['service.restart', {}],
      ['reader.disable', {}],
      ['outbox.retry', {}],
      ['ping', {}],
    ] as Array<[CommandName, unknown]>) {
      assert.equal(
        reason(decide(name, args, signCommand(relay, MACHINE, name, args, NOW), { keyring: withRelay })),
        'scope',
        name,
      );
    }
  },
);

test("a command signed by a key with its scope, for this machine, runs on that key's budget for the scope", T, () => {
  const signature = signCommand(ops, MACHINE, 'reader.disable', {}, NOW);
  const d = decide('reader.disable', {}, signature);
  assert.equal(d.kind, 'run');
  assert.equal(d.kind === 'run' && d.budget, 'key');
  assert.equal(d.kind === 'run' && d.budget === 'key' && `${d.signer.id} ${d.signer.scope}`, 'ops operate');
  assert.equal(d.kind === 'run' && d.signature?.keyId, 'ops');
  const set = { set: { mdb: { sessionIdleTimeoutMs: 40_000 } } };
  assert.equal(decide('config.set', set, signCommand(cfg, MACHINE, 'config.set', set, NOW)).kind, 'run');
});

test(
  'each refusal names why: unsigned, no key, unknown key, scope, ' +
    'another machine, command or args, expired, not yet valid, clock',
  T,
  () => {
    const disable = signCommand(ops, MACHINE, 'reader.disable', {}, NOW);
    assert.equal(reason(decide('reader.disable', {}, undefined)), 'unsigned');
    assert.equal(reason(decide('reader.disable', {}, disable, { keyring: null })), 'no-keys');
    assert.equal(
      reason(decide('ping', {}, undefined, { keyring: null })),
      'no-keys',
      'with no key, even a read needs allowUnsignedReads',
    );
    assert.equal(reason(decide('reader.disable', {}, { ...disable, keyId: 'stranger' })), 'unknown-key');
    assert.equal(
      reason(decide('config.set', { set: {} }, signCommand(ops, MACHINE, 'config.set', { set: {} }, NOW))),
      'scope',
    );
    assert.equal(
      reason(decide('reader.disable', {}, signCommand(ops, 'VM-2', 'reader.disable', {}, NOW))),
      'bad-signature',
    );
    assert.equal(reason(decide('reader.enable', {}, disable)), 'bad-signature');
    assert.equal(
      reason(decide('outbox.retry', { id: 2 }, signCommand(ops, MACHINE, 'outbox.retry', { id: 1 }, NOW))),
      'bad-signature',
    );
    assert.equal(
      reason(decide('reader.disable', {}, signCommand(ops, MACHINE, 'reader.disable', {}, NOW - 120_000))),
      'expired',
    );
    assert.equal(
      reason(decide('reader.disable', {}, signCommand(ops, MACHINE, 'reader.disable', {}, NOW + 60_000))),
      'not-yet-valid',
    );
    assert.equal(reason(decide('reader.disable', {}, disable, {}, true)), 'clock-unsynced');
    assert.equal(reason(decide('ping', {}, signCommand(ops, MACHINE, 'ping', {}, NOW), {}, true)), 'clock-unsynced');
  },
);

test(
  'unsigned reads run only when the site allows them, on their own budget; nothing that changes anything does',
  T,
  () => {
    for (const name of ['ping', 'doctor', 'outbox.list', 'config.get'] as const) {
      assert.equal(reason(decide(name, {}, undefined)), 'unsigned');
      const d = decide(name, {}, undefined, { allowUnsignedReads: true, keyring: null });
      assert.equal(d.kind === 'run' && d.budget, 'unsigned', name);
    }
    for (const name of ['reader.disable', 'reader.enable', 'outbox.retry', 'service.restart', 'config.set'] as const) {
      assert.equal(reason(decide(name, {}, undefined, { allowUnsignedReads: true })), 'unsigned', name);
    }
  },
);

test(
  'cheap refusals first: an unsigned, unknown-key or stale flood never spends the Ed25519 budget; a spent budget drops',
  T,
  () => {
    let verifies = 0;
    const counting = () => ((verifies += 1), true);
    decide('reader.disable', {}, undefined, {}, false, counting);
    decide(
      'reader.disable',
      {},
      { ...signCommand(ops, MACHINE, 'reader.disable', {}, NOW), keyId: 'stranger' },
      {},
      false,
      counting,
    );
    decide('reader.disable', {}, signCommand(ops, MACHINE, 'reader.disable', {}, NOW - 600_000), {}, false, counting);
    decide('reader.disable', {}, signCommand(ops, MACHINE, 'reader.disable', {}, NOW), {}, true, counting);
    assert.equal(verifies, 0);
    decide('reader.disable', {}, signCommand(ops, 'VM-2', 'reader.disable', {}, NOW), {}, false, counting);
    assert.equal(verifies, 1, 'a forged signature under a real key costs one check');
    assert.equal(
      decide('reader.disable', {}, signCommand(ops, MACHINE, 'reader.disable', {}, NOW), {}, false, () => false).kind,
      'drop',
    );
  },
);

test('a nonce runs once, also after a restart; a book that cannot be written refuses', T, (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-gate-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'state', 'fleet-nonces.json');
  const signature = signCommand(ops, MACHINE, 'service.restart', {}, NOW);
  const signer = spenderOf(keyring, 'ops', 'operate')!;
  assert.deepEqual(admitNonce(new NonceBook(file, NOW), signature, NOW, signer), { ok: true });
  const again = admitNonce(new NonceBook(file, NOW + 1), signature, NOW + 1, signer);
  assert.equal(again.ok ? 'ok' : again.reason, 'replayed');
  const blocked = admitNonce(
    new NonceBook(join(dir, 'state', 'fleet-nonces.json', 'x'), NOW),
    signCommand(ops, MACHINE, 'ping', {}, NOW),
    NOW,
    signer,
  );
  assert.equal(blocked.ok, false);
  assert.match(blocked.ok ? '' : blocked.message, /cannot be written/);
});

test(
  'the signed bytes name the key id: a signature made for one id is refused under another entry of the same key',
  T,
  () => {
    const signature = signCommand(ops, MACHINE, 'reader.disable', {}, NOW);
    assert.equal(signature.format, 2);
    // Built by hand: keyringOf refuses one public key under two ids (this is the gate's own defence).
    const twice: Keyring = {
      source: null,
      byId: new Map([
        ['ops', keyring.byId.get('ops')!],
        ['ops-b', { ...keyring.byId.get('ops')!, id: 'ops-b' }],
      ]),
    };
    assert.equal(decide('reader.disable', {}, signature, { keyring: twice }).kind, 'run');
    assert.equal(
      reason(decide('reader.disable', {}, { ...signature, keyId: 'ops-b' }, { keyring: twice })),
      'bad-signature',
    );
  },
);

test(
  'a command in signature format 1 (an older signer) is refused naming why, before any signature arithmetic',
  T,
  () => {
    const old = signStatement(COMMAND_STATEMENT_KIND, commandStatement(MACHINE, 'reader.disable', {}), {
      keyId: 'ops',
      key: ops.key,
      nowMs: NOW,
      format: 1,
    });
    let verified = 0;
    const d = decide('reader.disable', {}, old, {}, false, () => ((verified += 1), true));
    assert.equal(reason(d), 'old-format');
    assert.match(d.kind === 'refuse' ? d.message : '', /format 1.*do not name the key.*sign the command again/);
    assert.equal(d.kind === 'refuse' && d.keyId, 'ops', 'counted under the key it names');
    assert.equal(verified, 0);
  },
);

test(
  'nonces are kept per public key and per share: a full share refuses its key only, a renamed key is the same key',
  T,
  (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-gate-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const book = new NonceBook(join(dir, 'fleet-nonces.json'), NOW);
    const reads = spenderOf(keyring, 'ops', 'read')!;
    const operate = spenderOf(keyring, 'ops', 'operate')!;
    const configure = spenderOf(keyring, 'cfg', 'configure')!;
    // Two keys: half the book each; ops's reads leave a quarter of its half to its operate commands.
    assert.equal(operate.nonceShare, MAX_NONCES / 2);
    assert.equal(reads.nonceShare, MAX_NONCES / 2 - MAX_NONCES / 8);
    let i = 0;
    const admit = (signer: typeof reads) =>
      admitNonce(
        book,
        { ...signCommand(ops, MACHINE, 'ping', {}, NOW), nonce: `nonce-${String((i += 1)).padStart(20, '0')}` },
        NOW,
        signer,
      );
    while (admit(reads).ok);
    assert.equal(i - 1, reads.nonceShare, 'reads stop at their part of the share');
    assert.equal(admit(operate).ok, true, 'the reserve is left to operate');
    assert.equal(admit(configure).ok, true, 'another key is untouched');
    // The same signature under a second id of the same key: its fingerprint, so the same record.
    const signature = signCommand(ops, MACHINE, 'reader.disable', {}, NOW);
    assert.equal(admitNonce(book, signature, NOW, operate).ok, true);
    const renamed = spenderOf(
      { source: null, byId: new Map([['ops-b', { ...keyring.byId.get('ops')!, id: 'ops-b' }]]) },
      'ops-b',
      'operate',
    )!;
    const replay = admitNonce(book, { ...signature, keyId: 'ops-b' }, NOW, renamed);
    assert.equal(replay.ok ? 'ok' : replay.reason, 'replayed');
  },
);
