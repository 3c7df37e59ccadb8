/**
 * One consumer session each, driven through the VMC simulator and the wallet simulator against
 * the real daemon: a Static QR session (Start, C,START, vends approved locally, session end) or a
 * Dynamic QR purchase (selection, QR, polls, approval, dispense). At each named moment the
 * harness may kill the daemon; any step throws AgentGone once the daemon is gone.
 */
import { STEP_WAIT_MS, type Attempt, type Harness, type KillMoment } from './harness.js';

export interface SessionStyle {
  /** Serial noise between vends (chance per vend). */
  noiseRate: number;
  /** Pull the serial adapter in the middle of a static session (chance per session). */
  unplugMidSessionRate: number;
  /** How long a dynamic QR payment may take (dynamicQr.paymentTimeoutMs of the rig). */
  paymentTimeoutMs: number;
}

const minor = (amount: number) => Math.round(amount * 100);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Prices inside a funded session (funds 10.00; some sessions are capped by a Balance). Multiples
 * of 0.20, so no session total is one of the simulator's magic Settlement amounts (8.01-8.09,
 * 8.30, 8.50 are declined with that code on purpose, which dead-letters the Settlement).
 */
const STATIC_PRICES = [0.4, 1, 1.2, 2, 2.4, 3.6];
/** Dynamic QR prices and what the gateway simulator does with them (docs/payments.md, gateway simulator). */
const DYNAMIC_PRICES = [1, 1.5, 2.25, 3, 7.02, 7.03, 8.01, 9.01];
const PAYING_PRICES = [1, 1.5, 2.25, 3, 7.02];
/** Paid after three pending polls: leaves time to kill the daemon while it polls. */
const SLOW_PAYING_PRICE = 7.03;

const isSessionClosedLog = (txId: string) => (l: Record<string, unknown>) =>
  l.txId === txId && (l.msg === 'static session settled' || l.msg === 'static session cancelled: nothing sold');

export async function staticSession(h: Harness, a: Attempt, style: SessionStyle): Promise<void> {
  const { rig, dice } = h;
  const vmc = rig.vmc;
  const balance = dice.chance(0.15) ? dice.pick([2.5, 4, 9.05]) : undefined; // 9.05: declined 5 (fraud)
  const logFrom = h.logCount();
  let cStart = h.command((c) => c.kind === 'start', 'C,START');
  let result = await h.guard(rig.start(balance !== undefined ? { balance } : {}));
  // Right after a previous session the reader may still be on its way back to idle: "busy" (30).
  for (let tries = 0; result.outcome.kind === 'declined' && result.outcome.code === 30 && tries < 50; tries++) {
    await sleep(40);
    h.check();
    cStart = h.command((c) => c.kind === 'start', 'C,START');
    result = await h.guard(rig.start(balance !== undefined ? { balance } : {}));
  }
  const txId = result.transactionId;
  a.staticTxId = txId;
  a.steps.push(`Start ${result.outcome.kind}${result.outcome.kind === 'declined' ? ` ${result.outcome.code}` : ''}`);
  if (result.outcome.kind !== 'approved') return;
  await h.at(a, 'after-start-approved');

  const notAuthorized = h.logAfter(
    logFrom,
    (l) =>
      l.txId === txId &&
      (l.msg === 'static QR authorization declined' || l.msg === 'static QR authorization unanswered: cancel queued'),
    'the authorization outcome',
  );
  notAuthorized.catch(() => {});
  const opened = await h.guard(Promise.race([cStart.then(() => true), notAuthorized.then(() => false)]));
  if (!opened) {
    a.steps.push('authorization not approved');
    return;
  }
  if (!vmc.state().session) {
    a.steps.push('the VMC refused C,START');
    await h.logAfter(logFrom, isSessionClosedLog(txId), 'the refused session to close');
    return;
  }
  a.steps.push('session open');
  await h.at(a, 'after-c-start');

  // A plan to kill around a vend needs at least one vend to happen.
  const needsVend =
    a.plan.kind === 'moment' &&
    (a.plan.moment === 'between-vend-approve-and-success' || a.plan.moment === 'after-vend-success');
  const vends = dice.int(needsVend ? 1 : 0, 4);
  for (let i = 0; i < vends; i++) {
    if (style.noiseRate > 0 && dice.chance(style.noiseRate)) await h.noise(dice.int(1, 30));
    if (i > 0 && style.unplugMidSessionRate > 0 && dice.chance(style.unplugMidSessionRate)) {
      // No vend is being dispensed and the last result has reached the daemon (a line still in
      // the wire when the adapter goes is the crash window again): the link drops, the daemon
      // ends the session (link-lost).
      await h.untilRecorded(
        txId,
        a.successes.reduce((sum, m) => sum + m.amountMinor, 0),
      );
      a.steps.push('serial unplugged mid-session');
      await h.unplugReplug(dice.int(50, 300));
      await h.logAfter(logFrom, isSessionClosedLog(txId), 'the session to close after the replug');
      return;
    }
    h.check();
    const price = dice.pick(STATIC_PRICES);
    const answer = h.command((c) => c.kind === 'vend-approve' || c.kind === 'vend-deny', 'the vend answer');
    if (!vmc.select(dice.int(1, 40), price)) {
      a.steps.push('the VMC could not select (no session)');
      break;
    }
    const ans = await h.guard(answer);
    if (ans.kind !== 'vend-approve') {
      a.steps.push(`vend ${price} denied`);
      continue;
    }
    await dispenseOrFail(h, a, ans.amount, 'between-vend-approve-and-success');
  }
  h.check();
  if (dice.chance(0.8)) vmc.endSession();
  else vmc.cancel();
  a.steps.push('session ended by the VMC');
  await h.at(a, 'after-session-end');
  await h.logAfter(logFrom, isSessionClosedLog(txId), 'the session to be settled or cancelled');
}

export async function dynamicSession(h: Harness, a: Attempt, style: SessionStyle): Promise<void> {
  const { rig, dice } = h;
  const vmc = rig.vmc;
  const killWhilePolling = a.plan.kind === 'moment' && a.plan.moment === 'during-dynamic-poll';
  // A plan to kill after the approval needs a price the simulator approves.
  const needsApproval =
    a.plan.kind === 'moment' && (a.plan.moment === 'after-payment-approval' || a.plan.moment === 'after-vend-success');
  const price = killWhilePolling ? SLOW_PAYING_PRICE : dice.pick(needsApproval ? PAYING_PRICES : DYNAMIC_PRICES);
  const logFrom = h.logCount();
  h.check();
  const answer = h.command(
    (c) => c.kind === 'vend-approve' || c.kind === 'vend-deny',
    'the dynamic QR vend answer',
    style.paymentTimeoutMs + STEP_WAIT_MS,
  );
  if (!vmc.select(dice.int(1, 40), price)) {
    a.steps.push('the VMC could not select');
    return;
  }
  const started = await h.logAfter(
    logFrom,
    (l) => l.msg === 'dynamic QR payment started',
    'the dynamic QR payment to start',
  );
  const txId = started.txId as string;
  a.steps.push(`dynamic QR ${price} started`);
  const ended = () =>
    h.logAfter(
      logFrom,
      (l) => l.msg === 'dynamic QR payment ended' && l.txId === txId,
      'the dynamic QR payment to end',
      style.paymentTimeoutMs + STEP_WAIT_MS,
    );
  if (killWhilePolling) {
    await sleep(dice.int(30, 280));
    await h.at(a, 'during-dynamic-poll');
  }
  if (!needsApproval && dice.chance(0.08)) {
    // The consumer walks away while the QR is on screen.
    await sleep(dice.int(0, 300));
    h.check();
    if (vmc.cancel()) {
      a.steps.push('consumer cancelled at the VMC');
      await ended();
      return;
    }
  }
  const ans = await h.guard(answer);
  if (ans.kind !== 'vend-approve') {
    a.steps.push('vend denied');
    await ended();
    return;
  }
  await dispenseOrFail(h, a, ans.amount, 'after-payment-approval');
  await ended();
}

/**
 * After an approval: the VMC dispenses (85 %) or fails to (15 %). A kill may come at `moment`
 * (the approval is known, the outcome not yet) and right after a success (dispensed, maybe not
 * recorded yet).
 */
async function dispenseOrFail(h: Harness, a: Attempt, amount: number, moment: KillMoment): Promise<void> {
  const vmc = h.rig.vmc;
  h.approvedAmount = minor(amount);
  await h.at(a, moment);
  if (h.dice.chance(0.85)) {
    vmc.vendSuccess();
    a.successes.push({ atMs: Date.now(), amountMinor: minor(amount), afterKill: false });
    a.steps.push(`vend ${amount} dispensed`);
    h.approvedAmount = null;
    await h.at(a, 'after-vend-success');
  } else {
    vmc.vendFailure(3);
    a.failures.push({ atMs: Date.now(), amountMinor: minor(amount), afterKill: false });
    a.steps.push(`vend ${amount} failed`);
    h.approvedAmount = null;
  }
}
