import { describe, expect, it } from 'vitest';
import { IntervalLatency, LatencyRecorder } from '../../src/measure/histogram.js';
import { ModeMeter, type Probe } from '../../src/measure/meter.js';
import { endToEndMs } from '../../src/measure/published-at.js';
import { benchRuns } from '../../src/scenarios/traffic/bench.js';

describe('benchRuns', () => {
  const cases: {
    name: string;
    modes: Parameters<typeof benchRuns>[0];
    windows: number[];
    batchSize: number;
    expected: [string, string, number | null, number | null][];
  }[] = [
    {
      name: 'every mode, one window',
      modes: ['none', 'tx', 'sync', 'batch', 'async'],
      windows: [256],
      batchSize: 100,
      expected: [
        ['none', 'none', null, null],
        ['tx/100', 'tx', null, 100],
        ['sync', 'sync', null, null],
        ['batch/100', 'batch', null, 100],
        ['async/256', 'async', 256, null],
      ],
    },
    {
      name: 'async once per window, in the order given',
      modes: ['async'],
      windows: [1024, 64],
      batchSize: 100,
      expected: [
        ['async/1024', 'async', 1024, null],
        ['async/64', 'async', 64, null],
      ],
    },
    {
      name: 'the order of --mode',
      modes: ['async', 'none'],
      windows: [8],
      batchSize: 5,
      expected: [
        ['async/8', 'async', 8, null],
        ['none', 'none', null, null],
      ],
    },
    { name: 'duplicates once', modes: ['sync', 'sync'], windows: [8, 8], batchSize: 5, expected: [['sync', 'sync', null, null]] },
  ];

  it.each(cases)('$name', ({ modes, windows, batchSize, expected }) => {
    expect(benchRuns(modes, windows, batchSize).map((s) => [s.label, s.mode, s.window, s.batchSize])).toEqual(expected);
  });

  it('over both protocols: 0-9-1 first, then AMQP 1.0 without tx and batch, labelled 1.0', () => {
    expect(benchRuns(['none', 'tx', 'sync', 'batch', 'async'], [256], 100, ['amqp091', 'amqp10']).map((s) => [s.label, s.protocol])).toEqual([
      ['none', 'amqp091'],
      ['tx/100', 'amqp091'],
      ['sync', 'amqp091'],
      ['batch/100', 'amqp091'],
      ['async/256', 'amqp091'],
      ['1.0 none', 'amqp10'],
      ['1.0 sync', 'amqp10'],
      ['1.0 async/256', 'amqp10'],
    ]);
  });
});

/** A probe whose time, CPU and RSS the test sets. */
function fakeProbe(): Probe & { t: number; cpuUs: number; rss: number } {
  const p = {
    t: 1_000,
    cpuUs: 5_000_000,
    rss: 50 * 1024 * 1024,
    now: () => p.t,
    cpuMicros: () => p.cpuUs,
    rssBytes: () => p.rss,
  };
  return p;
}

describe('ModeMeter', () => {
  it('one sample per tick with the interval’s counts, CPU and RSS', () => {
    const probe = fakeProbe();
    const m = new ModeMeter(probe);
    probe.t = 2_000; // consumers subscribed: measurement starts here
    m.start();
    for (let i = 0; i < 10; i++) m.onWritten();
    for (let i = 0; i < 8; i++) m.onConfirm(2);
    m.onNack();
    for (let i = 0; i < 6; i++) m.onConsumed(3);
    probe.t = 3_000;
    probe.cpuUs += 250_000;
    probe.rss += 10 * 1024 * 1024;
    const s1 = m.tick();
    expect(s1).toMatchObject({
      second: 1,
      elapsedMs: 1_000,
      intervalMs: 1_000,
      published: 10,
      confirmed: 8,
      nacked: 1,
      consumed: 6,
      cpuSeconds: 0.25,
      rssBytes: 60 * 1024 * 1024,
    });
    expect(s1.confirmLatency.count).toBe(8);
    expect(s1.confirmLatency.p50Ms).toBeCloseTo(2, 1);
    expect(s1.e2eLatency.count).toBe(6);
    expect(s1.e2eLatency.meanMs).toBe(3);

    for (let i = 0; i < 5; i++) m.onWritten();
    probe.t = 4_000;
    probe.rss -= 20 * 1024 * 1024;
    const s2 = m.tick();
    expect(s2).toMatchObject({ second: 2, elapsedMs: 2_000, published: 5, confirmed: 0, consumed: 0, cpuSeconds: 0 });
    // Each interval's histograms start empty.
    expect(s2.confirmLatency.count).toBe(0);
    expect(s2.confirmLatency.p50Ms).toBeNull();
  });

  it('totals: rates from the first write, CPU per message, peak RSS, the last partial interval', () => {
    const probe = fakeProbe();
    const m = new ModeMeter(probe);
    probe.t = 10_000;
    m.start();
    probe.t = 10_050; // producer connected: first write
    for (let i = 0; i < 1_000; i++) m.onWritten();
    probe.t = 11_000;
    probe.rss = 80 * 1024 * 1024;
    m.tick();
    probe.rss = 60 * 1024 * 1024;
    probe.t = 12_050; // last confirm: publishing took 2 s
    for (let i = 0; i < 1_000; i++) m.onConfirm(5);
    probe.t = 12_550; // last delivery: 2.5 s after the first write
    for (let i = 0; i < 1_000; i++) m.onConsumed(10);
    probe.t = 12_600;
    probe.cpuUs += 100_000;
    const { last, totals } = m.finish();
    expect(last).toMatchObject({ second: 2, confirmed: 1_000, consumed: 1_000, intervalMs: 1_600 });
    expect(totals).toMatchObject({
      published: 1_000,
      confirmed: 1_000,
      consumed: 1_000,
      publishDurationMs: 2_000,
      publishRatePerSec: 500,
      consumeRatePerSec: 400,
      cpuSeconds: 0.1,
      cpuUsPerMessage: 100,
      peakRssBytes: 80 * 1024 * 1024,
      durationMs: 2_600,
    });
    expect(totals.samples.map((s) => s.second)).toEqual([1, 2]);
    expect(totals.samples.reduce((a, s) => a + s.published, 0)).toBe(1_000);
    expect(totals.confirmLatency.count).toBe(1_000);
    expect(totals.e2eLatency.p99Ms).toBeCloseTo(10, 1);
  });

  it('CPU per message: from the first write to the end of the work, connecting and closing left out', () => {
    const probe = fakeProbe();
    const m = new ModeMeter(probe);
    m.start();
    probe.cpuUs += 40_000; // the producer connects
    for (let i = 0; i < 100; i++) m.onWritten();
    probe.cpuUs += 2_000;
    for (let i = 0; i < 100; i++) m.onConfirm(1);
    m.publishingEnded(false);
    probe.cpuUs += 7_000; // the channel and the connection close
    const { totals } = m.finish();
    expect(totals.cpuSeconds).toBeCloseTo(0.049, 9);
    expect(totals.cpuUsPerMessage).toBe(20);
  });

  it('CPU per message with consumers: the work ends at the delivery that makes consumed reach published', () => {
    const probe = fakeProbe();
    const m = new ModeMeter(probe);
    m.start();
    for (let i = 0; i < 10; i++) m.onWritten();
    probe.cpuUs += 500;
    for (let i = 0; i < 4; i++) m.onConsumed(1);
    m.publishingEnded(true);
    probe.cpuUs += 500;
    for (let i = 0; i < 6; i++) m.onConsumed(1);
    probe.cpuUs += 3_000; // draining stops, the consumers close
    m.onConsumed(1); // a duplicate after the end
    expect(m.finish().totals.cpuUsPerMessage).toBe(100);
  });

  it('CPU per message when the consumers never read everything: to the end of the mode', () => {
    const probe = fakeProbe();
    const m = new ModeMeter(probe);
    m.start();
    for (let i = 0; i < 10; i++) m.onWritten();
    m.publishingEnded(true);
    probe.cpuUs += 1_000;
    expect(m.finish().totals.cpuUsPerMessage).toBe(100);
  });

  it('nothing published: no rates, no CPU per message, one sample', () => {
    const probe = fakeProbe();
    const m = new ModeMeter(probe);
    m.start();
    const { last, totals } = m.finish();
    expect(last?.second).toBe(1);
    expect(totals).toMatchObject({ published: 0, publishRatePerSec: null, consumeRatePerSec: null, cpuUsPerMessage: null, publishDurationMs: 0 });
  });

  it('finish right after a tick with nothing new: no empty extra sample', () => {
    const probe = fakeProbe();
    const m = new ModeMeter(probe);
    m.start();
    m.onWritten();
    probe.t += 1_000;
    m.tick();
    probe.t += 10;
    expect(m.finish().last).toBeUndefined();
  });

  it('an ack without a known latency counts, but records no latency', () => {
    const m = new ModeMeter(fakeProbe());
    m.start();
    m.onConfirm(undefined);
    const { totals } = m.finish();
    expect(totals.confirmed).toBe(1);
    expect(totals.confirmLatency.count).toBe(0);
  });
});

describe('IntervalLatency: each value recorded into the run and the open interval; an interval emptied at its end', () => {
  it('percentiles within 3 digits, the exact mean and max of the interval, then empty; the run has every interval and the open one', () => {
    const l = new IntervalLatency();
    for (let i = 1; i <= 100; i++) l.recordMs(i);
    const s = l.take();
    expect(s.count).toBe(100);
    expect(s.p50Ms! / 50).toBeCloseTo(1, 2);
    expect(s.p99Ms! / 99).toBeCloseTo(1, 2);
    expect(s.maxMs).toBe(100);
    expect(s.meanMs).toBe(50.5);
    expect(l.take()).toEqual({ count: 0, p50Ms: null, p95Ms: null, p99Ms: null, maxMs: null, meanMs: null });
    for (const ms of [200, 300]) l.recordMs(ms);
    expect(l.summary()).toMatchObject({ count: 102, maxMs: 300 });
    expect(l.take()).toMatchObject({ count: 2, maxMs: 300, meanMs: 250 });
    expect(l.summary()).toMatchObject({ count: 102, maxMs: 300 });
    l.clear();
    expect(l.summary().count).toBe(0);
  });

  it('the run’s percentiles are those of one histogram of every value (a LatencyRecorder)', () => {
    const l = new IntervalLatency();
    const r = new LatencyRecorder();
    for (let i = 0; i < 5000; i++) {
      const ms = ((i * 7919) % 1000) / 10 + 0.5;
      l.recordMs(ms);
      r.recordMs(ms);
      if (i % 700 === 0) l.take();
    }
    expect(l.summary()).toEqual(r.summary());
  });

  it('values beyond 10 min are clamped, not lost', () => {
    const l = new IntervalLatency();
    l.recordMs(1_200_000);
    expect(l.take()).toMatchObject({ count: 1, maxMs: 600_000 });
  });
});

describe('endToEndMs', () => {
  const at = (v: unknown) => ({ properties: { headers: { 'x-rmq-bench-published-at-us': v } } }) as unknown as Parameters<typeof endToEndMs>[0];
  it.each([
    { name: 'a number of µs', msg: at(1_000_000), now: 1_004_500, expected: 4.5 },
    { name: 'a bigint (AMQP long)', msg: at(1_000_000n), now: 1_001_000, expected: 1 },
    { name: 'no header', msg: at(undefined), now: 1, expected: undefined },
    { name: 'not a number', msg: at('soon'), now: 1, expected: undefined },
    { name: 'no headers at all', msg: { properties: {} } as Parameters<typeof endToEndMs>[0], now: 1, expected: undefined },
  ])('$name', ({ msg, now, expected }) => {
    expect(endToEndMs(msg, now)).toBe(expected);
  });
});
