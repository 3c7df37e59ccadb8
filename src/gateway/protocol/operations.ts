/**
 * The operation table: path, request schema and response schema of every gateway operation
 * qrvend calls, and the per-operation validators built on it.
 */
import type { z } from 'zod';
import type { GatewayOperation } from '../outcome.js';
import {
  CancelRequestSchema,
  CancelResponseSchema,
  AuthorizationRequestSchema,
  AuthorizationResponseSchema,
  SettlementRequestSchema,
  SettlementResponseSchema,
  type AuthorizationRequest,
  type AuthorizationResponse,
  type CancelRequest,
  type CancelResponse,
  type SettlementRequest,
  type SettlementResponse,
} from './static-qr.js';
import {
  GenerateQRRequestSchema,
  GenerateQRResponseSchema,
  InquiryRequestSchema,
  InquiryResponseSchema,
  VoidRequestSchema,
  VoidResponseSchema,
  type GenerateQRRequest,
  type GenerateQRResponse,
  type InquiryRequest,
  type InquiryResponse,
  type VoidRequest,
  type VoidResponse,
} from './dynamic-qr.js';
import { validateWith, type ValidationResult } from './validate.js';

export const GATEWAY_OPERATIONS = [
  'Authorization',
  'Settlement',
  'Cancel',
  'GenerateQR',
  'Inquiry',
  'Void',
] as const satisfies readonly GatewayOperation[];

export interface OperationTypes {
  Authorization: { request: AuthorizationRequest; response: AuthorizationResponse };
  Settlement: { request: SettlementRequest; response: SettlementResponse };
  Cancel: { request: CancelRequest; response: CancelResponse };
  GenerateQR: { request: GenerateQRRequest; response: GenerateQRResponse };
  Inquiry: { request: InquiryRequest; response: InquiryResponse };
  Void: { request: VoidRequest; response: VoidResponse };
}

export type RequestOf<O extends GatewayOperation> = OperationTypes[O]['request'];
export type ResponseOf<O extends GatewayOperation> = OperationTypes[O]['response'];

interface OperationSpec {
  path: string;
  request: z.ZodType;
  response: z.ZodType;
}

export const OPERATIONS: Readonly<Record<GatewayOperation, OperationSpec>> = {
  Authorization: {
    path: '/Gateway/StaticQR/Authorization',
    request: AuthorizationRequestSchema,
    response: AuthorizationResponseSchema,
  },
  Settlement: {
    path: '/Gateway/StaticQR/Settlement',
    request: SettlementRequestSchema,
    response: SettlementResponseSchema,
  },
  Cancel: { path: '/Gateway/StaticQR/Cancel', request: CancelRequestSchema, response: CancelResponseSchema },
  GenerateQR: {
    path: '/Gateway/DynamicQR/GenerateQR',
    request: GenerateQRRequestSchema,
    response: GenerateQRResponseSchema,
  },
  Inquiry: { path: '/Gateway/DynamicQR/Inquiry', request: InquiryRequestSchema, response: InquiryResponseSchema },
  Void: { path: '/Gateway/DynamicQR/Void', request: VoidRequestSchema, response: VoidResponseSchema },
};

/** The operation served at `path` (exact match), or null. */
export function operationForPath(path: string): GatewayOperation | null {
  for (const op of GATEWAY_OPERATIONS) if (OPERATIONS[op].path === path) return op;
  return null;
}

export function validateRequest<O extends GatewayOperation>(op: O, body: unknown): ValidationResult<RequestOf<O>> {
  return validateWith(OPERATIONS[op].request, body) as ValidationResult<RequestOf<O>>;
}

export function validateResponse<O extends GatewayOperation>(op: O, body: unknown): ValidationResult<ResponseOf<O>> {
  return validateWith(OPERATIONS[op].response, body) as ValidationResult<ResponseOf<O>>;
}
