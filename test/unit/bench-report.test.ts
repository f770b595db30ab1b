import { describe, expect, it } from 'vitest';
import { CSV_HEADER, ms, renderBench, renderBenchTable, renderCsv, renderSampleLine, runNotes } from '../../src/report/kinds/bench/text.js';
import type { BenchModeResult, BenchOptions, BenchResult } from '../../src/scenarios/traffic/bench.js';
import { BENCH_OPTIONS, benchRun, benchSample, MB } from './fixtures/bench.js';
import { unwrapped } from './fixtures/text.js';
import { latency, NO_LATENCY } from './fixtures/latency.js';

const options: BenchOptions = { ...BENCH_OPTIONS, modes: ['none', 'sync', 'async'] };

const none = benchRun({
  label: 'none',
  mode: 'none',
  window: null,
  confirmed: 0,
  confirmLatency: NO_LATENCY,
  publishRatePerSec: 20_000,
  consumeRatePerSec: 8_000,
});
const sync = benchRun({
  label: 'sync',
  mode: 'sync',
  window: null,
  published: 4_500,
  publishes: 4_500,
  confirmed: 4_500,
  consumed: 4_500,
  publishRatePerSec: 450,
  consumeRatePerSec: 449.6,
  confirmLatency: latency(2.1, 3.5, 6, 40),
});
const asyncRun = benchRun();

function result(overrides: Partial<BenchResult> = {}): BenchResult {
  return { options, startedAtIso: '2026-01-01T00:00:00.000Z', runs: [none, sync, asyncRun], interrupted: false, processPeakRssBytes: 120 * MB, ...overrides };
}

describe('ms', () => {
  it.each([
    [null, '-'],
    [undefined, '-'],
    [0.123, '0.12'],
    [9.999, '10.00'],
    [12.34, '12.3'],
    [99.94, '99.9'],
    [180.6, '181'],
  ] as const)('%s → %s', (v, expected) => {
    expect(ms(v)).toBe(expected);
  });
});

describe('renderSampleLine', () => {
  it('a confirm mode: rates per second, latencies, CPU and RSS', () => {
    expect(renderSampleLine('async/256', benchSample(), true)).toBe(
      'async/256, time 1.0 s, sent 8123 msg/s, confirmed 8100 msg/s, nacked 0, received 8050 msg/s, confirm p50/p95/p99 5.10/9.84/14.2 ms, e2e p50/p95/p99 6.00/11.5/16.0 ms, cpu 85%, rss 92.4 MB',
    );
  });

  it('mode none: no confirm figures', () => {
    expect(renderSampleLine('none', benchSample({ confirmed: 0, confirmLatency: NO_LATENCY }), false)).toBe(
      'none, time 1.0 s, sent 8123 msg/s, received 8050 msg/s, e2e p50/p95/p99 6.00/11.5/16.0 ms, cpu 85%, rss 92.4 MB',
    );
  });

  it('a short last interval: counts scaled to a second; no latency yet is "-"', () => {
    const line = renderSampleLine(
      'sync',
      benchSample({ elapsedMs: 2_500, intervalMs: 500, published: 100, confirmed: 100, consumed: 0, e2eLatency: NO_LATENCY, cpuSeconds: 0.1 }),
      true,
    );
    expect(line).toBe(
      'sync, time 2.5 s, sent 200 msg/s, confirmed 200 msg/s, nacked 0, received 0 msg/s, confirm p50/p95/p99 5.10/9.84/14.2 ms, e2e p50/p95/p99 -, cpu 20%, rss 92.4 MB',
    );
  });
});

/** The cells of the row whose first cell is `label`. */
function row(text: string, label: string): string[] {
  const line = text.split('\n').find((l) => l.startsWith(`${label}  `));
  if (line === undefined) throw new Error(`no row '${label}' in:\n${text}`);
  return line.split(/\s{2,}/);
}

describe('renderBenchTable', () => {
  const text = renderBenchTable([none, sync, asyncRun]);

  it('one column per mode, in run order', () => {
    expect(text.split('\n')[0]).toMatch(/^\s+none\s+sync\s+async\/256$/);
  });

  const rows: [label: string, noneCell: string, syncCell: string, asyncCell: string][] = [
    ['published', '90000', '4500', '90000'],
    ['confirmed', '-', '4500', '90000'],
    ['nacked', '-', '0', '0'],
    ['consumed', '90000', '4500', '90000'],
    ['publish rate (msg/s)', '20000', '450', '9000'],
    ['consume rate (msg/s)', '8000', '450', '8951'],
    ['confirm p50 (ms)', '-', '2.10', '5.12'],
    ['confirm p95 (ms)', '-', '3.50', '12.3'],
    ['confirm p99 (ms)', '-', '6.00', '25.6'],
    ['confirm max (ms)', '-', '40.0', '180'],
    ['end-to-end p50 (ms)', '7.00', '7.00', '7.00'],
    ['end-to-end p95 (ms)', '15.0', '15.0', '15.0'],
    ['end-to-end p99 (ms)', '30.0', '30.0', '30.0'],
    ['end-to-end max (ms)', '210', '210', '210'],
    ['client CPU (s)', '5.43', '5.43', '5.43'],
    ['client CPU (% of a core)', '53', '53', '53'],
    ['client CPU per msg (µs)', '60', '60', '60'],
    ['client peak RSS (MB)', '118.3', '118.3', '118.3'],
  ];

  it.each(rows)('%s', (label, ...cells) => {
    expect(row(text, label)).toEqual([label, ...cells]);
  });

  it('exactly these rows, numbers right-aligned', () => {
    const lines = text.split('\n');
    expect(lines).toHaveLength(2 + rows.length);
    expect(new Set(lines.map((l) => l.length)).size).toBe(1);
  });

  it('without consumers: consumed and consume rate are "-"; no latency yet is "-"', () => {
    const t = renderBenchTable([
      benchRun({ consumers: 0, consumed: 0, consumeRatePerSec: null, e2eLatency: NO_LATENCY, publishRatePerSec: null, cpuUsPerMessage: null }),
    ]);
    expect(row(t, 'consumed')).toEqual(['consumed', '-']);
    expect(row(t, 'consume rate (msg/s)')).toEqual(['consume rate (msg/s)', '-']);
    expect(row(t, 'end-to-end p50 (ms)')).toEqual(['end-to-end p50 (ms)', '-']);
    expect(row(t, 'publish rate (msg/s)')).toEqual(['publish rate (msg/s)', '-']);
    expect(row(t, 'client CPU per msg (µs)')).toEqual(['client CPU per msg (µs)', '-']);
  });
});

describe('runNotes', () => {
  const cases: { name: string; run: BenchModeResult; expected: string[] }[] = [
    { name: 'a clean run: none', run: asyncRun, expected: [] },
    { name: 'mode none is never "not confirmed"', run: none, expected: [] },
    {
      name: 'interrupted',
      run: benchRun({ stoppedBy: 'interrupted', drained: null, confirmed: 80_000, durationMs: 4_200 }),
      expected: ['async/256: interrupted after 4.20 s: its figures are what was measured until Ctrl+C'],
    },
    {
      name: 'consumers did not catch up',
      run: benchRun({ drained: false, consumed: 85_000 }),
      expected: ['async/256: consumers read 85000 of 90000 messages before the drain timeout; the rest went with the queue'],
    },
    {
      name: 'not all confirmed, and gave up',
      run: benchRun({ stoppedBy: 'gave-up', gaveUp: 'no broker answered within 10000 ms', confirmed: 89_990, nacked: 4, indeterminate: 6 }),
      expected: ['async/256: gave up: no broker answered within 10000 ms', 'async/256: 10 of 90000 messages not confirmed (4 nacked, 6 indeterminate)'],
    },
  ];

  it.each(cases)('$name', ({ run: r, expected }) => {
    expect(runNotes(r)).toEqual(expected);
  });
});

describe('renderBench', () => {
  it('heading: producers, consumers, size, rate, bound', () => {
    expect(unwrapped(renderBench(result())).split('\n')[0]).toBe(
      'bench: 1 producer, 1 consumer (prefetch 100, ack every 1); 100-byte persistent messages, as fast as possible, into a fresh quorum queue per mode; each mode publishes for 10.0 s',
    );
    const o = { ...options, producers: 2, consumers: 0, ratePerSec: 500, durationMs: undefined, count: 5_000, sizeBytes: 1_024 };
    expect(unwrapped(renderBench(result({ options: o }))).split('\n')[0]).toBe(
      'bench: 2 producers, no consumer; 1024-byte persistent messages, 500 msg/s per producer, into a fresh quorum queue per mode; each mode publishes for 5000 messages per producer',
    );
    const both = { ...options, consumers: 3, prefetch: 0, ackEvery: 10, count: 1_000 };
    expect(unwrapped(renderBench(result({ options: both }))).split('\n')[0]).toContain('3 consumers (prefetch unlimited, ack every 10)');
    expect(unwrapped(renderBench(result({ options: both }))).split('\n')[0]).toMatch(/publishes for 10\.0 s or 1000 messages per producer$/);
  });

  it('the table, the legend, the CPU note', () => {
    const text = unwrapped(renderBench(result()));
    expect(text).toContain(renderBenchTable([none, sync, asyncRun]));
    expect(text).toContain('none: no confirms, so its publish rate is what the client handed to the socket; tx/N: a commit every N messages');
    expect(text).toContain('batch/N: waits for the confirms every N; async/W: at most W unconfirmed.');
    expect(text.split('\n').at(-1)).toBe(
      'Client CPU and RSS are this process’s: the producers and the consumers run in it, with their bookkeeping. CPU per msg: from the first message written to the last one confirmed (or consumed, if later); connecting and closing are left out.',
    );
  });

  it('interrupted: the run’s note, then that later modes were not run', () => {
    const cut = benchRun({ stoppedBy: 'interrupted', drained: null, durationMs: 1_500 });
    const lines = renderBench(result({ runs: [none, cut], interrupted: true })).split('\n');
    expect(lines.slice(-2)).toEqual([
      'async/256: interrupted after 1.50 s: its figures are what was measured until Ctrl+C',
      'interrupted: the modes after the last one shown were not run',
    ]);
  });

  it('nothing measured', () => {
    expect(renderBench(result({ runs: [], interrupted: true }))).toContain('no mode was measured');
  });
});

describe('renderCsv', () => {
  const lines = renderCsv([sync, asyncRun]).trimEnd().split('\n');

  it('a header, then one row per sample per mode', () => {
    expect(lines[0]).toBe(CSV_HEADER.join(','));
    expect(lines).toHaveLength(1 + sync.samples.length + asyncRun.samples.length);
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(['sync', 'sync', 'sync', 'async/256', 'async/256', 'async/256']);
    expect(lines.every((l) => l.split(',').length === CSV_HEADER.length)).toBe(true);
  });

  it('values: counts, rates per second, latencies in ms, CPU s, RSS MB; empty when unknown', () => {
    const [first, , last] = lines.slice(1).map((l) => Object.fromEntries(l.split(',').map((v, i) => [CSV_HEADER[i]!, v])));
    expect(first).toEqual({
      mode: 'sync',
      second: '1',
      elapsed_s: '1',
      interval_s: '1',
      published: '8123',
      confirmed: '8100',
      nacked: '0',
      consumed: '8050',
      publish_rate: '8123',
      confirm_rate: '8100',
      consume_rate: '8050',
      confirm_p50_ms: '5.1',
      confirm_p95_ms: '9.84',
      confirm_p99_ms: '14.2',
      e2e_p50_ms: '6.004',
      e2e_p95_ms: '11.5',
      e2e_p99_ms: '16',
      cpu_s: '0.85',
      rss_mb: '92.4',
    });
    expect(last).toMatchObject({
      second: '3',
      elapsed_s: '2.5',
      interval_s: '0.5',
      published: '0',
      publish_rate: '0',
      confirm_rate: '20',
      consume_rate: '120',
    });
    const empty = renderCsv([benchRun({ samples: [benchSample({ confirmLatency: NO_LATENCY, intervalMs: 0 })] })])
      .trimEnd()
      .split('\n')[1]!
      .split(',');
    expect(empty[CSV_HEADER.indexOf('confirm_p50_ms')]).toBe('');
    expect(empty[CSV_HEADER.indexOf('publish_rate')]).toBe('');
  });

  it('no runs: the header only', () => {
    expect(renderCsv([])).toBe(`${CSV_HEADER.join(',')}\n`);
  });
});
