/**
 * What the main thread knows of the payment side's health (the worker's `health` messages), handed
 * to the status LED's driver, which also follows the reader (docs/devices.md, the status LED).
 */
import type { PaymentToMain, ThreadMemory } from '../ipc/messages.js';

export interface PaymentHealthFigures {
  fault: boolean;
  gatewayOnline: boolean;
  outboxPending: number;
  clockSteps: number;
  starts: {
    requests: number;
    accepted: number;
    relayed: number;
    relayedTooLate: number;
    relayedDropped: number;
    relayedUnvouched: number;
  };
}

type HealthMessage = Extract<PaymentToMain, { type: 'health' }>;

export class PaymentHealth {
  figures: PaymentHealthFigures = {
    fault: false,
    gatewayOnline: true,
    outboxPending: 0,
    clockSteps: 0,
    starts: { requests: 0, accepted: 0, relayed: 0, relayedTooLate: 0, relayedDropped: 0, relayedUnvouched: 0 },
  };
  /** The payment worker's own heap, from its last `health`; null before the first. */
  paymentMemory: ThreadMemory | null = null;
  /** The status LED's driver: it also follows the reader itself (src/mdb/status-led.ts). */
  constructor(private readonly led: { setHealth(health: PaymentHealthFigures): void }) {}

  fromPayment(message: HealthMessage): void {
    this.figures = {
      ...this.figures,
      gatewayOnline: message.gatewayOnline,
      outboxPending: message.outboxPending,
      clockSteps: message.clockSteps ?? 0,
      starts: message.starts ?? this.figures.starts,
    };
    if (message.memory) this.paymentMemory = message.memory;
    this.updateLed();
  }

  /** The payment worker failed: a fault until the process ends. */
  fault(): void {
    this.figures = { ...this.figures, fault: true };
    this.updateLed();
  }

  private updateLed(): void {
    this.led.setHealth(this.figures);
  }
}
