/**
 * The simulated gateway's decisions for valid requests: the semantic checks a real gateway would
 * make (unknown transaction, settling a declined or cancelled authorization, an amount above
 * AuthAmount, a PaymentInfo that is not the one issued, voiding an unpaid QR...), the
 * behaviours, and idempotent answers for repeated Settlement/Cancel/Void. Each handler returns
 * the answer as text so that a duplicate gets the very same bytes.
 *
 * Like a strict gateway, it writes amounts with the currency's decimals (`AuthAmount":10.00`)
 * and expects every PaymentInfo it issued back byte for byte (design section 3).
 */
import type { GatewayOperation } from '../../gateway/outcome.js';
import { RETRYABLE_DECLINE_CODES } from '../../gateway/outcome.js';
import {
  approvedStatus,
  declinedStatus,
  DeclineCodes,
  DECLINE_CODE_TEXT,
  formatGatewayDateTime,
  type PaymentInfo,
  type RequestOf,
  type Status,
} from '../../gateway/protocol/index.js';
import { composePaymentInfo, decimalPlacesOf, exactMinor, memberText, minorOf, RawJson, stringifyWire } from '../../gateway/wire/index.js';
import type { Behaviours, PaymentBehaviour } from './behaviours.js';
import type { ClosingOperation, ClosingRecord, Decision, QrRecord, SimLedger, TxRecord } from './ledger.js';

export interface HandlerContext {
  ledger: SimLedger;
  behaviours: Behaviours;
  now: () => Date;
}

/** A valid request: its validated value, the parsed JSON as sent, and the exact text. */
export interface IncomingRequest<O extends GatewayOperation> {
  value: RequestOf<O>;
  raw: Record<string, unknown>;
  text: string;
}

const decline = (code: number, why: string): Status => declinedStatus(code, `${DECLINE_CODE_TEXT[code] ?? 'declined'}: ${why}`);
const decisionOf = (s: Status): Decision => ({ verdict: s.Verdict, code: s.Code ?? null, message: s.StatusMessage ?? null });
const digits = (n: number, width: number) => String(n).padStart(width, '0').slice(-width);

/** Answers a closing operation once per body; repeats get the stored bytes, other bodies a conflict. */
function closing<O extends ClosingOperation>(
  op: O,
  req: IncomingRequest<O>,
  ctx: HandlerContext,
  flow: TxRecord['flow'],
  decide: () => Record<string, unknown> & { Status: Status },
): string {
  const txId = req.value.BasicInfo.TransactionId;
  const stored = ctx.ledger.storedAnswer(op, txId);
  if (stored !== undefined) {
    if (stored.bodyText === req.text) {
      ctx.ledger.duplicate(txId, op);
      return stored.answerText;
    }
    if (stored.approved) {
      const reason = `a different ${op} body for this TransactionId was already processed`;
      ctx.ledger.conflict(txId, op, reason, flow);
      return stringifyWire({ Status: decline(DeclineCodes.NotAllowed, reason) });
    }
    // The earlier body was declined for good (e.g. 998): nothing was processed, so a corrected
    // request is judged on its own body.
  }
  const answer = decide();
  const text = stringifyWire(answer);
  const code = answer.Status.Code;
  // A retryable decline (6, 30, 992, 999) invites the same request again: do not pin it.
  if (!(answer.Status.Verdict === 'Declined' && code != null && RETRYABLE_DECLINE_CODES.has(code))) {
    ctx.ledger.storeAnswer(op, txId, { bodyText: req.text, answerText: text, approved: answer.Status.Verdict === 'Approved' });
  }
  return text;
}

function closingRecord(status: Status, amount: number, extra: { reasonCode?: number | null; timeout?: boolean; products?: number }): ClosingRecord {
  return { ...decisionOf(status), amount, reasonCode: extra.reasonCode ?? null, gatewayTimeout: extra.timeout ?? false, products: extra.products ?? 0 };
}

/** A PaymentInfo this gateway issues: the object (for the ledger view) and the exact text it sent. */
interface Issued {
  value: PaymentInfo;
  text: string;
}

function issue(value: PaymentInfo, dp: number): Issued {
  return { value, text: composePaymentInfo(value, dp).text };
}

function issuePaymentInfo(ctx: HandlerContext, amount: number, dp: number): Issued {
  const n = ctx.ledger.nextNumber();
  return issue(
    {
      SrvTranId: `SIM${digits(n, 8)}`,
      AuthCode: digits(100000 + n * 7919, 6),
      AuthAmount: amount,
      RRN: digits(n, 12),
      AuthDateTime: formatGatewayDateTime(ctx.now()),
      AuthSource: 'SIM',
    },
    dp,
  );
}

/** The PaymentInfo member of a request exactly as sent (null when absent). */
const sentPaymentInfo = (req: IncomingRequest<GatewayOperation>): string | null => memberText(req.text, 'PaymentInfo');

/** An answer with the PaymentInfo written exactly as issued. */
function withPaymentInfo(issued: Issued | null | undefined, status: Status): string {
  return stringifyWire(issued ? { PaymentInfo: new RawJson(issued.text), Status: status } : { Status: status });
}

/**
 * Why a PaymentInfo composed from GenerateQR (SrvTranId, RRN, AuthAmount: design section 3) is not
 * the one this QR was issued with, or null when it is.
 */
function composedMismatch(sentText: string | null, qr: QrRecord): string | null {
  if (sentText === null) return 'PaymentInfo is missing';
  const sent = JSON.parse(sentText) as Record<string, unknown>;
  const extra = Object.keys(sent).find((k) => k !== 'SrvTranId' && k !== 'RRN' && k !== 'AuthAmount');
  if (extra !== undefined) return `PaymentInfo.${extra} was not issued for this QR`;
  if (sent.SrvTranId !== qr.srvTranId || sent.RRN !== qr.rrn) return 'PaymentInfo SrvTranId/RRN do not match the QR issued by GenerateQR';
  const amountText = memberText(sentText, 'AuthAmount');
  const sentMinor = amountText === null ? null : exactMinor(amountText, qr.decimalPlaces);
  if (sentMinor === null || !sentMinor.exact || sentMinor.minor !== BigInt(minorOf(qr.amount, qr.decimalPlaces))) {
    return `PaymentInfo.AuthAmount must be the amount of the QR (${qr.amount})`;
  }
  return null;
}

export function handleAuthorization(req: IncomingRequest<'Authorization'>, ctx: HandlerContext): string {
  const { TransactionId: txId, Amount: amount } = req.value.BasicInfo;
  if (ctx.ledger.get(txId) !== undefined) {
    ctx.ledger.conflict(txId, 'Authorization', 'Authorization for a TransactionId already in use', 'static');
    return stringifyWire({ Status: decline(DeclineCodes.NotAllowed, 'TransactionId already in use') });
  }
  const rec = ctx.ledger.create(txId, 'static', 'auth-declined');
  const b = amount <= 0 ? { kind: 'decline' as const, code: DeclineCodes.InvalidAmount } : ctx.behaviours.decide('Authorization', txId, amount);
  if (b.kind === 'decline') {
    const status = decline(b.code, b.message ?? `Authorization of ${amount} declined`);
    rec.authorization = { ...decisionOf(status), amount, paymentInfo: null, paymentInfoText: null };
    return stringifyWire({ Status: status });
  }
  const issued = issuePaymentInfo(ctx, amount, decimalPlacesOf(req.value));
  const status = approvedStatus();
  rec.state = 'authorized';
  rec.authorization = { ...decisionOf(status), amount, paymentInfo: issued.value, paymentInfoText: issued.text };
  if (b.kind === 'approve-in-currency') {
    // The hold is taken all the same; the answer says in which currency, like the request's BasicInfo.
    rec.authorization.currencyCode = b.currencyCode;
    const amountText = memberText(memberText(req.text, 'BasicInfo') ?? '{}', 'Amount') ?? String(amount);
    const basicInfo = {
      TransactionId: txId,
      Amount: new RawJson(amountText),
      CurrencyCode: b.currencyCode,
      CurrencyNumeric: b.currencyNumeric,
    };
    return stringifyWire({ BasicInfo: basicInfo, PaymentInfo: new RawJson(issued.text), Status: status });
  }
  return withPaymentInfo(issued, status);
}

export function handleSettlement(req: IncomingRequest<'Settlement'>, ctx: HandlerContext): string {
  const txId = req.value.BasicInfo.TransactionId;
  return closing('Settlement', req, ctx, 'static', () => {
    const amount = req.value.BasicInfo.Amount;
    const rec = ctx.ledger.get(txId);
    if (rec === undefined || rec.flow !== 'static' || rec.authorization === null) {
      return { Status: decline(DeclineCodes.TransactionIdUnknown, 'no Authorization for this TransactionId') };
    }
    const reject = (status: Status) => {
      rec.settlement = closingRecord(status, amount, { products: req.value.Products?.length ?? 0 });
      return { Status: status };
    };
    if (rec.state === 'auth-declined') return reject(decline(DeclineCodes.NotAllowed, 'the Authorization was declined'));
    if (rec.state === 'cancelled') {
      ctx.ledger.conflict(txId, 'Settlement', 'Settlement after an accepted Cancel', 'static');
      return reject(decline(DeclineCodes.NotAllowed, 'the transaction was already cancelled'));
    }
    if (sentPaymentInfo(req) !== rec.authorization.paymentInfoText) {
      return reject(declinedStatus(DeclineCodes.ValidationError, 'PaymentInfo differs from the PaymentInfo returned by Authorization (it goes back byte for byte)'));
    }
    const dp = decimalPlacesOf(req.value);
    if (minorOf(amount, dp) > minorOf(rec.authorization.amount, dp)) {
      return reject(decline(DeclineCodes.AmountLimitExceeded, `Amount ${amount} is above AuthAmount ${rec.authorization.amount}`));
    }
    const products = req.value.Products ?? [];
    if (products.length > 0) {
      const totalMinor = products.reduce((sum, p) => sum + minorOf(p.Price, dp), 0);
      if (totalMinor !== minorOf(amount, dp)) return reject(decline(DeclineCodes.InvalidAmount, `Products total differs from Amount ${amount}`));
    }
    const b = ctx.behaviours.decide('Settlement', txId, amount);
    if (b.kind === 'decline') return reject(decline(b.code, b.message ?? `Settlement of ${amount} declined`));
    const status = approvedStatus();
    rec.state = 'settled';
    rec.accepted.Settlement += 1;
    rec.settlement = closingRecord(status, amount, { products: products.length });
    return { Status: status };
  });
}

export function handleCancel(req: IncomingRequest<'Cancel'>, ctx: HandlerContext): string {
  const txId = req.value.BasicInfo.TransactionId;
  return closing('Cancel', req, ctx, 'static', () => {
    const amount = req.value.BasicInfo.Amount;
    const timeout = req.value.PaymentInfo?.IsGatewayTimeout === true;
    const extra = { reasonCode: req.value.ReasonCode ?? null, timeout };
    let rec = ctx.ledger.get(txId);
    if (rec === undefined) {
      if (!timeout) return { Status: decline(DeclineCodes.TransactionIdUnknown, 'no Authorization for this TransactionId') };
      // The Authorization never reached us: nothing to reverse, and the client may stop retrying.
      rec = ctx.ledger.create(txId, 'static', 'cancelled');
    } else if (rec.flow !== 'static') {
      return { Status: decline(DeclineCodes.NotAllowed, 'a dynamic QR transaction is voided, not cancelled') };
    } else if (rec.state === 'settled') {
      ctx.ledger.conflict(txId, 'Cancel', 'Cancel after an accepted Settlement', 'static');
      const status = decline(DeclineCodes.NotAllowed, 'the transaction was already settled');
      rec.cancel = closingRecord(status, amount, extra);
      return { Status: status };
    } else if (rec.state === 'auth-declined' && !timeout) {
      const status = decline(DeclineCodes.NotAllowed, 'the Authorization was declined; nothing to cancel');
      rec.cancel = closingRecord(status, amount, extra);
      return { Status: status };
    } else if (!timeout && sentPaymentInfo(req) !== rec.authorization?.paymentInfoText) {
      const status = declinedStatus(DeclineCodes.ValidationError, 'PaymentInfo differs from the PaymentInfo returned by Authorization (it goes back byte for byte)');
      rec.cancel = closingRecord(status, amount, extra);
      return { Status: status };
    }
    // A rule may refuse it (the amount table never does): the authorization stays held.
    const b = ctx.behaviours.decide('Cancel', txId, amount);
    if (b.kind === 'decline') {
      const status = decline(b.code, b.message ?? 'Cancel declined');
      rec.cancel = closingRecord(status, amount, extra);
      return { Status: status };
    }
    const status = approvedStatus();
    rec.state = 'cancelled';
    rec.accepted.Cancel += 1;
    rec.cancel = closingRecord(status, amount, extra);
    return { Status: status };
  });
}

export function handleGenerateQR(req: IncomingRequest<'GenerateQR'>, ctx: HandlerContext): string {
  const { TransactionId: txId, Amount: amount } = req.value.BasicInfo;
  if (ctx.ledger.get(txId) !== undefined) {
    ctx.ledger.conflict(txId, 'GenerateQR', 'GenerateQR for a TransactionId already in use', 'dynamic');
    return stringifyWire({ Status: decline(DeclineCodes.NotAllowed, 'TransactionId already in use') });
  }
  const rec = ctx.ledger.create(txId, 'dynamic', 'qr-declined');
  const b = amount <= 0 ? { kind: 'decline' as const, code: DeclineCodes.InvalidAmount } : ctx.behaviours.decide('GenerateQR', txId, amount);
  if (b.kind === 'decline') return stringifyWire({ Status: decline(b.code, b.message ?? `GenerateQR of ${amount} declined`) });
  const n = ctx.ledger.nextNumber();
  const srvTranId = `SIMQR${digits(n, 8)}`;
  const rrn = digits(n, 12);
  // approve-in-currency is the static Authorization's: a QR under that rule is paid at once.
  const paidAtOnce = b.kind === 'approve' || b.kind === 'approve-in-currency';
  const behaviour: PaymentBehaviour = paidAtOnce ? { kind: 'pay-after-polls', polls: 0 } : b;
  const qrCode = `https://pay.simulator.invalid/qr/${srvTranId}?amount=${amount}`;
  rec.state = 'qr-open';
  rec.qr = { amount, decimalPlaces: decimalPlacesOf(req.value), srvTranId, rrn, qrCode, createdAtMs: ctx.now().getTime(), behaviour, polls: 0, paymentInfo: null, paymentInfoText: null };
  const channel = req.value.ChannelId;
  return stringifyWire({
    QRCode: qrCode,
    QRData: { ...(channel != null ? { ChannelId: channel } : {}), RRN: rrn, SrvTranId: srvTranId },
    // An approved GenerateQR may carry Code 0 (seed, Errors 3): the simulator does, so clients cope.
    Status: { Verdict: 'Approved', Code: 0, CustomDeclineCode: 0 },
  });
}

export function handleInquiry(req: IncomingRequest<'Inquiry'>, ctx: HandlerContext): string {
  const txId = req.value.BasicInfo.TransactionId;
  const rec = ctx.ledger.get(txId);
  const answer = (status: Status, issued?: Issued | null) => withPaymentInfo(issued, status);
  if (rec === undefined || rec.qr === null) return answer(decline(DeclineCodes.TransactionIdUnknown, 'no QR for this TransactionId'));
  const qr = rec.qr;
  // Before an approval the Inquiry names the QR (PaymentInfo composed from GenerateQR); after
  // one it may carry the approving PaymentInfo, byte for byte.
  const sent = sentPaymentInfo(req);
  if (!(qr.paymentInfoText !== null && sent === qr.paymentInfoText)) {
    const mismatch = composedMismatch(sent, qr);
    if (mismatch !== null) return answer(declinedStatus(DeclineCodes.ValidationError, mismatch));
  }
  qr.polls += 1;
  const paidInfo = (): Issued | null => (qr.paymentInfo && qr.paymentInfoText ? { value: qr.paymentInfo, text: qr.paymentInfoText } : null);
  switch (rec.state) {
    case 'paid':
      return answer(approvedStatus(), paidInfo());
    case 'voided':
      return answer(decline(DeclineCodes.NotAllowed, 'the payment was voided'));
    case 'expired':
      return answer(decline(DeclineCodes.Timeout, 'the QR expired unpaid'));
    case 'qr-declined':
      return answer(decline(rec.authorization?.code ?? DeclineCodes.NotAllowed, 'the payment was declined'));
    default:
      break;
  }
  const b = qr.behaviour;
  if (b.kind === 'decline-at-inquiry') {
    rec.state = 'qr-declined';
    const status = decline(b.code, 'the consumer payment was declined');
    rec.authorization = { ...decisionOf(status), amount: qr.amount, paymentInfo: null, paymentInfoText: null };
    return answer(status);
  }
  const paid =
    b.kind === 'approve' ||
    b.kind === 'pay-amount' ||
    (b.kind === 'pay-after-polls' && qr.polls > b.polls) ||
    (b.kind === 'pay-after-ms' && ctx.now().getTime() - qr.createdAtMs >= b.ms);
  if (!paid) {
    if (req.value.Polling.IsLastPolling) {
      rec.state = 'expired';
      return answer(decline(DeclineCodes.Timeout, 'the QR expired unpaid at the last polling'));
    }
    return answer(decline(DeclineCodes.Pending, 'not paid yet'));
  }
  const at = formatGatewayDateTime(ctx.now());
  const n = ctx.ledger.nextNumber();
  // What the consumer paid: the QR's amount, or what a pay-amount behaviour says (a short payment).
  const paidAmount = b.kind === 'pay-amount' ? b.amount : qr.amount;
  const issued = issue(
    {
      SrvTranId: qr.srvTranId,
      RRN: qr.rrn,
      AuthAmount: paidAmount,
      SettAmount: paidAmount,
      AuthCode: digits(200000 + n * 7919, 6),
      AuthDateTime: at,
      SettDateTime: at,
    },
    qr.decimalPlaces,
  );
  qr.paymentInfo = issued.value;
  qr.paymentInfoText = issued.text;
  rec.state = 'paid';
  rec.authorization = { verdict: 'Approved', code: null, message: null, amount: paidAmount, paymentInfo: issued.value, paymentInfoText: issued.text };
  return answer(approvedStatus(), issued);
}

export function handleVoid(req: IncomingRequest<'Void'>, ctx: HandlerContext): string {
  const txId = req.value.BasicInfo.TransactionId;
  return closing('Void', req, ctx, 'dynamic', () => {
    const amount = req.value.BasicInfo.Amount;
    const timeout = req.value.PaymentInfo.IsGatewayTimeout === true;
    const extra = { reasonCode: req.value.ReasonCode ?? null, timeout };
    // The Void is accepted: counted once and recorded with its answer.
    const accept = (record: TxRecord, message?: string): Status => {
      const status = approvedStatus(message);
      record.accepted.Void += 1;
      record.void = closingRecord(status, amount, extra);
      return status;
    };
    let rec = ctx.ledger.get(txId);
    if (rec === undefined) {
      if (!timeout) return { Status: decline(DeclineCodes.TransactionIdUnknown, 'no QR for this TransactionId') };
      // GenerateQR never reached us, so nothing can have been paid: the Void is a no-op that
      // succeeds (an unknown outcome is resolved "not charged"), and the id is closed for good.
      rec = ctx.ledger.create(txId, 'dynamic', 'expired');
      return { Status: accept(rec, 'no QR was issued; nothing was taken') };
    }
    const reject = (status: Status) => {
      rec.void = closingRecord(status, amount, extra);
      return { Status: status };
    };
    if (rec.flow !== 'dynamic' || rec.qr === null) return reject(decline(DeclineCodes.NotAllowed, 'a static QR transaction is cancelled, not voided'));
    const qr = rec.qr;
    const sent = sentPaymentInfo(req);
    if (rec.state === 'qr-open' || rec.state === 'expired') {
      const mismatch = timeout ? null : composedMismatch(sent, qr);
      if (mismatch !== null) return reject(declinedStatus(DeclineCodes.ValidationError, mismatch));
      // Close the QR so a late payment cannot happen after the machine gave up on it. Nothing was
      // taken, so the Void succeeds: the machine's "make sure the consumer is not charged" holds.
      rec.state = 'expired';
      return { Status: accept(rec, 'the QR was not paid; nothing was taken (the QR is now closed)') };
    }
    if (rec.state === 'qr-declined' && timeout) {
      // The payment was declined, but its answer never reached the machine (a reset after the
      // gateway decided): the machine voids an unknown outcome. Nothing was taken: success.
      return { Status: accept(rec, 'the payment was declined; nothing was taken') };
    }
    if (rec.state !== 'paid') return reject(decline(DeclineCodes.NotAllowed, `nothing to void (${rec.state})`));
    // A paid QR is voided with the approving Inquiry's PaymentInfo, byte for byte (design section 3).
    if (!timeout && sent !== qr.paymentInfoText) {
      return reject(declinedStatus(DeclineCodes.ValidationError, 'PaymentInfo differs from the PaymentInfo returned by the approving Inquiry (it goes back byte for byte)'));
    }
    if (minorOf(amount, qr.decimalPlaces) > minorOf(qr.amount, qr.decimalPlaces)) return reject(decline(DeclineCodes.AmountLimitExceeded, `Amount ${amount} is above the QR amount ${qr.amount}`));
    const b = ctx.behaviours.decide('Void', txId, amount);
    if (b.kind === 'decline') return reject(decline(b.code, b.message ?? 'Void declined'));
    rec.state = 'voided';
    const status = accept(rec);
    return qr.paymentInfoText !== null ? { PaymentInfo: new RawJson(qr.paymentInfoText), Status: status } : { Status: status };
  });
}
