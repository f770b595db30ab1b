import { IntervalLatency, type LatencySummary } from './histogram.js';

/**
 * The bench's meters: counts, latencies, CPU and RSS of one mode, with a sample a second. Pure
 * but for the probe (time, CPU, RSS), which is injectable.
 */

/** One second of one mode (the last one may be shorter). Counts are for the interval only. */
export interface BenchSample {
  /** 1, 2, ...: the interval's number since the mode's measurement started. */
  second: number;
  /** End of the interval, ms since the mode's measurement started. */
  elapsedMs: number;
  intervalMs: number;
  published: number;
  confirmed: number;
  nacked: number;
  consumed: number;
  confirmLatency: LatencySummary;
  e2eLatency: LatencySummary;
  /** This process's CPU time (user + system) in the interval. */
  cpuSeconds: number;
  rssBytes: number;
}

/** Where time, CPU and memory come from (injectable, so that the meter is unit-tested). */
export interface Probe {
  now(): number;
  /** Process CPU time, user + system, in µs. */
  cpuMicros(): number;
  rssBytes(): number;
}

const processProbe: Probe = {
  now: () => performance.now(),
  cpuMicros: () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  },
  rssBytes: () => process.memoryUsage.rss(),
};

/** The totals a meter ends with. */
export interface MeterTotals {
  /** Distinct messages handed to the socket. */
  published: number;
  /** Broker acks (tx: messages in committed transactions); 0 in mode none. */
  confirmed: number;
  nacked: number;
  consumed: number;
  /** First message written to the last one written or confirmed. */
  publishDurationMs: number;
  publishRatePerSec: number | null;
  /** Consumed over first message written to last message consumed. */
  consumeRatePerSec: number | null;
  /** Publish to broker ack; tx: the commit round trip of each message's transaction. */
  confirmLatency: LatencySummary;
  /** Publish to delivery, from the publish time carried in each message. */
  e2eLatency: LatencySummary;
  /** This process's CPU time over the mode (producers, consumers and bookkeeping). */
  cpuSeconds: number;
  /**
   * This process's CPU time from the first message written to the end of the work (the last
   * producer's last confirm, or its last write without confirms; with consumers, the last
   * delivery if later), over the messages published. Connecting and closing are left out: they
   * cost the same whatever the count, and a plain client measured from its first publish to its
   * last confirm is compared with this figure (bench/cpu-ratio.mjs).
   */
  cpuUsPerMessage: number | null;
  /** Highest RSS sampled during the mode (once a second, and at its start and end). */
  peakRssBytes: number;
  /** Measurement time: publishing and draining. */
  durationMs: number;
  samples: BenchSample[];
}

function ratePerSec(n: number, ms: number): number | null {
  return n > 0 && ms > 0 ? (n * 1000) / ms : null;
}

/**
 * Counts, latencies, CPU and RSS of one mode, with a sample per tick. The callbacks run once per
 * message: they only count and record into histograms.
 */
export class ModeMeter {
  published = 0;
  confirmed = 0;
  nacked = 0;
  consumed = 0;
  private readonly confirmLatency = new IntervalLatency();
  private readonly e2eLatency = new IntervalLatency();
  private startAt: number;
  private cpuAtStart: number;
  private firstPublishAt: number | undefined;
  /** CPU at the first message written, and when the work ended (workEnded). */
  private cpuAtFirstWrite: number | undefined;
  private cpuAtWorkEnd: number | undefined;
  /** Publishing has ended and the work ends with the delivery of the last message published. */
  private awaitingConsumed = false;
  private lastPublishAt = 0;
  private lastConsumedAt = 0;
  private peakRss: number;
  private readonly samples: BenchSample[] = [];
  private interval = this.freshInterval(0, 0);

  constructor(private readonly probe: Probe = processProbe) {
    this.startAt = probe.now();
    this.cpuAtStart = probe.cpuMicros();
    this.peakRss = probe.rssBytes();
  }

  /** Measurement starts now (after the consumers are subscribed, before the producers start). */
  start(): void {
    this.startAt = this.probe.now();
    this.cpuAtStart = this.probe.cpuMicros();
    this.peakRss = Math.max(this.peakRss, this.probe.rssBytes());
    this.interval = this.freshInterval(this.startAt, this.cpuAtStart);
    // What was recorded before the start is not the mode's: it goes into no interval.
    this.confirmLatency.clear();
    this.e2eLatency.clear();
  }

  private freshInterval(at: number, cpu: number) {
    return { at, cpu, published: 0, confirmed: 0, nacked: 0, consumed: 0 };
  }

  /** at: now, when the caller has read the clock already. */
  onWritten(at?: number): void {
    const t = at ?? this.probe.now();
    if (this.firstPublishAt === undefined) {
      this.firstPublishAt = t;
      this.cpuAtFirstWrite = this.probe.cpuMicros();
    }
    this.lastPublishAt = t;
    this.published++;
    this.interval.published++;
  }

  onConfirm(latencyMs: number | undefined, at?: number): void {
    this.lastPublishAt = at ?? this.probe.now();
    this.confirmed++;
    this.interval.confirmed++;
    if (latencyMs !== undefined) this.confirmLatency.recordMs(latencyMs);
  }

  onNack(): void {
    this.nacked++;
    this.interval.nacked++;
  }

  onConsumed(e2eMs: number | undefined): void {
    this.lastConsumedAt = this.probe.now();
    this.consumed++;
    this.interval.consumed++;
    if (e2eMs !== undefined && e2eMs >= 0) this.e2eLatency.recordMs(e2eMs);
    if (this.awaitingConsumed && this.consumed >= this.published) this.endWork();
  }

  /**
   * Every producer's publishing has ended (its last confirm, or its last write without confirms),
   * before the connections close. The work (cpuUsPerMessage) ends now, or with consumers at the
   * delivery that makes as many consumed as published.
   */
  publishingEnded(consumers: boolean): void {
    if (consumers && this.consumed < this.published) this.awaitingConsumed = true;
    else this.endWork();
  }

  private endWork(): void {
    this.awaitingConsumed = false;
    this.cpuAtWorkEnd = this.probe.cpuMicros();
  }

  /** Close the current interval: its sample. */
  tick(): BenchSample {
    const now = this.probe.now();
    const cpu = this.probe.cpuMicros();
    const rss = this.probe.rssBytes();
    this.peakRss = Math.max(this.peakRss, rss);
    const iv = this.interval;
    const sample: BenchSample = {
      second: this.samples.length + 1,
      elapsedMs: now - this.startAt,
      intervalMs: now - iv.at,
      published: iv.published,
      confirmed: iv.confirmed,
      nacked: iv.nacked,
      consumed: iv.consumed,
      confirmLatency: this.confirmLatency.take(),
      e2eLatency: this.e2eLatency.take(),
      cpuSeconds: (cpu - iv.cpu) / 1e6,
      rssBytes: rss,
    };
    this.samples.push(sample);
    this.interval = this.freshInterval(now, cpu);
    return sample;
  }

  /** The last (partial) interval, if anything happened or time passed in it; then the totals. */
  finish(): { last: BenchSample | undefined; totals: MeterTotals } {
    const iv = this.interval;
    const busy = iv.published + iv.confirmed + iv.nacked + iv.consumed > 0;
    const last = busy || this.probe.now() - iv.at >= 100 || this.samples.length === 0 ? this.tick() : undefined;
    const end = this.interval.at;
    const cpuSeconds = (this.interval.cpu - this.cpuAtStart) / 1e6;
    // The work's CPU; a run whose work never ended (consumers that did not read everything) counts to here.
    const workCpuUs = (this.cpuAtWorkEnd ?? this.interval.cpu) - (this.cpuAtFirstWrite ?? this.cpuAtStart);
    const from = this.firstPublishAt;
    const publishDurationMs = from === undefined ? 0 : this.lastPublishAt - from;
    return {
      last,
      totals: {
        published: this.published,
        confirmed: this.confirmed,
        nacked: this.nacked,
        consumed: this.consumed,
        publishDurationMs,
        publishRatePerSec: ratePerSec(this.published, publishDurationMs),
        consumeRatePerSec: from === undefined ? null : ratePerSec(this.consumed, this.lastConsumedAt - from),
        confirmLatency: this.confirmLatency.summary(),
        e2eLatency: this.e2eLatency.summary(),
        cpuSeconds,
        cpuUsPerMessage: this.published > 0 ? workCpuUs / this.published : null,
        peakRssBytes: this.peakRss,
        durationMs: end - this.startAt,
        samples: this.samples,
      },
    };
  }
}
