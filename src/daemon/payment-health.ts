/**
 * What the main thread knows of the payment side's health (the worker's `health` messages) and of
 * the reader's link, and the status LED that shows both (docs/devices.md, the status LED).
 */
import { statusLedStateFor, type StatusLedState } from '../device/gpio.js';
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
  /** The reader's link down (no board, a dead board) is a fault the LED shows. */
  private readerLinkDown = false;

  constructor(private readonly led: { set(state: StatusLedState): void }) {}

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

  readerLink(up: boolean): void {
    this.readerLinkDown = !up;
    this.updateLed();
  }

  private updateLed(): void {
    this.led.set(statusLedStateFor({ ...this.figures, fault: this.figures.fault || this.readerLinkDown }));
  }
}
