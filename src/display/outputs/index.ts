/**
 * The configured outputs together: render a screen once into a frame laid out like the
 * framebuffer (or display.width x display.height when there is none) and hand it to the
 * framebuffer, the PNG file and the terminal. A panel mounted turned (display.rotate) gets the
 * picture laid out upright and turned into its own frame.
 *
 * The countdown tick redraws only the countdown's words and bar and writes only those rows to
 * the framebuffer.
 *
 * An output that fails is reported once (then retried quietly on each new screen, and logged when
 * it works again); it never throws out of here, so the display can never stop payments.
 */
import { isQrvendError } from '../../core/errors.js';
import type { Screen } from '../../ipc/messages.js';
import { layoutContextOf, loadLogo, type DisplayConfig, type ProductCatalog } from '../context.js';
import {
  createFrame,
  logicalGeometry,
  rotateInto,
  rotateRect,
  type Frame,
  type FrameGeometry,
  type Rect,
} from '../frame.js';
import { cannotShowLayout, nextChangeInMs, screenLayout, type Layout, type LayoutContext } from '../layout.js';
import { redrawCountdown, renderLayout, type RenderResult } from '../render.js';
import type { CanvasImage } from '../text.js';
import { openFramebuffer, type Framebuffer } from './framebuffer.js';
import { writePngAtomic } from './png.js';
import { layoutToTerminal } from './terminal.js';

export type OutputName = 'framebuffer' | 'png' | 'terminal';
export type { DisplayConfig };

export interface DisplayOutputsOptions {
  display: DisplayConfig;
  /** Product names for the dynamic QR and vending screens (config catalog). */
  catalog?: ProductCatalog;
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

interface Frames {
  panel: Frame;
  /** The upright frame screens are drawn in; the panel frame itself when not rotated. */
  logical: Frame;
}

export class DisplayOutputs {
  private fb: Framebuffer | null = null;
  private frames: Frames | null = null;
  private current: Screen | null = null;
  private drawn: RenderResult | null = null;
  private readonly failing = new Set<OutputName>();
  private readonly now: () => number;
  private context: LayoutContext;
  private logo: CanvasImage | null = null;
  /** Settles when the operator's logo is loaded (or failed to load, which was reported). */
  readonly ready: Promise<void>;

  constructor(private readonly options: DisplayOutputsOptions) {
    this.now = options.now ?? Date.now;
    this.context = layoutContextOf(options.display, options.catalog);
    const path = options.display.logo;
    this.ready =
      path === null
        ? Promise.resolve()
        : loadLogo(path).then(
            (logo) => {
              this.logo = logo;
              // A screen already up that shows the logo gets it now.
              if (this.current !== null && this.layoutFor(this.current).logo)
                this.drawPixels(this.layoutFor(this.current), true);
            },
            // A broken logo costs the logo, not the screen.
            (err: unknown) => options.onRenderError?.(err),
          );
  }

  /** The screen shown last. */
  get screen(): Screen | null {
    return this.current;
  }

  /** What the last full render drew (for tests and diagnostics). */
  get lastRender(): RenderResult | null {
    return this.drawn;
  }

  /** When tick() should run next (the countdown on the framebuffer), or null for never. */
  nextTickInMs(): number | null {
    if (this.current === null || this.fb === null) return null;
    return nextChangeInMs(this.current, this.now());
  }

  /** New product names (a catalog applied between sessions): the next screen names products by them. */
  setCatalog(catalog: ProductCatalog): void {
    this.context = { ...this.context, catalog };
  }

  /** Show a new screen on every output. */
  show(screen: Screen): void {
    this.current = screen;
    this.context.shownAtMs = this.now();
    const layout = this.layoutFor(screen);
    this.drawPixels(layout, true);
    if (this.options.display.terminal) {
      this.attempt('terminal', () =>
        this.options.writeTerminal(layoutToTerminal(layout, { ansi: this.options.ansi ?? false })),
      );
    }
  }

  /**
   * Redraw the countdown on the framebuffer only (the PNG and terminal keep the screen-change
   * picture): its words and bar are drawn again and only their rows are written.
   */
  tick(): void {
    if (this.current === null || this.fb === null) return;
    const layout = this.layoutFor(this.current);
    const place = this.drawn?.countdown;
    const frames = this.frames;
    if (!place || !frames || frames.panel.stride !== this.fb.geometry.stride) {
      this.drawPixels(layout, false);
      return;
    }
    const dirty = redrawCountdown(frames.logical, place, layout);
    const onPanel = this.toPanel(frames, dirty);
    const fb = this.fb;
    if (!this.attempt('framebuffer', () => fb.writeRows(frames.panel, onPanel.y, onPanel.h))) {
      fb.close();
      this.fb = null;
    }
  }

  close(): void {
    this.fb?.close();
    this.fb = null;
  }

  private layoutFor(screen: Screen): Layout {
    return screenLayout(screen, this.now(), this.context);
  }

  /** Turn the changed part of the logical frame onto the panel frame; returns it in panel pixels. */
  private toPanel(frames: Frames, rect: Rect): Rect {
    const rotate = this.options.display.rotate;
    if (rotate === 0) return rect;
    rotateInto(frames.panel, frames.logical, rotate, rect);
    return rotateRect(rect, frames.logical, rotate);
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
    const frames = this.framesFor(
      this.fb?.geometry ?? {
        width: display.width,
        height: display.height,
        stride: display.width * 4,
        format: 'xrgb8888',
      },
    );
    try {
      this.drawn = renderLayout(frames.logical, layout, { logo: this.logo });
    } catch (err) {
      if (!isQrvendError(err)) throw err;
      this.options.onRenderError?.(err);
      this.drawn = renderLayout(frames.logical, cannotShowLayout(this.context));
    }
    this.toPanel(frames, { x: 0, y: 0, w: frames.logical.width, h: frames.logical.height });
    if (this.fb !== null) {
      const fb = this.fb;
      const ok = this.attempt('framebuffer', () => fb.write(frames.panel));
      if (!ok) {
        fb.close();
        this.fb = null;
      }
    }
    if (wantPng) this.attempt('png', () => writePngAtomic(display.png!, frames.panel));
  }

  private framesFor(geometry: FrameGeometry): Frames {
    const f = this.frames;
    const g = f?.panel;
    if (
      f &&
      g &&
      g.width === geometry.width &&
      g.height === geometry.height &&
      g.stride === geometry.stride &&
      g.format === geometry.format
    )
      return f;
    const panel = createFrame(geometry);
    const rotate = this.options.display.rotate;
    const logical = rotate === 0 ? panel : createFrame(logicalGeometry(geometry, rotate));
    this.frames = { panel, logical };
    return this.frames;
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
