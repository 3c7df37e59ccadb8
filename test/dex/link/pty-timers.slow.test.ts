/**
 * The DEX link's timers over a real pty pair (test/dex/link/support.ts), in the slow tier
 * (`npm run test:slow`, docs/testing.md): each test waits seconds on a protocol timer (DDCMP's
 * 15 s read timeout, a VMC answering late within timer A, three DEX/UCS rounds before DDCMP is
 * tried, a read held open by a slow VMC while another is refused). The timers' logic has its
 * unit tests (session.test.ts); the rest of the link over a pty is pty.test.ts.
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
  test(`${protocol}: a slow VMC (late, within the timers) is read whole`, T, async () => {
    const rig = await dexRig({ protocol, behaviour: 'slow', files: [auditFile('S', 3)] });
    try {
      assert.deepEqual((await rig.link.read()).bytes, auditFile('S', 3));
    } finally {
      await rig.close();
    }
  });

  test(
    `${protocol}: a VMC that stall-mid-block ends the read with DEX_TIMEOUT, and the port is released`,
    T,
    async () => {
      const rig = await dexRig({ protocol, behaviour: 'stall-mid-block' });
      try {
        await assert.rejects(
          rig.link.read(),
          (err: unknown) => isQrvendError(err, 'DEX_TIMEOUT') && typeof err.hint === 'string',
        );
        assert.equal(rig.sim.served, 0);
        // Released: another opener (a second link, as `qrvend dex read` would be) can take the port.
        const { openDexPort } = await import('../../../src/dex/link/port.js');
        const port = await openDexPort(rig.pty.agentPath, 9600);
        await port.close();
      } finally {
        await rig.close();
      }
    },
  );
}

test(
  'auto: a DDCMP VMC is found after DEX/UCS gets no answer, remembered, and asked in DDCMP first next time',
  T,
  async () => {
    const rig = await dexRig({ protocol: 'ddcmp', linkProtocol: 'auto' });
    try {
      const one = await rig.link.read();
      assert.equal(one.protocol, 'ddcmp');
      assert.deepEqual(one.bytes, auditFile('A'));
      assert.equal(JSON.parse(readFileSync(rig.factsPath, 'utf8')).protocol, 'ddcmp');
      const two = await rig.link.read();
      assert.equal(two.protocol, 'ddcmp');
      // Asked in DDCMP first: no DEX/UCS ENQ rounds (three timer A periods) before it. The
      // simulator counts a read once its last EOT has left, which may be after the link has it.
      await until(() => rig.sim.served === 2, 10_000, 'the simulator to count its second read');
      assert.equal(rig.sim.served, 2);
    } finally {
      await rig.close();
    }
  },
);

test('a second read while one runs is refused with DEX_BUSY, and the first one ends whole', T, async () => {
  const rig = await dexRig({ protocol: 'dex-ucs', behaviour: 'slow', files: [auditFile('B', 3)] });
  try {
    const first = rig.link.read();
    await assert.rejects(rig.link.read(), (err: unknown) => isQrvendError(err, 'DEX_BUSY'));
    assert.deepEqual((await first).bytes, auditFile('B', 3));
  } finally {
    await rig.close();
  }
});

test(
  'while a read runs, another opener of the port (as a second process would be) is refused with DEX_PORT',
  T,
  async () => {
    const rig = await dexRig({ protocol: 'dex-ucs', behaviour: 'slow', files: [auditFile('L', 3)] });
    try {
      const first = rig.link.read();
      const { openDexPort } = await import('../../../src/dex/link/port.js');
      await assert.rejects(
        openDexPort(rig.pty.agentPath, 9600),
        (err: unknown) => isQrvendError(err, 'DEX_PORT') && /another process holds the port/.test(err.hint ?? ''),
      );
      await first;
    } finally {
      await rig.close();
    }
  },
);
