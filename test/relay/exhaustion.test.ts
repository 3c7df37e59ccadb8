/**
 * docs/decisions/fleet-trust.md item 10: fleet-wide exhaustion. Before: 36 sources, each under its own limit, sending
 * Starts for a silent machine filled the relay's in-flight slots (5 of 6 Starts for a healthy
 * machine got "too many Starts waiting"); rate limits were per full address, so one IPv6 /64 was
 * unlimited sources; behind a load balancer the connection guard counted the balancer's address
 * (one client at 19/s to a silent machine got 6 of 10 other wallets refused at connect). Now: a
 * per-machine in-flight cap, a breaker for a machine that does not answer, IPv6 keyed by /64, and
 * the per-source connection bound applied to the forwarded address. Loopback only, bounded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { startSimMachines, type SimMachines } from '../../rigs/relay/machines.js';
import type { RelayedStartOutcome } from '../../src/start/index.js';
import { sourceKey } from '../../src/relay/source.js';
import { createRelayRig, until, type RelayRig } from './support/relay-rig.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const MACHINES = [
  { machineId: 'SILENT', terminalId: 'TERM-SILENT', uniQr: null },
  { machineId: 'HEALTHY', terminalId: 'TERM-HEALTHY', uniQr: null },
];
let seq = 0;

interface Reply {
  status: number;
  code: number | undefined;
  verdict: string | undefined;
}

/** A Start from `forwardedFor` (the load balancer's X-Forwarded-For); a refused connection is status 0. */
function start(origin: string, token: string, terminalId: string, forwardedFor?: string): Promise<Reply> {
  const body = JSON.stringify({
    AppUserId: 'u',
    SecretToken: token,
    TerminalId: terminalId,
    TransactionId: `exhaust-${process.pid}-${++seq}`,
  });
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    };
    if (forwardedFor !== undefined) headers['x-forwarded-for'] = forwardedFor;
    const req = request(
      new URL('/payment/v2/transactions/Gateway/acme-wallet/start', origin),
      { method: 'POST', headers, timeout: 10_000, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try {
            const status = (
              JSON.parse(Buffer.concat(chunks).toString('utf8')) as { Status?: { Code?: number; Verdict?: string } }
            ).Status;
            resolve({ status: res.statusCode ?? 0, code: status?.Code, verdict: status?.Verdict });
          } catch {
            resolve({ status: res.statusCode ?? 0, code: undefined, verdict: undefined });
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, code: undefined, verdict: undefined }));
    req.end(body);
  });
}

async function fleet(rig: RelayRig): Promise<{ sims: SimMachines; release: () => void }> {
  let release: () => void = () => {};
  const silent = new Promise<RelayedStartOutcome>(
    (r) => (release = () => r({ ok: false, error: { code: 'TOO_LATE', message: 'test over' } })),
  );
  const sims = await startSimMachines({
    url: rig.broker.url,
    protocolVersion: rig.protocolVersion,
    signer: rig.kit.machineSigner,
    machines: MACHINES,
    answer: async (m, args) => {
      if (m === 'SILENT') return silent;
      const tx = JSON.parse((args as { body: string }).body).TransactionId as string;
      return {
        ok: true,
        result: {
          httpStatus: 200,
          contentType: 'application/json; charset=utf-8',
          body: JSON.stringify({ Status: { Verdict: 'Approved' }, TransactionId: tx }),
        },
      };
    },
  });
  return { sims, release };
}

test(
  'a flood aimed at one silent machine takes only its own slots: Starts for a healthy machine are served',
  T,
  async () => {
    const rig = await createRelayRig({ machines: MACHINES });
    const { sims, release } = await fleet(rig);
    try {
      const relay = await rig.startRelay({
        maxInFlight: 20,
        maxInFlightPerMachine: 4,
        breaker: { failures: 100, openMs: 60_000 },
      });
      await until(() => relay.link.stats().online === 2, 60_000, 'both machines online');
      // 30 Starts for the silent machine, from 30 sources: more than the relay's 20 slots.
      const flood = Array.from({ length: 30 }, (_, i) =>
        start(relay.origin, rig.kit.token, 'TERM-SILENT', `198.51.100.${i + 1}`),
      );
      await until(
        () => (relay.stats().server.byOutcome['machine-busy'] ?? 0) === 26,
        60_000,
        '26 Starts refused at the per-machine cap',
      );
      assert.equal(relay.link.stats().inFlight, 4, 'four wait for the silent machine, no more');
      // Six wallets in turn (one machine serves one Start at a time), all while the flood waits.
      const healthy: Reply[] = [];
      for (let i = 0; i < 6; i++)
        healthy.push(await start(relay.origin, rig.kit.token, 'TERM-HEALTHY', `203.0.113.${i + 1}`));
      assert.deepEqual(
        healthy.map((r) => r.verdict),
        Array(6).fill('Approved'),
        JSON.stringify(healthy),
      );
      const flooded = await Promise.all(flood);
      assert.ok(flooded.every((r) => r.code === 30));
      assert.equal(sims.received.get('SILENT'), 4, 'only the admitted four were published');
    } finally {
      release();
      await sims.close();
      await rig.close();
    }
  },
);

test(
  'a machine that leaves Starts unanswered trips its breaker: ' +
    'answered 30 at once, nothing published; others are served',
  T,
  async () => {
    const rig = await createRelayRig({ machines: MACHINES });
    const { sims, release } = await fleet(rig);
    try {
      const relay = await rig.startRelay({ breaker: { failures: 2, openMs: 60_000 } });
      await until(() => relay.link.stats().online === 2, 60_000, 'both machines online');
      for (let i = 0; i < 2; i++) assert.equal((await start(relay.origin, rig.kit.token, 'TERM-SILENT')).code, 30);
      assert.equal(relay.stats().server.byOutcome['timeout'], 2);
      const open = await start(relay.origin, rig.kit.token, 'TERM-SILENT');
      assert.equal(open.code, 30);
      assert.equal(relay.stats().server.byOutcome['breaker-open'], 1);
      assert.equal(sims.received.get('SILENT'), 2, 'the Start refused by the breaker was not published');
      assert.equal((await start(relay.origin, rig.kit.token, 'TERM-HEALTHY')).verdict, 'Approved');
      const health = (await (await fetch(`${relay.origin}/healthz`)).json()) as {
        breakers: { open: number; opened: number };
      };
      assert.deepEqual({ open: health.breakers.open, opened: health.breakers.opened }, { open: 1, opened: 1 });
    } finally {
      release();
      await sims.close();
      await rig.close();
    }
  },
);

test('IPv6 sources are one per /64', T, async () => {
  assert.equal(sourceKey('2001:db8:1:2::1'), '2001:db8:1:2::/64');
  assert.equal(sourceKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
  assert.equal(sourceKey('::1'), '0:0:0:0::/64');
  assert.equal(sourceKey('::ffff:198.51.100.7'), '198.51.100.7');
  assert.equal(sourceKey('198.51.100.7'), '198.51.100.7');
  const rig = await createRelayRig({ machines: MACHINES });
  try {
    // Behind a load balancer: the wallet's address is the forwarded one (a loopback test cannot own a /64).
    const relay = await rig.startRelay({ rateLimit: { perSecond: 1, burst: 1 }, trustForwardedFor: true });
    const nobody = (xff: string) => start(relay.origin, rig.kit.token, 'TERM-NOBODY', xff);
    assert.equal((await nobody('2001:db8:1:2::1')).status, 200);
    assert.equal(
      (await nobody('2001:db8:1:2:dead:beef:0:7')).status,
      429,
      'another address of the same /64 shares its bucket',
    );
    assert.equal((await nobody('2001:db8:1:3::1')).status, 200, 'another /64 has its own');
  } finally {
    await rig.close();
  }
});

test(
  'behind a load balancer the per-source connection bound counts the ' +
    'forwarded address: one client cannot crowd out the others',
  T,
  async () => {
    const rig = await createRelayRig({ machines: MACHINES });
    const { sims, release } = await fleet(rig);
    try {
      // Every connection comes from 127.0.0.1, as from a balancer.
      const relay = await rig.startRelay({
        trustForwardedFor: true,
        maxConnectionsPerSource: 4,
        maxConnections: 64,
        maxInFlightPerMachine: 100,
        breaker: { failures: 100, openMs: 60_000 },
      });
      await until(() => relay.link.stats().online === 2, 60_000, 'both machines online');
      const greedy = Array.from({ length: 4 }, () =>
        start(relay.origin, rig.kit.token, 'TERM-SILENT', '198.51.100.66'),
      );
      await until(() => relay.link.stats().inFlight === 4, 60_000, "the greedy client's four Starts waiting");
      const fifth = await start(relay.origin, rig.kit.token, 'TERM-SILENT', '198.51.100.66');
      assert.equal(fifth.status, 429, 'the greedy client is bounded by its own address');
      const others = await Promise.all(
        Array.from({ length: 10 }, (_, i) => start(relay.origin, rig.kit.token, 'TERM-HEALTHY', `203.0.113.${i + 10}`)),
      );
      assert.deepEqual(
        others.map((r) => r.verdict),
        Array(10).fill('Approved'),
        JSON.stringify(others),
      );
      await Promise.all(greedy);
    } finally {
      release();
      await sims.close();
      await rig.close();
    }
  },
);
