/**
 * The Start fuzz cases (test/start/fuzz-cases.ts) sent through `qrvend relay` to a machine that
 * runs the real Start decisions over a fake payment side: never a crash, never a 5xx, every answer
 * valid against the Start response schema and free of the SecretToken, and the payment side reached
 * exactly when the request is a valid Start for this machine (the same oracle as the endpoint's
 * own fuzz). Loopback only, a bounded number of cases (QRVEND_FUZZ_RUNS / 50, 200..2,000).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { silentLogger } from '../../src/core/log.js';
import { StartResponseSchema, type StartRequest } from '../../src/gateway/protocol/start.js';
import { createRelayedStart, createStartCore, RelayVouchers } from '../../src/start/index.js';
import { startSimMachines } from '../../rigs/relay/machines.js';
import { fuzzCase, shouldAccept, type FuzzCase } from '../start/fuzz-cases.js';
import { INTEGRATOR, TERMINAL_ID, TOKEN, UNI_QR, rawClient, startConfig } from '../start/helpers.js';
import { createRelayRig, until } from './support/relay-rig.js';

const RUNS = Math.min(
  2_000,
  Math.max(200, Math.ceil((Number(process.env['QRVEND_FUZZ_RUNS'] ?? 2_000) || 2_000) / 50)),
);
const SEED = process.env['QRVEND_FUZZ_SEED'] === undefined ? 20261123 : Number(process.env['QRVEND_FUZZ_SEED']);
const MAX_BODY = 16_384;

function wire(c: FuzzCase): Buffer {
  const head = [
    `${c.method} ${c.path} HTTP/1.1`,
    'Host: 127.0.0.1',
    'Connection: close',
    ...Object.entries(c.headers).map(([k, v]) => `${k}: ${v}`),
  ];
  return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), c.body]);
}

test(`fuzz through the relay: ${RUNS} generated requests`, { timeout: 600_000 }, async (t) => {
  const seen = new Set<string>();
  let current: FuzzCase | null = null;
  let calls = 0;
  const core = createStartCore({
    start: startConfig({ maxBodyBytes: MAX_BODY, rateLimit: { perSecond: 10_000, burst: 10_000 } }),
    acceptedTerminalIds: [TERMINAL_ID],
    acceptedUniQr: [UNI_QR],
    secretToken: Buffer.from(TOKEN),
    hooks: {
      readerBusy: () => current?.busy ?? null,
      transactionSeen: (txId) => seen.has(txId),
      accept: async (request: StartRequest) => {
        calls += 1;
        if (current?.failAccept) throw new Error('fuzz: accept refused');
        seen.add(request.TransactionId);
      },
    },
    log: silentLogger(),
  });
  const rig = await createRelayRig({
    machines: [{ machineId: TERMINAL_ID, terminalId: TERMINAL_ID, uniQr: UNI_QR }],
    token: TOKEN,
    integratorName: INTEGRATOR,
  });
  const relayed = createRelayedStart({ core, vouchers: new RelayVouchers(rig.kit.machineKeyring, TERMINAL_ID) });
  const sims = await startSimMachines({
    url: rig.broker.url,
    protocolVersion: rig.protocolVersion,
    signer: rig.kit.machineSigner,
    machines: [{ machineId: TERMINAL_ID, terminalId: TERMINAL_ID, uniQr: UNI_QR }],
    answer: (_m, args) => relayed.start(args),
    confirm: (_m, args) => relayed.confirm(args),
  });
  const stats: Record<string, number> = {};
  try {
    const relay = await rig.startRelay({ maxBodyBytes: MAX_BODY, rateLimit: { perSecond: 10_000, burst: 10_000 } });
    await until(() => relay.link.stats().online === 1, 10_000, 'the machine online');
    await fc.assert(
      fc.asyncProperty(fuzzCase, async (c) => {
        current = c;
        const expect = c.headers['expect'];
        const expectRefused = expect !== undefined && !/(?:^|\W)100-continue(?:$|\W)/i.test(expect);
        const expectAccept = !expectRefused && shouldAccept(c, seen, MAX_BODY);
        const before = calls;
        const { socket, response } = rawClient({ port: relay.port } as never);
        socket.write(wire(c));
        const reply = await response;
        socket.destroy();
        assert.ok(reply, 'the relay closed without an answer');
        assert.ok(reply.status < 500, `HTTP ${reply.status}`);
        assert.ok(
          StartResponseSchema.safeParse(JSON.parse(reply.body)).success,
          `not a Start answer: ${reply.body.slice(0, 200)}`,
        );
        assert.ok(!reply.body.includes(TOKEN));
        stats[String(reply.status)] = (stats[String(reply.status)] ?? 0) + 1;
        if (!/[\r\n\0]/.test(Object.values(c.headers).join('') + c.path)) {
          assert.equal(
            calls - before,
            expectAccept ? 1 : 0,
            `accept called ${calls - before} times; answer ${reply.status} ${reply.body.slice(0, 160)}`,
          );
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    assert.ok(!rig.logs.join('').includes(TOKEN), 'a relay log line contains the SecretToken');
    t.diagnostic(
      `${RUNS} cases through the relay; answers by HTTP status ${JSON.stringify(stats)}` +
        `; relay outcomes ${JSON.stringify(relay.stats().server.byOutcome)}`,
    );
  } finally {
    relayed.dropAll('test over');
    await sims.close();
    await rig.close();
  }
});
