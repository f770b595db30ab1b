import { InvalidArgumentError } from 'commander';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { metricsPort } from '../../src/cli/metrics-option.js';
import { benchMetrics, chaosMetrics, type ChaosMetricsSample, serveMetrics } from '../../src/measure/metrics-export.js';
import type { BenchSample } from '../../src/measure/meter.js';
import { PortTakenError } from '../../src/errors.js';

/** `name{labels} value` lines of a registry's text, as a map (comments left out). */
async function values(registry: Registry): Promise<Map<string, number>> {
  const text = await registry.metrics();
  return new Map(
    text
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#'))
      .map((l) => {
        const at = l.lastIndexOf(' ');
        return [l.slice(0, at), Number(l.slice(at + 1))] as const;
      }),
  );
}

const latency = (p50Ms: number | null, p99Ms: number | null) => ({ count: p50Ms === null ? 0 : 10, p50Ms, p95Ms: p99Ms, p99Ms, maxMs: p99Ms, meanMs: p50Ms });
const sample = (s: Partial<BenchSample>): BenchSample => ({
  second: 1,
  elapsedMs: 1_000,
  intervalMs: 1_000,
  published: 0,
  confirmed: 0,
  nacked: 0,
  consumed: 0,
  confirmLatency: latency(null, null),
  e2eLatency: latency(null, null),
  cpuSeconds: 0,
  rssBytes: 0,
  ...s,
});

describe('bench metrics: each second added to its run, latency quantiles in seconds', () => {
  const cases: { name: string; feed: [string, Partial<BenchSample>][]; expected: Record<string, number | undefined> }[] = [
    {
      name: 'two seconds of one run add up',
      feed: [
        ['async/256', { published: 100, confirmed: 90, consumed: 80 }],
        ['async/256', { published: 50, confirmed: 60, nacked: 2, consumed: 70 }],
      ],
      expected: {
        'rmq_bench_published_messages_total{run="async/256"}': 150,
        'rmq_bench_confirmed_messages_total{run="async/256"}': 150,
        'rmq_bench_nacked_messages_total{run="async/256"}': 2,
        'rmq_bench_consumed_messages_total{run="async/256"}': 150,
      },
    },
    {
      name: 'runs apart by their label',
      feed: [
        ['none', { published: 10 }],
        ['sync', { published: 3 }],
      ],
      expected: { 'rmq_bench_published_messages_total{run="none"}': 10, 'rmq_bench_published_messages_total{run="sync"}': 3 },
    },
    {
      name: 'latency: the last second, ms to s; a second without any leaves the gauge as it was',
      feed: [
        ['async/256', { confirmLatency: latency(20, 250), e2eLatency: latency(30, 400) }],
        ['async/256', { confirmLatency: latency(null, null) }],
      ],
      expected: {
        'rmq_bench_confirm_latency_seconds{run="async/256",quantile="0.5"}': 0.02,
        'rmq_bench_confirm_latency_seconds{run="async/256",quantile="0.99"}': 0.25,
        'rmq_bench_end_to_end_latency_seconds{run="async/256",quantile="0.99"}': 0.4,
      },
    },
  ];
  it.each(cases)('$name', async ({ feed, expected }) => {
    const registry = new Registry();
    const onSample = benchMetrics(registry);
    for (const [run, s] of feed) onSample(run, sample(s));
    const got = await values(registry);
    for (const [k, v] of Object.entries(expected)) expect(got.get(k), k).toBe(v);
  });
});

describe('chaos metrics: cumulative samples become counters; the fault on now a gauge', () => {
  const live = (s: Partial<ChaosMetricsSample>): ChaosMetricsSample => ({
    written: 0,
    confirmed: 0,
    consumed: 0,
    inFlight: 0,
    controlWritten: null,
    faultKind: null,
    ...s,
  });
  const cases: { name: string; feed: Partial<ChaosMetricsSample>[]; expected: Record<string, number | undefined> }[] = [
    {
      name: 'cumulative totals count once',
      feed: [
        { written: 100, confirmed: 90, consumed: 80, inFlight: 10 },
        { written: 250, confirmed: 240, consumed: 200, inFlight: 4 },
      ],
      expected: {
        rmq_bench_chaos_written_messages_total: 250,
        rmq_bench_chaos_confirmed_messages_total: 240,
        rmq_bench_chaos_consumed_messages_total: 200,
        rmq_bench_chaos_in_flight_messages: 4,
      },
    },
    {
      name: 'a total never goes back (a counter only rises)',
      feed: [{ written: 100 }, { written: 90 }, { written: 120 }],
      expected: { rmq_bench_chaos_written_messages_total: 120 },
    },
    {
      name: 'the fault on now is 1, the one before back to 0',
      feed: [{ faultKind: 'kill' }, { faultKind: null }, { faultKind: 'pause' }],
      expected: { 'rmq_bench_chaos_fault_active{kind="kill"}': 0, 'rmq_bench_chaos_fault_active{kind="pause"}': 1 },
    },
    {
      name: 'the control producer, when there is one',
      feed: [{ controlWritten: 40 }, { controlWritten: 70 }],
      expected: { rmq_bench_chaos_control_written_messages_total: 70 },
    },
  ];
  it.each(cases)('$name', async ({ feed, expected }) => {
    const registry = new Registry();
    const onLive = chaosMetrics(registry);
    for (const s of feed) onLive(live(s));
    const got = await values(registry);
    for (const [k, v] of Object.entries(expected)) expect(got.get(k), k).toBe(v);
  });
});

describe('--metrics-port', () => {
  it.each([
    ['9464', 9464],
    ['0', 0],
    [' 65535 ', 65535],
  ])('%j is port %d', (arg, port) => expect(metricsPort(arg)).toBe(port));
  it.each(['65536', '-1', 'http', '94.6', ''])('%j is refused', (arg) => expect(() => metricsPort(arg)).toThrow(InvalidArgumentError));

  it('serves /metrics on loopback, 404 elsewhere; a port in use is PortTakenError', async () => {
    const registry = new Registry();
    benchMetrics(registry)('none', sample({ published: 7 }));
    const server = await serveMetrics(registry, 0);
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const res = await fetch(server.url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain');
      expect(await res.text()).toContain('rmq_bench_published_messages_total{run="none"} 7');
      expect((await fetch(server.url.replace('/metrics', '/'))).status).toBe(404);
      const port = Number(new URL(server.url).port);
      await expect(serveMetrics(registry, port)).rejects.toThrow(PortTakenError);
    } finally {
      await server.close();
    }
  });
});
