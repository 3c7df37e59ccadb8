/**
 * docs/decisions/fleet-trust.md item 6: which machine owns a TerminalId or UniQR is the operator's word (a registry
 * signed with a key of scope `registry`), never a machine's own claim. Through the real relay and
 * a real broker (aedes; mosquitto under `npm run fleet-test`): a second machine of the fleet
 * publishes, on its own status topic, the victim's TerminalId and UniQR. Before: the relay's map
 * moved to it and Starts for the victim (by TerminalId, by UniQR, by both) were answered by the
 * impostor, which received the bodies. Now they reach the victim only, and the claim is raised.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startSimMachines } from '../../rigs/relay/machines.js';
import { generateSigningKey } from '../../src/trust/index.js';
import { createRelayRig, getJson, postStart, until } from './support/relay-rig.js';
import { CHILD_DEADLINE_MS, TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const MAIN_JS = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
let seq = 0;
const txId = () => `registry-t-${process.pid}-${++seq}`;

function approvedBy(machineId: string) {
  return async (_m: string, args: unknown) => {
    const tx = JSON.parse((args as { body: string }).body).TransactionId as string;
    return {
      ok: true as const,
      result: {
        httpStatus: 200,
        contentType: 'application/json; charset=utf-8',
        body: JSON.stringify({ Status: { Verdict: 'Approved', StatusMessage: machineId }, TransactionId: tx }),
      },
    };
  };
}

test("an impostor claiming the victim's TerminalId and UniQR gets none of its Starts, and is raised", T, async () => {
  const rig = await createRelayRig({
    machines: [
      { machineId: 'VICTIM', terminalId: 'TERM-VICTIM', uniQr: 'QR-VICTIM' },
      { machineId: 'IMPOSTOR', terminalId: 'TERM-IMPOSTOR', uniQr: 'QR-IMPOSTOR' },
    ],
  });
  const victim = await startSimMachines({
    url: rig.broker.url,
    protocolVersion: rig.protocolVersion,
    signer: rig.kit.machineSigner,
    machines: [{ machineId: 'VICTIM', terminalId: 'TERM-VICTIM', uniQr: 'QR-VICTIM' }],
    answer: approvedBy('VICTIM'),
  });
  const relay = await rig.startRelay();
  // The impostor comes after the victim: its retained status is the latest claim of those identifiers.
  await until(() => relay.link.stats().online === 1, 10_000, 'the victim online');
  const impostor = await startSimMachines({
    url: rig.broker.url,
    protocolVersion: rig.protocolVersion,
    signer: rig.kit.machineSigner,
    machines: [{ machineId: 'IMPOSTOR', terminalId: 'TERM-VICTIM', uniQr: 'QR-VICTIM' }],
    answer: approvedBy('IMPOSTOR'),
  });
  try {
    await until(() => relay.link.stats().online === 2, 10_000, 'the impostor online');
    const starts = [
      { TerminalId: 'TERM-VICTIM' },
      { UniQR: 'QR-VICTIM' },
      { TerminalId: 'TERM-VICTIM', UniQR: 'QR-VICTIM' },
    ];
    for (const ids of starts) {
      const reply = await postStart(
        relay.origin,
        JSON.stringify({ AppUserId: 'u', SecretToken: rig.kit.token, TransactionId: txId(), ...ids }),
      );
      assert.equal(reply.json.Status.Verdict, 'Approved', JSON.stringify(ids));
      assert.equal(reply.json.Status.StatusMessage, 'VICTIM', `answered by the victim: ${JSON.stringify(ids)}`);
    }
    assert.equal(victim.received.get('VICTIM'), 3);
    assert.equal(impostor.received.get('IMPOSTOR') ?? 0, 0, 'the impostor received no Start');
    // Raised for the operator: a warn line, the counter and the machine on /healthz.
    const health = await getJson(relay.origin, '/healthz');
    assert.equal((health.json.claims as { impostor: number }).impostor, 1);
    // Which machine, in the `relay stats` line (not on /healthz, which may be reachable from outside).
    assert.match(relay.stats().claims.impostors['IMPOSTOR'] ?? '', /TerminalId of VICTIM, UniQR of VICTIM/);
    assert.ok(
      rig.logs.some((l) => l.includes('"relay.impostor"') && l.includes('"level":"warn"') && l.includes('IMPOSTOR')),
    );
    // Its own identifiers are not its to use either while it claims another's: the registry routes them to it.
    const own = await postStart(
      relay.origin,
      JSON.stringify({
        AppUserId: 'u',
        SecretToken: rig.kit.token,
        TransactionId: txId(),
        TerminalId: 'TERM-IMPOSTOR',
      }),
    );
    assert.equal(own.json.Status.StatusMessage, 'IMPOSTOR');
  } finally {
    await impostor.close();
    await victim.close();
    await rig.close();
  }
});

test(
  'a registry that changes on disk is re-read; one that fails its signature leaves the loaded one in force',
  T,
  async () => {
    const rig = await createRelayRig({ machines: [{ machineId: 'M-OLD', terminalId: 'TERM-X', uniQr: null }] });
    const sims = await startSimMachines({
      url: rig.broker.url,
      protocolVersion: rig.protocolVersion,
      signer: rig.kit.machineSigner,
      machines: [
        { machineId: 'M-OLD', terminalId: 'TERM-X', uniQr: null },
        { machineId: 'M-NEW', terminalId: 'TERM-X', uniQr: null },
      ],
      answer: async (m, args) => approvedBy(m)(m, args),
    });
    try {
      const relay = await rig.startRelay();
      await until(() => relay.link.stats().online === 2, 10_000, 'both machines online');
      const ask = async () =>
        (
          await postStart(
            relay.origin,
            JSON.stringify({ AppUserId: 'u', SecretToken: rig.kit.token, TransactionId: txId(), TerminalId: 'TERM-X' }),
          )
        ).json.Status.StatusMessage;
      assert.equal(await ask(), 'M-OLD');
      // The operator gives TERM-X to another machine and signs the registry again.
      rig.kit.writeRegistry([{ machineId: 'M-NEW', terminalId: 'TERM-X', uniQr: null }], { nowMs: Date.now() + 1_000 });
      await until(() => relay.registry.state().reloads === 1, 15_000, 'the registry to be re-read');
      assert.equal(await ask(), 'M-NEW');
      // A tampered file (a machine added after signing) is refused; the signed one stays in force.
      const file = rig.kit.relayConfig().registryFile;
      const tampered = JSON.parse(readFileSync(file, 'utf8'));
      tampered.machines.push({ machineId: 'M-OLD', terminalId: 'TERM-Y', uniQr: null });
      writeFileSync(file, JSON.stringify(tampered));
      await until(() => relay.registry.state().reloadFailures === 1, 15_000, 'the tampered registry refused');
      assert.match(relay.registry.state().lastError ?? '', /signature is not accepted/);
      assert.ok(rig.logs.some((l) => l.includes('registry of machines not re-read')));
      assert.equal(await ask(), 'M-NEW');
    } finally {
      await sims.close();
      await rig.close();
    }
  },
);

test(
  'qrvend relay registry sign signs what the relay accepts; qrvend relay ' +
    'exits 78 on a registry it cannot verify and re-reads it on SIGHUP',
  T,
  async () => {
    const rig = await createRelayRig({ machines: [] });
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-registry-cli-'));
    try {
      const { registryFile, trustFile, stateDir, voucherKey, integrators } = rig.kit.relayConfig();
      // An operator key of its own, trusted for the registry.
      const operator = generateSigningKey();
      const keyFile = join(dir, 'ops.pem');
      writeFileSync(keyFile, operator.privatePem, { mode: 0o600 });
      const trust = JSON.parse(readFileSync(trustFile, 'utf8'));
      trust.keys.push({ id: 'ops-cli', publicKey: operator.publicKey, scopes: ['registry'] });
      writeFileSync(trustFile, JSON.stringify(trust), { mode: 0o644 });
      const input = join(dir, 'registry.json');
      writeFileSync(input, JSON.stringify({ machines: [{ machineId: 'VM-1', terminalId: 'TERM-1', uniQr: 'QR-1' }] }));
      const signed = spawnSync(
        process.execPath,
        [
          MAIN_JS,
          'relay',
          'registry',
          'sign',
          '--key',
          keyFile,
          '--key-id',
          'ops-cli',
          '--days',
          '30',
          input,
          registryFile,
        ],
        { encoding: 'utf8', timeout: CHILD_DEADLINE_MS },
      );
      assert.equal(signed.status, 0, signed.stderr);
      assert.match(signed.stdout, /signed 1 machines with ops-cli/);
      const twice = join(dir, 'twice.json');
      writeFileSync(
        twice,
        JSON.stringify({
          machines: [
            { machineId: 'A', terminalId: 'T', uniQr: null },
            { machineId: 'B', terminalId: 'T', uniQr: null },
          ],
        }),
      );
      const refused = spawnSync(
        process.execPath,
        [MAIN_JS, 'relay', 'registry', 'sign', '--key', keyFile, '--key-id', 'ops-cli', twice, join(dir, 'out.json')],
        { encoding: 'utf8', timeout: CHILD_DEADLINE_MS },
      );
      assert.notEqual(refused.status, 0);
      assert.match(refused.stderr, /TerminalId "T" is given to A and B/);

      const configFile = join(dir, 'relay.json');
      const config = (registry: string) =>
        JSON.stringify({
          relay: {
            listen: '127.0.0.1:0',
            broker: { url: rig.broker.url, protocolVersion: rig.protocolVersion },
            registryFile: registry,
            trustFile,
            stateDir,
            voucherKey,
            integrators,
            logLevel: 'info',
          },
        });
      // Signed by a key the relay does not trust for the registry: exit 78, naming why.
      const stranger = join(dir, 'stranger.json');
      const strangerKey = join(dir, 'stranger.pem');
      writeFileSync(strangerKey, generateSigningKey().privatePem, { mode: 0o600 });
      assert.equal(
        spawnSync(
          process.execPath,
          [MAIN_JS, 'relay', 'registry', 'sign', '--key', strangerKey, '--key-id', 'nobody', input, stranger],
          { timeout: CHILD_DEADLINE_MS },
        ).status,
        0,
      );
      writeFileSync(configFile, config(stranger));
      const bad = spawnSync(process.execPath, [MAIN_JS, 'relay', '--config', configFile], {
        encoding: 'utf8',
        timeout: CHILD_DEADLINE_MS,
      });
      assert.equal(bad.status, 78);
      assert.match(bad.stderr, /registry cannot be used.*unknown-key/s);

      writeFileSync(configFile, config(registryFile));
      const child = spawn(process.execPath, [MAIN_JS, 'relay', '--config', configFile], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      try {
        await until(() => out.includes('Start relay listening'), 15_000, 'the relay to listen');
        child.kill('SIGHUP');
        await until(
          () => out.includes('registry of machines re-read') && out.includes('"why":"SIGHUP"'),
          15_000,
          'the registry re-read on SIGHUP',
        );
        assert.equal(child.exitCode, null, 'SIGHUP does not stop the relay');
      } finally {
        child.kill('SIGTERM');
        await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await rig.close();
    }
  },
);
