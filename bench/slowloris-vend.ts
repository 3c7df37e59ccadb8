/**
 * Vend approval while the Start endpoint is under a slow-header attack (docs/decisions/hardening.md item 1), judged
 * like every vend figure (docs/decisions/targets.md: p99 <= 1.0 x the floor's p99 of the same run). The
 * daemon's static QR session takes vends 5 ms apart while 64 connections from 127.0.0.2 trickle
 * request heads one byte every 200 ms (reconnecting when cut) and a wallet on 127.0.0.3 sends a
 * Start every 250 ms; the floor (pty-floor.ts) is measured in blocks alternating with the
 * daemon's during the attack. The context holds the wallet's answered share, the attack's
 * connection count, and the same vends' p50/p99 just before the attack.
 */
import { request } from 'node:http';
import { notMeasured, DAEMON_PENDING, type Figure } from './figure.js';
import { Budget } from './support/budget.js';
import { daemonBuilt } from './support/daemon.js';
import type { GatewayProcess } from './support/gateway.js';
import { DaemonRig } from './support/rig.js';
import { endSession, openStaticSession, runVends } from './support/vmc.js';
import { EchoFloor } from './pty-floor.js';
import { interleave, ratioFigure } from './vend-latency.js';
import { startSlowloris } from '../rigs/hostile/slowloris.js';
import { summarize } from './stats.js';

const VENDS = 1000;
const BASE = {
  id: 'vend-latency-slowloris',
  what:
    'Vend approval in a static QR session while 64 slow-header connections ' +
    'attack the Start endpoint from one address, p99 over the floor p99',
  unit: 'x floor',
  target: {
    text: "p99 <= 1.0 x the floor's p99 (same run, interleaved blocks)",
    checks: [{ stat: 'value' as const, op: '<=' as const, limit: 1 }],
  },
};

/** Why wallet Starts went unanswered, by error code. */
const failures: Record<string, number> = {};
const failed = (why: string) => {
  failures[why] = (failures[why] ?? 0) + 1;
  return false;
};

/** One Start for another machine (Declined 50) from `localAddress`; true when any answer came. */
function walletStart(startUrl: string, body: string, localAddress: string): Promise<boolean> {
  const url = new URL(startUrl);
  return new Promise((resolve) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent: false,
        localAddress,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(true));
        res.on('error', (err: NodeJS.ErrnoException) => resolve(failed(`response ${err.code ?? err.message}`)));
      },
    );
    req.setTimeout(10_000, () => req.destroy(Object.assign(new Error('no answer in 10 s'), { code: 'TIMEOUT' })));
    req.on('error', (err: NodeJS.ErrnoException) => resolve(failed(err.code ?? err.message)));
    req.end(body);
  });
}

export async function benchSlowlorisVend(budget: Budget, gateway: GatewayProcess): Promise<Figure[]> {
  if (!daemonBuilt()) return [notMeasured(BASE, 'pending', DAEMON_PENDING)];
  const rig = await DaemonRig.start({ gatewayUrl: gateway.url, preauthAmount: 100_000 });
  // The reader can be enabled before the payment worker listens: the session (its Start retried
  // until approved) comes first, so no Start below meets a port that is not listening yet.
  try {
    await openStaticSession(rig.sim, rig.files, Math.min(30_000, budget.leftMs));
  } catch (err) {
    await rig.stop();
    return [notMeasured(BASE, 'error', (err as Error).message)];
  }
  // The same vends without the attack first: on a loaded machine this tells the attack from the load.
  const baseline = summarize((await runVends(rig.sim, VENDS / 2, { price: 1, gapMs: 5, budget })).latencies);
  const url = new URL(rig.files.startUrl);
  const attack = startSlowloris({
    host: url.hostname,
    port: Number(url.port),
    localAddress: '127.0.0.2',
    count: 64,
    byteEveryMs: 200,
  });
  let walletRunning = true;
  const replies: Array<Promise<boolean>> = [];
  const body = JSON.stringify({
    AppUserId: 'bench-wallet',
    SecretToken: rig.files.secretToken,
    TerminalId: 'NOT-THIS-MACHINE',
    TransactionId: 'bench-slowloris-0000',
    Balance: 1,
  });
  const wallet = (async () => {
    while (walletRunning) {
      replies.push(walletStart(rig.files.startUrl, body, '127.0.0.3'));
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  let floor: EchoFloor | null = null;
  try {
    floor = await EchoFloor.start();
    await new Promise((r) => setTimeout(r, 1_000)); // the attack holds what it can before the vends start
    const run = await interleave(floor.sim, rig.sim, rig.daemon.pid, budget, 5, VENDS / 5);
    endSession(rig.sim);
    walletRunning = false;
    await wallet;
    const answered = (await Promise.all(replies)).filter(Boolean).length;
    const context = {
      walletStarts: replies.length,
      walletAnswered: answered,
      walletAnsweredShare: Math.round((answered / Math.max(1, replies.length)) * 1000) / 1000,
      attackConnectionsOpened: attack.opened,
      walletFailures: JSON.stringify(failures),
      baselineNoAttackP50Ms: baseline.p50,
      baselineNoAttackP99Ms: baseline.p99,
    };
    return [ratioFigure(BASE, run, context)];
  } catch (err) {
    return [notMeasured(BASE, 'error', (err as Error).message)];
  } finally {
    walletRunning = false;
    await floor?.stop();
    await attack.stop();
    await rig.stop();
  }
}
