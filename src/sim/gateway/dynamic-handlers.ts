/**
 * The simulated gateway's decisions for valid Dynamic QR requests: GenerateQR issues a QR, each
 * Inquiry polls it (paid per the behaviour), a Void closes it once per body. Like a strict
 * gateway, it expects the PaymentInfo composed from GenerateQR until the QR is paid, and the
 * approving Inquiry's PaymentInfo byte for byte after (docs/decisions/gateway-interface.md).
 */
import {
  approvedStatus,
  declinedStatus,
  DeclineCodes,
  formatGatewayDateTime,
  type Status,
} from '../../gateway/protocol/index.js';
import { decimalPlacesOf, exactMinor, memberText, minorOf, RawJson, stringifyWire } from '../../gateway/wire/index.js';
import type { PaymentBehaviour } from './behaviours.js';
import {
  closing,
  closingRecord,
  decisionOf,
  decline,
  digits,
  issue,
  sentPaymentInfo,
  withPaymentInfo,
  type HandlerContext,
  type IncomingRequest,
  type Issued,
} from './handler-parts.js';
import type { QrRecord, TxRecord } from './ledger.js';

/**
 * Why a PaymentInfo composed from GenerateQR (SrvTranId, RRN, AuthAmount: docs/decisions/gateway-interface.md) is not
 * the one this QR was issued with, or null when it is.
 */
function composedMismatch(sentText: string | null, qr: QrRecord): string | null {
  if (sentText === null) return 'PaymentInfo is missing';
  const sent = JSON.parse(sentText) as Record<string, unknown>;
  const extra = Object.keys(sent).find((k) => k !== 'SrvTranId' && k !== 'RRN' && k !== 'AuthAmount');
  if (extra !== undefined) return `PaymentInfo.${extra} was not issued for this QR`;
  if (sent.SrvTranId !== qr.srvTranId || sent.RRN !== qr.rrn)
    return 'PaymentInfo SrvTranId/RRN do not match the QR issued by GenerateQR';
  const amountText = memberText(sentText, 'AuthAmount');
  const sentMinor = amountText === null ? null : exactMinor(amountText, qr.decimalPlaces);
  if (sentMinor === null || !sentMinor.exact || sentMinor.minor !== BigInt(minorOf(qr.amount, qr.decimalPlaces))) {
    return `PaymentInfo.AuthAmount must be the amount of the QR (${qr.amount})`;
  }
  return null;
}

export function handleGenerateQR(req: IncomingRequest<'GenerateQR'>, ctx: HandlerContext): string {
  const { TransactionId: txId, Amount: amount } = req.value.BasicInfo;
  if (ctx.ledger.get(txId) !== undefined) {
    ctx.ledger.conflict(txId, 'GenerateQR', 'GenerateQR for a TransactionId already in use', 'dynamic');
    return stringifyWire({ Status: decline(DeclineCodes.NotAllowed, 'TransactionId already in use') });
  }
  const rec = ctx.ledger.create(txId, 'dynamic', 'qr-declined');
  const b =
    amount <= 0
      ? { kind: 'decline' as const, code: DeclineCodes.InvalidAmount }
      : ctx.behaviours.decide('GenerateQR', txId, amount);
  if (b.kind === 'decline')
    return stringifyWire({ Status: decline(b.code, b.message ?? `GenerateQR of ${amount} declined`) });
  const n = ctx.ledger.nextNumber();
  const srvTranId = `SIMQR${digits(n, 8)}`;
  const rrn = digits(n, 12);
  const behaviour: PaymentBehaviour = b.kind === 'approve' ? { kind: 'pay-after-polls', polls: 0 } : b;
  const qrCode = `https://pay.simulator.invalid/qr/${srvTranId}?amount=${amount}`;
  rec.state = 'qr-open';
  rec.qr = {
    amount,
    decimalPlaces: decimalPlacesOf(req.value),
    srvTranId,
    rrn,
    qrCode,
    createdAtMs: ctx.now().getTime(),
    behaviour,
    polls: 0,
    paymentInfo: null,
    paymentInfoText: null,
  };
  const channel = req.value.ChannelId;
  return stringifyWire({
    QRCode: qrCode,
    QRData: { ...(channel != null ? { ChannelId: channel } : {}), RRN: rrn, SrvTranId: srvTranId },
    // An approved GenerateQR may carry Code 0 (seed, Errors 3): the simulator does, so clients cope.
    Status: { Verdict: 'Approved', Code: 0, CustomDeclineCode: 0 },
  });
}

/**
 * An approving Inquiry's answer. Under approve-in-currency it carries a BasicInfo naming the
 * currency the consumer paid in (another than the Inquiry's), as a gateway whose merchant account
 * is in that currency would (docs/decisions/gateway-interface.md).
 */
function approvedInquiry(req: IncomingRequest<'Inquiry'>, qr: QrRecord, issued: Issued | null): string {
  const b = qr.behaviour;
  if (b.kind !== 'approve-in-currency' || issued === null) return withPaymentInfo(issued, approvedStatus());
  const basicInfo = {
    TransactionId: req.value.BasicInfo.TransactionId,
    Amount: new RawJson(memberText(memberText(req.text, 'BasicInfo') ?? '{}', 'Amount') ?? String(qr.amount)),
    CurrencyCode: b.currencyCode,
    CurrencyNumeric: b.currencyNumeric,
  };
  return stringifyWire({ BasicInfo: basicInfo, PaymentInfo: new RawJson(issued.text), Status: approvedStatus() });
}

export function handleInquiry(req: IncomingRequest<'Inquiry'>, ctx: HandlerContext): string {
  const txId = req.value.BasicInfo.TransactionId;
  const rec = ctx.ledger.get(txId);
  const answer = (status: Status, issued?: Issued | null) => withPaymentInfo(issued, status);
  if (rec === undefined || rec.qr === null)
    return answer(decline(DeclineCodes.TransactionIdUnknown, 'no QR for this TransactionId'));
  const qr = rec.qr;
  // Before an approval the Inquiry names the QR (PaymentInfo composed from GenerateQR); after
  // one it may carry the approving PaymentInfo, byte for byte.
  const sent = sentPaymentInfo(req);
  if (!(qr.paymentInfoText !== null && sent === qr.paymentInfoText)) {
    const mismatch = composedMismatch(sent, qr);
    if (mismatch !== null) return answer(declinedStatus(DeclineCodes.ValidationError, mismatch));
  }
  qr.polls += 1;
  const paidInfo = (): Issued | null =>
    qr.paymentInfo && qr.paymentInfoText ? { value: qr.paymentInfo, text: qr.paymentInfoText } : null;
  switch (rec.state) {
    case 'paid':
      return approvedInquiry(req, qr, paidInfo());
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
    b.kind === 'approve-in-currency' ||
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
  rec.authorization = {
    verdict: 'Approved',
    code: null,
    message: null,
    amount: paidAmount,
    paymentInfo: issued.value,
    paymentInfoText: issued.text,
    ...(b.kind === 'approve-in-currency' ? { currencyCode: b.currencyCode } : {}),
  };
  return approvedInquiry(req, qr, issued);
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
    if (rec.flow !== 'dynamic' || rec.qr === null)
      return reject(decline(DeclineCodes.NotAllowed, 'a static QR transaction is cancelled, not voided'));
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
    // A paid QR is voided with the approving Inquiry's PaymentInfo, byte for byte
    // (docs/decisions/gateway-interface.md).
    if (!timeout && sent !== qr.paymentInfoText) {
      return reject(
        declinedStatus(
          DeclineCodes.ValidationError,
          'PaymentInfo differs from the PaymentInfo returned by the approving Inquiry (it goes back byte for byte)',
        ),
      );
    }
    if (minorOf(amount, qr.decimalPlaces) > minorOf(qr.amount, qr.decimalPlaces))
      return reject(decline(DeclineCodes.AmountLimitExceeded, `Amount ${amount} is above the QR amount ${qr.amount}`));
    const b = ctx.behaviours.decide('Void', txId, amount);
    if (b.kind === 'decline') return reject(decline(b.code, b.message ?? 'Void declined'));
    rec.state = 'voided';
    const status = accept(rec);
    return qr.paymentInfoText !== null
      ? { PaymentInfo: new RawJson(qr.paymentInfoText), Status: status }
      : { Status: status };
  });
}
