import { createRequire } from 'node:module';
import type Int32HistogramModule from 'hdr-histogram-js/dist/Int32Histogram.js';

/** hdr-histogram-js's 32-bit histogram, the class its build() makes by default. */
type Int32Histogram = InstanceType<typeof Int32HistogramModule.default>;

/**
 * The class itself, not the package's index: the index decodes its WebAssembly build (a base64
 * blob) when it is loaded, about 100 ms of CPU in every process that records a latency, for
 * WebAssembly histograms we never build (the class alone: about 10 ms). The file is CommonJS
 * (exports.default): require reads it as it is, without ESM interop in between.
 */
const Int32HistogramClass = (createRequire(import.meta.url)('hdr-histogram-js/dist/Int32Histogram.js') as typeof Int32HistogramModule).default;

/**
 * What `hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue, numberOfSignificantValueDigits,
 * autoResize: false })` returns (HistogramBuilder.js: bitBucketSize 32, no WebAssembly): an
 * Int32Histogram with these bounds, never resized.
 */
export function int32Histogram(highestTrackableValue: number, numberOfSignificantValueDigits: number): Int32Histogram {
  const h = new Int32HistogramClass(1, highestTrackableValue, numberOfSignificantValueDigits);
  h.autoResize = false;
  return h;
}

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
  private readonly h = int32Histogram(HIGHEST_US, 3);

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
