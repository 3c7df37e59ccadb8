/**
 * The main thread's event-loop delay for the stats line: how late the loop ran past the sampler's
 * tick. Every tick wakes the machine loop, so fine sampling is for benchmarks, not for an idle
 * machine (config log.loopDelayResolutionMs, docs/operations.md).
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export interface LoopDelayFigures {
  p50: number;
  p99: number;
  max: number;
  count: number;
  tickMs: number;
}

export class LoopDelay {
  private readonly histogram: IntervalHistogram;

  constructor(private readonly tickMs: number) {
    this.histogram = monitorEventLoopDelay({ resolution: tickMs });
    this.histogram.enable();
  }

  /** The figures since the last call; the histogram starts over. */
  takeFigures(): LoopDelayFigures {
    // The histogram holds whole intervals between the sampler's ticks: an idle loop reads the tick
    // itself (1.0-1.1 ms at 1 ms, ~100 ms in production). The delay is what is over the tick.
    const late = (ns: number) => Math.max(0, Math.round((ns / 1e6 - this.tickMs) * 100) / 100);
    const { histogram } = this;
    const figures = {
      p50: late(histogram.percentile(50)),
      p99: late(histogram.percentile(99)),
      max: late(histogram.max),
      count: histogram.count,
      tickMs: this.tickMs,
    };
    histogram.reset();
    return figures;
  }

  disable(): void {
    this.histogram.disable();
  }
}
