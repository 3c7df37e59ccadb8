/**
 * The simulated gateway's decisions for valid Static QR requests (Authorization, Settlement,
 * Cancel; dynamic-handlers.ts has the Dynamic QR ones): the semantic checks a real gateway would
 * make (unknown transaction, settling a declined or cancelled authorization, an amount above
 * AuthAmount, a PaymentInfo that is not the one issued...), the behaviours, and idempotent
 * answers for repeated Settlement/Cancel. Each handler returns
 * the answer as text so that a duplicate gets the very same bytes.
 *
 * Like a strict gateway, it writes amounts with the currency's decimals (`AuthAmount":10.00`)
 * and expects every PaymentInfo it issued back byte for byte (docs/decisions/gateway-interface.md).
 */
import {
  approvedStatus,
  declinedStatus,
  DeclineCodes,
  formatGatewayDateTime,
  type Status,
} from '../../gateway/protocol/index.js';
import { decimalPlacesOf, memberText, minorOf, RawJson, stringifyWire } from '../../gateway/wire/index.js';
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

export function handleAuthorization(req: IncomingRequest<'Authorization'>, ctx: HandlerContext): string {
  const { TransactionId: txId, Amount: amount } = req.value.BasicInfo;
  if (ctx.ledger.get(txId) !== undefined) {
    ctx.ledger.conflict(txId, 'Authorization', 'Authorization for a TransactionId already in use', 'static');
    return stringifyWire({ Status: decline(DeclineCodes.NotAllowed, 'TransactionId already in use') });
  }
  const rec = ctx.ledger.create(txId, 'static', 'auth-declined');
  const b =
    amount <= 0
      ? { kind: 'decline' as const, code: DeclineCodes.InvalidAmount }
      : ctx.behaviours.decide('Authorization', txId, amount);
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
    if (rec.state === 'auth-declined')
      return reject(decline(DeclineCodes.NotAllowed, 'the Authorization was declined'));
    if (rec.state === 'cancelled') {
      ctx.ledger.conflict(txId, 'Settlement', 'Settlement after an accepted Cancel', 'static');
      return reject(decline(DeclineCodes.NotAllowed, 'the transaction was already cancelled'));
    }
    if (sentPaymentInfo(req) !== rec.authorization.paymentInfoText) {
      return reject(
        declinedStatus(
          DeclineCodes.ValidationError,
          'PaymentInfo differs from the PaymentInfo returned by Authorization (it goes back byte for byte)',
        ),
      );
    }
    const dp = decimalPlacesOf(req.value);
    if (minorOf(amount, dp) > minorOf(rec.authorization.amount, dp)) {
      return reject(
        decline(DeclineCodes.AmountLimitExceeded, `Amount ${amount} is above AuthAmount ${rec.authorization.amount}`),
      );
    }
    const products = req.value.Products ?? [];
    if (products.length > 0) {
      const totalMinor = products.reduce((sum, p) => sum + minorOf(p.Price, dp), 0);
      if (totalMinor !== minorOf(amount, dp))
        return reject(decline(DeclineCodes.InvalidAmount, `Products total differs from Amount ${amount}`));
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
      if (!timeout)
        return { Status: decline(DeclineCodes.TransactionIdUnknown, 'no Authorization for this TransactionId') };
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
      const status = declinedStatus(
        DeclineCodes.ValidationError,
        'PaymentInfo differs from the PaymentInfo returned by Authorization (it goes back byte for byte)',
      );
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
