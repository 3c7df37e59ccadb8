/**
 * docs/decisions/fleet-trust.md item 12: `qrvend fleet status|watch|cmd --json` print what devices sent. A device's
 * text may carry U+009B (a one-byte CSI: the terminal reads what follows as a control sequence)
 * or U+202E (shows the rest reversed). The JSON output escapes them (`\u009b`) and stays valid
 * JSON that parses back to exactly what the device sent. Real broker, simulated machine, the
 * real `qrvend` executable.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker } from '../../../rigs/broker/index.js';
import { SimulatedMachine } from '../../../rigs/fleet/machine.js';
import { until } from '../../../src/sim/wait.js';
import { runCli, startCli } from './run-cli.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

/** A CSI that would turn the terminal's text red, then a right-to-left override. */
const HOSTILE = 'v1\u009b31m\u202etxt';
const RAW = /[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/;

test(
  'fleet status, watch and cmd --json escape C1 and bidi controls and stay valid JSON',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    const broker = await startTestBroker();
    t.after(() => broker.close());
    const machine = await SimulatedMachine.connect({
      url: broker.url,
      machineId: 'vm-0100',
      protocol: broker.protocolVersions.includes(5) ? 5 : 4,
      handlers: { 'config.get': () => ({ ok: true, result: { value: HOSTILE } }) },
    });
    t.after(() => machine.client.endAsync(true).catch(() => undefined));
    await machine.publishStatus({ version: HOSTILE });
    const url = ['--url', broker.url];

    const status = await runCli(['fleet', 'status', '--json', ...url]);
    assert.equal(status.code, 0, status.stderr);
    assert.doesNotMatch(status.stdout, RAW);
    assert.match(status.stdout, /"version":"v1\\u009b31m\\u202etxt"/);
    const parsed = JSON.parse(status.stdout) as { machines: { status: { version: string } }[] };
    assert.equal(parsed.machines[0]?.status.version, HOSTILE);

    const watch = startCli(['fleet', 'watch', '--json', '--count', '1', '--no-presence', ...url]);
    try {
      await until(() => watch.err().includes('watching'), 30_000, 'fleet watch --json to subscribe');
      await machine.alarm('GATEWAY_UNREACHABLE', 'raised', HOSTILE);
      assert.equal(await watch.exited, 0, watch.err());
    } finally {
      watch.child.kill();
    }
    assert.doesNotMatch(watch.out(), RAW);
    const record = JSON.parse(watch.out()) as { event: { detail: string } };
    assert.equal(record.event.detail, HOSTILE);

    const cmd = await runCli(['fleet', 'cmd', 'vm-0100', 'config.get', '{"key":"machine.name"}', '--json', ...url]);
    assert.equal(cmd.code, 0, cmd.stderr);
    assert.doesNotMatch(cmd.stdout, RAW);
    assert.deepEqual((JSON.parse(cmd.stdout) as { result: unknown }).result, { value: HOSTILE });
  },
);
