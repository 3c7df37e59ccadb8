/**
 * The link against the simulated VMC over a real pty pair, both protocols: whole reads, and
 * every failure ending with its own code. What waits on the protocols' timers for seconds (a slow
 * or stalling VMC, DDCMP found after three DEX/UCS rounds, a read held open while another is
 * refused) is in the slow tier: pty-timers.slow.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { isQrvendError } from '../../../src/core/errors.js';
import { until } from '../../../src/sim/wait.js';
import { auditFile, dexRig } from './support.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

for (const protocol of ['dex-ucs', 'ddcmp'] as const) {
  test(
    `${protocol}: a read returns the file byte for byte, and the next read of a resetting VMC the next file`,
    T,
    async () => {
      const files = [auditFile('FIRST'), auditFile('SECOND', 30)];
      const rig = await dexRig({ protocol, files });
      try {
        const one = await rig.link.read();
        assert.equal(one.protocol, protocol);
        assert.deepEqual(one.bytes, files[0]);
        assert.ok(one.durationMs >= 0);
        const two = await rig.link.read();
        assert.deepEqual(two.bytes, files[1]);
        // The simulator counts a read once its last EOT has left, which may be after the link has it.
        await until(() => rig.sim.served === 2, 10_000, 'the simulator to count its second read');
        assert.equal(rig.sim.served, 2);
      } finally {
        await rig.close();
      }
    },
  );

  test(`${protocol}: one damaged block is asked again and the file arrives whole`, T, async () => {
    const rig = await dexRig({ protocol, behaviour: 'crc-once' });
    try {
      assert.deepEqual((await rig.link.read()).bytes, auditFile('A'));
    } finally {
      await rig.close();
    }
  });

  for (const [behaviour, code] of [
    ['crc-errors', 'DEX_CRC'],
    ['silent', 'DEX_NO_ANSWER'],
  ] as const) {
    test(`${protocol}: a VMC that ${behaviour} ends the read with ${code}, and the port is released`, T, async () => {
      const rig = await dexRig({ protocol, behaviour });
      try {
        await assert.rejects(
          rig.link.read(),
          (err: unknown) => isQrvendError(err, code) && typeof err.hint === 'string',
        );
        assert.equal(rig.sim.served, 0);
        // Released: another opener (a second link, as `qrvend dex read` would be) can take the port.
        const { openDexPort } = await import('../../../src/dex/link/port.js');
        const port = await openDexPort(rig.pty.agentPath, 9600);
        await port.close();
      } finally {
        await rig.close();
      }
    });
  }

  test(`${protocol}: a file larger than dex.maxFileBytes ends with DEX_TOO_LARGE`, T, async () => {
    const rig = await dexRig({ protocol, maxFileBytes: 1024, files: [auditFile('BIG', 60)] });
    try {
      await assert.rejects(rig.link.read(), (err: unknown) => isQrvendError(err, 'DEX_TOO_LARGE'));
    } finally {
      await rig.close();
    }
  });
}

test('dex-ucs: a VMC that leads the first handshake itself is read whole', T, async () => {
  const rig = await dexRig({ protocol: 'dex-ucs', behaviour: 'initiates' });
  try {
    assert.deepEqual((await rig.link.read()).bytes, auditFile('A'));
  } finally {
    await rig.close();
  }
});

test('dex-ucs: a VMC answering 04 (no data) from an ID ending in 00 is refusing, not a cable fault', T, async () => {
  const rig = await dexRig({ protocol: 'dex-ucs', behaviour: 'no-data' });
  try {
    const refused = /refused the audit read: response code "04" \(no data to transfer\)/;
    const isRefusal = (err: unknown) => isQrvendError(err, 'DEX_NO_ANSWER') && refused.test(err.message);
    await assert.rejects(rig.link.read(), isRefusal);
    assert.equal(rig.sim.served, 0);
  } finally {
    await rig.close();
  }
});

test('auto: a DEX/UCS VMC is read in DEX/UCS and remembered', T, async () => {
  const rig = await dexRig({ protocol: 'dex-ucs', linkProtocol: 'auto' });
  try {
    assert.equal((await rig.link.read()).protocol, 'dex-ucs');
    assert.equal(JSON.parse(readFileSync(rig.factsPath, 'utf8')).protocol, 'dex-ucs');
  } finally {
    await rig.close();
  }
});
