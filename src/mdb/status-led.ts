/**
 * The status LED as the reader and the payment worker's health call for it (docs/devices.md,
 * "What the LED says"). The reader's side is the machine loop's view: the board's polls as the
 * link watchdog sees them and the reader's state, not the port being open (src/mdb/reader-view.ts).
 */
import { statusLedStateFor, type StatusLedState } from '../device/gpio.js';
import type { MachineLoop } from './machine-loop.js';
import { readerLedOf, type ReaderView } from './reader-view.js';

export interface LedHealth {
  /** The payment side refuses sessions (ledger lost, worker failed). */
  fault: boolean;
  gatewayOnline: boolean;
  outboxPending: number;
}

export class StatusLedDriver {
  private health: LedHealth = { fault: false, gatewayOnline: true, outboxPending: 0 };
  private reader: ReaderView;

  constructor(
    loop: MachineLoop,
    private readonly led: { set(state: StatusLedState): void },
  ) {
    this.reader = loop.readerView();
    loop.on('view', (view: ReaderView) => {
      this.reader = view;
      this.update();
    });
  }

  /** The payment worker's latest health. */
  setHealth(health: LedHealth): void {
    this.health = { fault: health.fault, gatewayOnline: health.gatewayOnline, outboxPending: health.outboxPending };
    this.update();
  }

  private update(): void {
    this.led.set(statusLedStateFor({ ...this.health, reader: readerLedOf(this.reader) }));
  }
}
