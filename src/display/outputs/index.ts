/**
 * The configured outputs together: render a screen once into a frame laid out like the
 * framebuffer (or display.width x display.height when there is none) and hand it to the
 * framebuffer, the PNG file and the terminal.
 *
 * An output that fails is reported once (then retried quietly on each new screen, and logged when
 * it works again); it never throws out of here, so the display can never stop payments.
 */
import type { QrvendConfig } from '../../config/schema.js';
import { isQrvendError } from '../../core/errors.js';
import type { Screen } from '../../ipc/messages.js';
import { createFrame, type Frame, type FrameGeometry } from '../frame.js';
import { nextChangeInMs, screenLayout, type Layout } from '../layout.js';
import { renderLayout } from '../render.js';
import { openFramebuffer, type Framebuffer } from './framebuffer.js';
import { writePngAtomic } from './png.js';
import { layoutToTerminal } from './terminal.js';

export type OutputName = 'framebuffer' | 'png' | 'terminal';
export type DisplayConfig = QrvendConfig['display'];

export interface DisplayOutputsOptions {
  display: DisplayConfig;
  sysfsRoot?: string;
  /** Where terminal text goes (the worker writes straight to fd 1). */
  writeTerminal: (text: string) => void;
  /** Colour the terminal QR explicitly (black on white). */
  ansi?: boolean;
  /** An output stopped working; called once until it works again. */
  onUnavailable: (output: OutputName, reason: string) => void;
  onRecovered?: (output: OutputName) => void;
  /** A screen could not be drawn as asked (e.g. its QR is too large); a fallback was shown. */
  onRenderError?: (err: unknown) => void;
  now?: () => number;
}

export class DisplayOutputs {
  private fb: Framebuffer | null = null;
  private frame: Frame | null = null;
  private current: Screen | null = null;
  private readonly failing = new Set<OutputName>();
  private readonly now: () => number;

  constructor(private readonly options: DisplayOutputsOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The screen shown last. */
  get screen(): Screen | null {
    return this.current;
  }

  /** When tick() should run next (the countdown on the framebuffer), or null for never. */
  nextTickInMs(): number | null {
    if (this.current === null || this.fb === null) return null;
    return nextChangeInMs(this.current, this.now());
  }

  /** Show a new screen on every output. */
  show(screen: Screen): void {
    this.current = screen;
    const layout = this.layoutFor(screen);
    this.drawPixels(layout, true);
    if (this.options.display.terminal) {
      this.attempt('terminal', () => this.options.writeTerminal(layoutToTerminal(layout, { ansi: this.options.ansi ?? false })));
    }
  }

  /** Redraw the current screen on the framebuffer only (the countdown); the PNG and terminal keep the screen-change picture. */
  tick(): void {
    if (this.current === null || this.fb === null) return;
    this.drawPixels(this.layoutFor(this.current), false);
  }

  close(): void {
    this.fb?.close();
    this.fb = null;
  }

  private layoutFor(screen: Screen): Layout {
    return screenLayout(screen, this.now());
  }

  private drawPixels(layout: Layout, screenChanged: boolean): void {
    const { display } = this.options;
    if (display.framebuffer !== null && this.fb === null && screenChanged) {
      this.attempt('framebuffer', () => {
        this.fb = openFramebuffer(display.framebuffer!, this.options.sysfsRoot);
      });
    }
    const wantPng = screenChanged && display.png !== null;
    if (this.fb === null && !wantPng) return;
    const frame = this.frameFor(this.fb?.geometry ?? { width: display.width, height: display.height, stride: display.width * 4, format: 'xrgb8888' });
    try {
      renderLayout(frame, layout);
    } catch (err) {
      if (!isQrvendError(err)) throw err;
      this.options.onRenderError?.(err);
      renderLayout(frame, { qrText: null, headline: 'Cannot show this code', headlineColor: 0xc62828, lines: [err.message] });
    }
    if (this.fb !== null) {
      const fb = this.fb;
      const ok = this.attempt('framebuffer', () => fb.write(frame));
      if (!ok) {
        fb.close();
        this.fb = null;
      }
    }
    if (wantPng) this.attempt('png', () => writePngAtomic(display.png!, frame));
  }

  private frameFor(geometry: FrameGeometry): Frame {
    const f = this.frame;
    if (f && f.width === geometry.width && f.height === geometry.height && f.stride === geometry.stride && f.format === geometry.format) return f;
    this.frame = createFrame(geometry);
    return this.frame;
  }

  private attempt(output: OutputName, action: () => void): boolean {
    try {
      action();
    } catch (err) {
      if (!this.failing.has(output)) {
        this.failing.add(output);
        this.options.onUnavailable(output, isQrvendError(err) ? err.describe() : (err as Error).message);
      }
      return false;
    }
    if (this.failing.delete(output)) this.options.onRecovered?.(output);
    return true;
  }
}
