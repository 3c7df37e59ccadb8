/**
 * Fleet trust on the machine (docs/decisions/fleet-trust.md items 1, 2, 3 and 5) through the real daemon (`qrvend run`)
 * and a real MQTT broker (aedes in `npm test`, mosquitto in `npm run fleet-test`):
 * - 1: commands are signed by an operator key with the command's scope, for this machine, within
 *   their window, once; the machine refuses the rest with UNAUTHORIZED naming why, and every
 *   signed command while its clock is known to be unsynced; with no key nothing that changes
 *   anything runs; config.get shows no secret's path; `qrvend fleet keygen` and `fleet cmd` sign;
 * - 2: retained commands never run, even signed (three starts in a row, no exit 75);
 * - 3: config.set only sets the keys of the allowlist, the pre-authorization amount under the
 *   site's ceiling ((a)-(d) of the issue, each refused);
 * - 5: a flood of relayed Starts, or of unsigned and forged commands, leaves an operator's signed
 *   ping answered.
 *
 * One daemon for the file; tests run in order.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { randomUUID } from 'node:crypto';
import { connect, type MqttClient } from 'mqtt';
import { createRig, until, type Rig } from '../../../rigs/rig.js';
import { startTestBroker, type TestBroker } from '../../../rigs/broker/index.js';
import { machineTopics } from '../../../src/fleet/contract/topics.js';
import type { CommandReply } from '../../../src/fleet/contract/messages.js';
import { TEST_CLOCK_ENV } from '../../../src/core/clock.js';
import { PREFIX, protocolFor, startWatcher, type FleetWatcher } from './support/fleet-watcher.js';
import { signCommand, testKey, writeTrustFile } from '../support/operator-keys.js';
import { runCli } from '../operator/run-cli.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const MACHINE = 'M-TRUST-1';
const T = { timeout: TEST_DEADLINE_MS };
const ops = testKey('ops', ['read', 'operate']);
const cfg = testKey('cfg', ['configure']);
const reader = testKey('reader', ['read']);
/** Not in the machine's trust file. */
const stranger = testKey('stranger', ['read', 'operate', 'configure']);

let broker: TestBroker;
let rig: Rig;
let watcher: FleetWatcher;
let publisher: MqttClient;
let scratch: string;
let clockFile: string;
let cliKeyFile: string;
let cliKeyId: string;
const topics = machineTopics(PREFIX, MACHINE);

before(async () => {
  broker = await startTestBroker();
  scratch = mkdtempSync(join(tmpdir(), 'qrvend-trust-e2e-'));
  clockFile = join(scratch, 'clock-offset');
  writeFileSync(clockFile, '0');
  // A key made by the operator CLI, listed in the trust file like the others.
  cliKeyFile = join(scratch, 'cli-operator.pem');
  const keygen = await runCli(['fleet', 'keygen', '--out', cliKeyFile, '--id', 'cli-reader', '--scopes', 'read']);
  assert.equal(keygen.code, 0, keygen.stderr);
  const entry = JSON.parse(keygen.stdout) as { id: string; publicKey: string; scopes: string[] };
  cliKeyId = entry.id;
  const trustFile = writeTrustFile(scratch, [ops, cfg, reader]);
  const trust = JSON.parse(readFileSync(trustFile, 'utf8')) as { keys: unknown[] };
  writeFileSync(trustFile, JSON.stringify({ keys: [...trust.keys, entry] }), { mode: 0o644 });
  rig = await createRig({
    vmc: { vendPolicy: 'manual' },
    env: { [TEST_CLOCK_ENV]: clockFile },
    config: {
      fleet: {
        url: broker.url,
        topicPrefix: PREFIX,
        machineId: MACHINE,
        protocolVersion: protocolFor(broker),
        healthIntervalS: 5,
        trustFile,
      },
    },
  });
  watcher = await startWatcher(broker.url, protocolFor(broker), MACHINE, ops);
  publisher = connect(broker.url, {
    protocolVersion: protocolFor(broker),
    clientId: `flood-${randomUUID().slice(0, 8)}`,
    reconnectPeriod: 0,
  });
  await new Promise<void>((resolve, reject) => {
    publisher.once('connect', () => resolve());
    publisher.once('error', reject);
  });
  await rig.startAgent();
  await until(() => watcher.lastStatus()?.online === true, 10_000, 'the retained status online');
});

after(async () => {
  // Retained messages outlive the test otherwise (mosquitto keeps them in its own process).
  await publisher?.publishAsync(topics.command('service.restart'), '', { qos: 1, retain: true }).catch(() => undefined);
  await publisher?.publishAsync(topics.command('config.set'), '', { qos: 1, retain: true }).catch(() => undefined);
  await publisher?.endAsync(true);
  await watcher?.close();
  await rig?.close();
  await broker?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** Sends a request exactly as given (the signature made by the caller) and waits for its reply. */
function send(name: string, args: unknown, signature: unknown, timeoutMs = 10_000): Promise<CommandReply> {
  const correlationId = randomUUID();
  return watcher.commandRaw(
    name,
    JSON.stringify({ replyTo: topics.replies, correlationId, args, signature }),
    correlationId,
    timeoutMs,
  );
}

function refusedWith(reply: CommandReply, pattern: RegExp): void {
  assert.equal(reply.ok, false, JSON.stringify(reply));
  assert.equal(!reply.ok && reply.error.code, 'UNAUTHORIZED', JSON.stringify(reply));
  assert.match(!reply.ok ? reply.error.message : '', pattern);
}

const hostEnabled = () => rig.vmc.state().hostEnabled;

test(
  'item 1: unsigned, unknown key, wrong scope, another machine or command, stale: each refused naming why; nothing ran',
  T,
  async () => {
    refusedWith(await send('reader.disable', {}, undefined), /unsigned/);
    refusedWith(await send('ping', {}, undefined), /unsigned/);
    refusedWith(
      await send('reader.disable', {}, signCommand(stranger, MACHINE, 'reader.disable', {})),
      /the key stranger is not trusted/,
    );
    refusedWith(await send('reader.disable', {}, signCommand(reader, MACHINE, 'reader.disable', {})), /scope operate/);
    refusedWith(
      await send(
        'config.set',
        { set: { mdb: { sessionIdleTimeoutMs: 40_000 } } },
        signCommand(ops, MACHINE, 'config.set', { set: { mdb: { sessionIdleTimeoutMs: 40_000 } } }),
      ),
      /scope configure/,
    );
    refusedWith(
      await send('reader.disable', {}, signCommand(ops, 'M-TRUST-2', 'reader.disable', {})),
      /does not match/,
    );
    refusedWith(await send('reader.disable', {}, signCommand(ops, MACHINE, 'reader.enable', {})), /does not match/);
    refusedWith(
      await send('outbox.retry', { id: 2 }, signCommand(ops, MACHINE, 'outbox.retry', { id: 1 })),
      /does not match/,
    );
    refusedWith(
      await send('reader.disable', {}, signCommand(ops, MACHINE, 'reader.disable', {}, Date.now() - 5 * 60_000)),
      /expired/,
    );
    refusedWith(
      await send('reader.disable', {}, signCommand(ops, MACHINE, 'reader.disable', {}, Date.now() + 5 * 60_000)),
      /future/,
    );
    assert.equal(hostEnabled(), true, 'the reader was never disabled');
    assert.equal(existsSync(rig.overlayFile), false);
    assert.equal(rig.agent?.child.exitCode, null, 'still running');
  },
);

/** Run once in the test below; replayed after restarts later (valid 15 min, so only its nonce refuses it). */
let ranOnce: ReturnType<typeof signCommand>;

test('item 1: a signed command runs once; the same request again is a replay, refused', T, async () => {
  const signature = signCommand(ops, MACHINE, 'reader.disable', {}, Date.now(), 15 * 60_000);
  ranOnce = signature;
  const first = await send('reader.disable', {}, signature);
  assert.equal(first.ok, true, JSON.stringify(first));
  await until(() => !hostEnabled(), 10_000, 'the VMC to see the reader disabled');
  assert.equal((await watcher.command('reader.enable')).ok, true);
  await until(hostEnabled, 10_000, 'the reader enabled again');
  refusedWith(await send('reader.disable', {}, signature), /replay/);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(hostEnabled(), true, 'the replay did not disable the reader');
  const nonces = join(rig.dir, 'state', 'fleet-nonces.json');
  assert.ok(existsSync(nonces), 'the nonce book is beside the overlay');
  assert.equal(statSync(nonces).mode & 0o777, 0o600);
});

test(
  "item 1: config.get shows no secret's path (token, password, keys) and " +
    "no file path at all; doctor over the fleet shows no secret's path",
  T,
  async () => {
    const all = await watcher.command('config.get');
    assert.equal(all.ok, true);
    const text = JSON.stringify(all);
    for (const secret of ['secret-token', rig.dir]) assert.ok(!text.includes(secret), `config.get shows ${secret}`);
    const one = await watcher.command('config.get', { key: 'start.secretTokenFile' });
    assert.deepEqual(one.ok && one.result, { key: 'start.secretTokenFile', value: '(redacted)' });
    // doctor names the token file in its report; over the fleet the path is gone.
    const doctor = await watcher.command('doctor', {}, 20_000);
    assert.equal(doctor.ok, true);
    assert.ok(!JSON.stringify(doctor).includes(join(rig.dir, 'secret-token')), 'doctor shows the SecretToken file');
    assert.match(JSON.stringify(doctor), /secret-token/, 'the check itself is there');
  },
);

test(
  'item 1: qrvend fleet keygen writes the private key 0600 and ' +
    'prints only the public entry; fleet cmd --sign-key signs',
  T,
  async () => {
    assert.equal(statSync(cliKeyFile).mode & 0o777, 0o600);
    const again = await runCli(['fleet', 'keygen', '--out', cliKeyFile]);
    assert.notEqual(again.code, 0, 'an existing key is never overwritten');
    const url = ['--url', broker.url, '--prefix', PREFIX];
    const ping = await runCli([
      'fleet',
      'cmd',
      MACHINE,
      'ping',
      '--sign-key',
      cliKeyFile,
      '--key-id',
      cliKeyId,
      '--json',
      ...url,
    ]);
    assert.equal(ping.code, 0, ping.stderr + ping.stdout);
    assert.equal((JSON.parse(ping.stdout) as CommandReply).ok, true);
    const unsigned = await runCli(['fleet', 'cmd', MACHINE, 'ping', '--json', ...url]);
    assert.equal(unsigned.code, 1);
    assert.match(unsigned.stdout, /UNAUTHORIZED.*unsigned/);
    const scope = await runCli([
      'fleet',
      'cmd',
      MACHINE,
      'service.restart',
      '--sign-key',
      cliKeyFile,
      '--key-id',
      cliKeyId,
      '--json',
      ...url,
    ]);
    assert.equal(scope.code, 1);
    assert.match(scope.stdout, /UNAUTHORIZED.*scope operate/);
    const output = ping.stdout + ping.stderr + scope.stdout + scope.stderr;
    assert.ok(!output.includes('PRIVATE KEY'), 'key material in the output');
    assert.equal(rig.agent?.child.exitCode, null, 'still running');
  },
);

test(
  'item 3: config.set refuses every key the fleet may not set, (a)-(d) of the issue; the overlay is never written',
  T,
  async () => {
    const refused = async (set: Record<string, unknown>, paths: string[]) => {
      const args = { set };
      const reply = await send('config.set', args, signCommand(cfg, MACHINE, 'config.set', args));
      assert.equal(reply.ok, false, JSON.stringify(reply));
      assert.equal(!reply.ok && reply.error.code, 'BAD_ARGS', JSON.stringify(reply));
      for (const p of paths)
        assert.match(
          !reply.ok ? reply.error.message : '',
          new RegExp(`${p.replace(/\./g, '\\.')}: not settable from the fleet`),
          JSON.stringify(reply),
        );
    };
    const tokenFile = join(rig.dir, 'secret-token');
    // (a) the broker and its password file: the SecretToken would go to a foreign broker
    await refused({ fleet: { url: 'mqtt://127.0.0.1:1', username: 'x', passwordFile: tokenFile } }, [
      'fleet.url',
      'fleet.passwordFile',
      'fleet.username',
    ]);
    // (b) another gateway; the listen address, the log level, the decimals
    await refused({ gateway: { baseUrl: 'http://127.0.0.1:9' } }, ['gateway.baseUrl']);
    await refused({ start: { listen: '0.0.0.0:18555' } }, ['start.listen']);
    await refused({ log: { level: 'silent' } }, ['log.level']);
    await refused({ machine: { decimalPlaces: 0 } }, ['machine.decimalPlaces']);
    // (b) the pre-authorization amount above the site's own (10): refused; the site's ceiling holds
    const args = { set: { staticQr: { preauthAmount: 500 } } };
    const tooMuch = await send('config.set', args, signCommand(cfg, MACHINE, 'config.set', args));
    assert.match(!tooMuch.ok ? tooMuch.error.message : '', /staticQr\.preauthAmount: at most 10 from the fleet/);
    // (c) the PNG written over the ledger
    await refused({ display: { png: join(rig.dir, 'ledger.sqlite') } }, ['display.png']);
    // (d) the machine's identity
    await refused({ fleet: { machineId: 'M-TRUST-9' } }, ['fleet.machineId']);
    assert.equal(existsSync(rig.overlayFile), false, 'no overlay written');
    assert.equal(rig.agent?.child.exitCode, null, 'still running');
    // A sale still opens with the site's amount, at the site's gateway.
    const started = await rig.start();
    assert.equal(started.outcome.kind, 'approved', JSON.stringify(started.outcome));
  },
);

test(
  'config.set writes only keys the allowlist names as written: __proto__ and ' +
    'an item alias "012" refused, amounts finer than the currency refused',
  T,
  async () => {
    // Parsed from JSON so __proto__ is a member (as the device parses it), not an object literal's prototype.
    const attempts: Array<{ set: string; code: string; message: RegExp }> = [
      // The top level of `set` named __proto__: it was rebuilt into set's prototype, unseen by the name
      // check, and an empty overlay was written and the agent restarted (exit 75). Refused from the text.
      {
        set: '{"__proto__":{"mdb":{"sessionIdleTimeoutMs":30000}}}',
        code: 'BAD_ARGS',
        message: /^args\.set\.__proto__: a member named "__proto__" is refused/,
      },
      {
        set: '{"catalog":{"__proto__":{"name":"x"}}}',
        code: 'BAD_ARGS',
        // Read from the request's text, before any object is built (src/core/json-member-names.ts).
        message: /args\.set\.catalog\.__proto__: a member named "__proto__" is refused/,
      },
      {
        set: '{"display":{"colors":{"__proto__":{"text":"#000000"}}}}',
        code: 'BAD_ARGS',
        message: /args\.set\.display\.colors\.__proto__: a member named "__proto__" is refused/,
      },
      {
        set: '{"catalog":{"012":{"name":"Water"}}}',
        code: 'BAD_ARGS',
        message: /args\.set\.catalog\.012: .*write it 12/,
      },
      {
        set: '{"staticQr":{"preauthAmount":1e-9}}',
        code: 'CONFIG_INVALID',
        message: /staticQr\.preauthAmount: .*smallest unit of the currency/,
      },
      {
        set: '{"staticQr":{"preauthAmount":1.005}}',
        code: 'CONFIG_INVALID',
        message: /staticQr\.preauthAmount: .*more decimals than the currency's 2/,
      },
    ];
    for (const attempt of attempts) {
      const args = { set: JSON.parse(attempt.set) as Record<string, unknown> };
      const reply = await send('config.set', args, signCommand(cfg, MACHINE, 'config.set', args));
      assert.equal(!reply.ok && reply.error.code, attempt.code, `${attempt.set}: ${JSON.stringify(reply)}`);
      assert.match(!reply.ok ? reply.error.message : '', attempt.message, attempt.set);
    }
    assert.equal(existsSync(rig.overlayFile), false, 'no overlay written');
    assert.equal(rig.agent?.child.exitCode, null, 'still running');
  },
);

test(
  'item 5: a flood of relayed Starts, unsigned and forged commands leaves every signed operator ping answered',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    let flooding = true;
    let sent = 0;
    const forged = { ...signCommand(ops, MACHINE, 'ping', {}), sig: signCommand(stranger, MACHINE, 'ping', {}).sig };
    const flood = (async () => {
      while (flooding) {
        // ~150 messages a second: Starts (wrong token, as through the relay), unsigned and forged commands.
        for (let i = 0; i < 15; i++) {
          const startArgs = { integratorName: 'x', body: '{}', deadlineAt: Date.now() + 5000, client: `10.0.0.${i}` };
          publisher.publish(
            topics.command('start'),
            JSON.stringify({ correlationId: `flood-s-${sent}`, args: startArgs }),
            { qos: 0 },
          );
          if (i % 3 === 0)
            publisher.publish(topics.command('reader.disable'), JSON.stringify({ correlationId: `flood-u-${sent}` }), {
              qos: 0,
            });
          if (i % 3 === 1)
            publisher.publish(
              topics.command('ping'),
              JSON.stringify({ correlationId: `flood-f-${sent}`, signature: forged }),
              { qos: 0 },
            );
          sent += 1;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    try {
      await new Promise((r) => setTimeout(r, 1_000)); // the flood has drained every bucket it can reach
      for (let i = 0; i < 5; i++) {
        const ping = await watcher.command('ping', {}, 20_000);
        assert.equal(ping.ok, true, `ping ${i}: ${JSON.stringify(ping)}`);
        await new Promise((r) => setTimeout(r, 300));
      }
    } finally {
      flooding = false;
      await flood;
    }
    assert.ok(sent >= 100, `only ${sent} flood messages sent`);
    assert.equal(hostEnabled(), true, 'no unsigned reader.disable ran');
    await until(
      // The Starts carry no voucher of a trusted key: they spend the untrusted share, never the relay's.
      () => watcher.health.some((h) => (h.stats?.fleet?.droppedBy?.untrusted ?? 0) > 0),
      15_000,
      'health to count the dropped flood',
    );
  },
);

test(
  'item 2: a retained service.restart and a retained config.set, ' +
    'both signed, never run: three starts in a row, no exit 75',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    await rig.stopAgent('SIGTERM');
    const set = { set: { mdb: { sessionIdleTimeoutMs: 41_000 } } };
    const retained = async (name: 'service.restart' | 'config.set', args: unknown, key: typeof ops) => {
      const signature = signCommand(key, MACHINE, name, args, Date.now(), 15 * 60_000);
      await publisher.publishAsync(
        topics.command(name),
        JSON.stringify({ replyTo: topics.replies, correlationId: `retained-${name}`, args, signature }),
        { qos: 1, retain: true },
      );
    };
    await retained('service.restart', {}, ops);
    await retained('config.set', set, cfg);
    for (let start = 1; start <= 3; start++) {
      const agent = await rig.startAgent();
      await agent.waitForLog(
        (l) => l.event === 'fleet.command.retained',
        10_000,
        `start ${start}: the retained command seen and ignored`,
      );
      // Both retained messages arrive right after the subscription; give them the time a restart took (~1 s).
      await new Promise((r) => setTimeout(r, 1_500));
      assert.equal(agent.child.exitCode, null, `start ${start}: the agent exited (${agent.child.exitCode})`);
      assert.equal(existsSync(rig.overlayFile), false, `start ${start}: config.set wrote the overlay`);
      assert.ok(
        !watcher.replies.some((r) => r.correlationId?.startsWith('retained-')),
        'a retained command was answered',
      );
      const { code } = await rig.stopAgent('SIGTERM');
      assert.notEqual(code, 75, `start ${start}: exit 75 (a restart asked for)`);
    }
    await publisher.publishAsync(topics.command('service.restart'), '', { qos: 1, retain: true });
    await publisher.publishAsync(topics.command('config.set'), '', { qos: 1, retain: true });
    const mark = watcher.statuses.length;
    await rig.startAgent();
    await until(
      () => watcher.statuses.slice(mark).some((s) => s.online === true),
      10_000,
      'the device back on the broker',
    );
  },
);

test(
  'item 1: with no usable trust file nothing that changes anything runs, signed or not',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    await rig.stopAgent('SIGTERM');
    const site = JSON.parse(readFileSync(rig.configFile, 'utf8'));
    const trustFile = site.fleet.trustFile as string;
    site.fleet.trustFile = join(scratch, 'absent-trust.json');
    writeFileSync(rig.configFile, JSON.stringify(site));
    const mark = watcher.statuses.length;
    const agent = await rig.startAgent();
    await until(
      () => watcher.statuses.slice(mark).some((s) => s.online === true),
      10_000,
      'the device back on the broker',
    );
    const warned = await agent.waitForLog(
      (l) => l.event === 'fleet.trust.none',
      5_000,
      'the warning that no key is configured',
    );
    assert.equal(warned.level, 'warn');
    refusedWith(await watcher.command('reader.disable'), /no operator key is configured/);
    refusedWith(await watcher.command('service.restart'), /no operator key is configured/);
    assert.equal(agent.child.exitCode, null);
    assert.equal(hostEnabled(), true);
    await rig.stopAgent('SIGTERM');
    site.fleet.trustFile = trustFile;
    writeFileSync(rig.configFile, JSON.stringify(site));
    const again = watcher.statuses.length;
    await rig.startAgent();
    await until(
      () => watcher.statuses.slice(again).some((s) => s.online === true),
      10_000,
      'the device back on the broker',
    );
    // Five restarts later the nonce book still knows the reader.disable that ran.
    refusedWith(await send('reader.disable', {}, ranOnce), /replay/);
    assert.equal(hostEnabled(), true);
  },
);

test(
  'item 1: while the machine knows its clock is unsynced (CLOCK_UNSYNCED), signed commands are refused naming it',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    assert.equal((await watcher.command('ping')).ok, true, 'taken before the step');
    writeFileSync(clockFile, String(90_000)); // the wall clock jumps 90 s ahead
    await until(
      () => (watcher.lastStatus()?.alarms as string[] | undefined)?.includes('CLOCK_UNSYNCED') === true,
      20_000,
      'the CLOCK_UNSYNCED alarm in the status',
    );
    // Signed on the machine's (new) time, so the window alone would let it through.
    refusedWith(await send('ping', {}, signCommand(ops, MACHINE, 'ping', {}, Date.now() + 90_000)), /clock-unsynced/);
    refusedWith(
      await send('reader.disable', {}, signCommand(ops, MACHINE, 'reader.disable', {}, Date.now() + 90_000)),
      /clock-unsynced/,
    );
    assert.equal(hostEnabled(), true);
  },
);
