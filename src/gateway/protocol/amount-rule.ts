/**
 * The cross-object amount rule (docs/decisions/gateway-interface.md): BasicInfo.Amount and every product Price carry
 * no more decimals than MachineInfo.DecimalPlace says. Applied to each request schema that has
 * those members, so a mis-rounded amount is refused as 998 naming the member.
 */
import type { z } from 'zod';
import { hasDecimalPlaces } from './primitives.js';

interface AmountCarrier {
  BasicInfo?: { Amount?: number } | null;
  MachineInfo?: { DecimalPlace?: number | null } | null;
  Products?: ReadonlyArray<{ Price?: number }> | null;
  Product?: ReadonlyArray<{ Price?: number }> | null;
}

export function checkAmountDecimals(body: AmountCarrier, ctx: z.RefinementCtx): void {
  const dp = body.MachineInfo?.DecimalPlace;
  // zod runs refinements even after other issues; only judge amounts against a sane DecimalPlace.
  if (typeof dp !== 'number' || !Number.isInteger(dp) || dp < 0 || dp > 4) return;
  const message = `must have at most ${dp} decimal places (MachineInfo.DecimalPlace)`;
  const amountValue = body.BasicInfo?.Amount;
  if (typeof amountValue === 'number' && Number.isFinite(amountValue) && !hasDecimalPlaces(amountValue, dp)) {
    ctx.addIssue({ code: 'custom', path: ['BasicInfo', 'Amount'], message });
  }
  for (const key of ['Products', 'Product'] as const) {
    const list = body[key];
    if (!Array.isArray(list)) continue;
    list.forEach((item: { Price?: number } | null, i: number) => {
      if (typeof item?.Price === 'number' && Number.isFinite(item.Price) && !hasDecimalPlaces(item.Price, dp)) {
        ctx.addIssue({ code: 'custom', path: [key, i, 'Price'], message });
      }
    });
  }
}
