import * as hdr from 'hdr-histogram-js';

/** Latency percentiles from an HDR histogram with explicit bounds (1 µs .. 10 min, 3 digits). */
export interface LatencySummary {
  count: number;
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  meanMs: number | null;
}

const HIGHEST_US = 600_000_000;

export class LatencyRecorder {
  private readonly h = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: HIGHEST_US, numberOfSignificantValueDigits: 3, autoResize: false });

  recordMs(ms: number): void {
    const us = Math.min(HIGHEST_US, Math.max(1, Math.round(ms * 1000)));
    this.h.recordValue(us);
  }

  get count(): number {
    return this.h.totalCount;
  }

  summary(): LatencySummary {
    if (this.h.totalCount === 0) return { count: 0, p50Ms: null, p95Ms: null, p99Ms: null, maxMs: null, meanMs: null };
    // A percentile is its bucket's upper edge; never report one above the exact max.
    const max = Math.min(this.h.maxValue, HIGHEST_US);
    const ms = (us: number): number => Math.round(Math.min(us, max)) / 1000;
    return {
      count: this.h.totalCount,
      p50Ms: ms(this.h.getValueAtPercentile(50)),
      p95Ms: ms(this.h.getValueAtPercentile(95)),
      p99Ms: ms(this.h.getValueAtPercentile(99)),
      maxMs: ms(max),
      meanMs: ms(this.h.mean),
    };
  }
}
