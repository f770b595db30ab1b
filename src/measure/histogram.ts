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
function int32Histogram(highestTrackableValue: number, numberOfSignificantValueDigits: number): Int32Histogram {
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
    this.h.recordValue(latencyUs(ms));
  }

  get count(): number {
    return this.h.totalCount;
  }

  summary(): LatencySummary {
    return summaryOf(this.h, Math.min(this.h.maxValue, HIGHEST_US), this.h.mean);
  }
}

/** A latency in ms as the histograms take it: whole µs, 1 µs to 10 min. Pure. */
function latencyUs(ms: number): number {
  return Math.min(HIGHEST_US, Math.max(1, Math.round(ms * 1000)));
}

/**
 * A run's latencies, also interval by interval (bench's sample a second): each value is recorded
 * into the run's histogram and the open interval's (3 digits both); closing the interval (take)
 * summarises it and empties it. A second record a value costs less CPU than adding the interval
 * into the run's histogram once a second: that pass over its 20,000 buckets is a loop V8 compiles
 * in every run, and a short run (50,000 messages) feels it.
 */
export class IntervalLatency {
  private readonly run = int32Histogram(HIGHEST_US, 3);
  private readonly open = int32Histogram(HIGHEST_US, 3);
  /** The open interval's exact sum and max. */
  private sumUs = 0;
  private maxUs = 0;

  recordMs(ms: number): void {
    const us = latencyUs(ms);
    this.open.recordValue(us);
    this.run.recordValue(us);
    this.sumUs += us;
    if (us > this.maxUs) this.maxUs = us;
  }

  /** The open interval's summary (its exact mean and max); then it is part of the run's, and a new one opens. */
  take(): LatencySummary {
    const h = this.open;
    const s = h.totalCount === 0 ? summaryOf(h, 0, 0) : summaryOf(h, this.maxUs, this.sumUs / h.totalCount);
    if (h.totalCount > 0) h.reset();
    this.sumUs = 0;
    this.maxUs = 0;
    return s;
  }

  /** Forget everything recorded (the mode's measurement starts). */
  clear(): void {
    this.run.reset();
    this.open.reset();
    this.sumUs = 0;
    this.maxUs = 0;
  }

  /** The whole run's summary: the intervals taken and the open one. */
  summary(): LatencySummary {
    const h = this.run;
    return summaryOf(h, Math.min(h.maxValue, HIGHEST_US), h.mean);
  }
}

/** Percentiles of a histogram, each its bucket's upper edge but never above the exact max; the mean as given. Pure. */
function summaryOf(h: Int32Histogram, maxUs: number, meanUs: number): LatencySummary {
  if (h.totalCount === 0) return { count: 0, p50Ms: null, p95Ms: null, p99Ms: null, maxMs: null, meanMs: null };
  const ms = (us: number): number => Math.round(Math.min(us, maxUs)) / 1000;
  return {
    count: h.totalCount,
    p50Ms: ms(h.getValueAtPercentile(50)),
    p95Ms: ms(h.getValueAtPercentile(95)),
    p99Ms: ms(h.getValueAtPercentile(99)),
    maxMs: ms(maxUs),
    meanMs: ms(meanUs),
  };
}
