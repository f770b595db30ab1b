import { describe, expect, it } from 'vitest';
import { checkQueueSpread, queuesText } from '../../src/cli/commands/bench.js';
import { UsageError } from '../../src/errors.js';
import { mismatchText, shapeMismatches } from '../../src/report/doc-shape.js';
import { benchCharts } from '../../src/report/kinds/bench/charts.js';
import { leaderText, renderBench, renderPerQueue, renderQueueTable, runNotes } from '../../src/report/kinds/bench/text.js';
import { urlsFrom, vhostOf } from '../../src/scenarios/traffic/bench-queues.js';
import { ModeMeter } from '../../src/measure/meter.js';
import { type BenchQueueRow, benchQueueNames, clientsPerQueue, onlyQueueRow, QueueMeter, queueOfClient } from '../../src/scenarios/traffic/bench-spread.js';
import type { BenchModeResult, BenchResult } from '../../src/scenarios/traffic/bench.js';
import { BENCH_OPTIONS, benchRun, MB } from './fixtures/bench.js';
import { tableRow, unwrapped } from './fixtures/text.js';
import { latency, NO_LATENCY } from './fixtures/latency.js';

/** bench --queues: the spread of clients over queues, each queue's figures, and how they are printed. */

describe('the spread of producers and consumers over the queues (round-robin)', () => {
  it.each([
    // clients, queues, the queue of each client, clients per queue
    [1, 1, [0], [1]],
    [3, 3, [0, 1, 2], [1, 1, 1]],
    [4, 3, [0, 1, 2, 0], [2, 1, 1]],
    [5, 3, [0, 1, 2, 0, 1], [2, 2, 1]],
    [6, 3, [0, 1, 2, 0, 1, 2], [2, 2, 2]],
    [7, 2, [0, 1, 0, 1, 0, 1, 0], [4, 3]],
    [0, 3, [], [0, 0, 0]],
    [2, 5, [0, 1], [1, 1, 0, 0, 0]],
  ] as const)('%i clients over %i queues', (clients, queues, queueOf, perQueue) => {
    expect(Array.from({ length: clients }, (_, i) => queueOfClient(i, queues))).toEqual(queueOf);
    expect(clientsPerQueue(clients, queues)).toEqual(perQueue);
    expect(clientsPerQueue(clients, queues).reduce((a, n) => a + n, 0)).toBe(clients);
  });
});

describe('benchQueueNames', () => {
  it.each([
    ['async/256', 1, ['bench-async256-k3x9q']],
    ['async/256', 3, ['bench-async256-k3x9q-1', 'bench-async256-k3x9q-2', 'bench-async256-k3x9q-3']],
    ['1.0 none', 2, ['bench-amqp10-none-k3x9q-1', 'bench-amqp10-none-k3x9q-2']],
    ['tx/100', 1, ['bench-tx100-k3x9q']],
  ] as const)('%s, %i queue(s)', (label, queues, names) => {
    expect(benchQueueNames(label, queues, 'k3x9q')).toEqual(names);
  });
});

describe('checkQueueSpread: every queue needs a producer, and a consumer unless -y 0', () => {
  it.each([
    [1, 1, 1],
    [3, 3, 3],
    [3, 4, 5],
    [3, 3, 0],
  ] as const)('--queues %i -x %i -y %i: accepted', (queues, producers, consumers) => {
    expect(() => checkQueueSpread(queues, producers, consumers)).not.toThrow();
  });

  it.each([
    [3, 1, 1, '--queues 3 needs a producer per queue: give -x 3 or more (-x is 1)'],
    [3, 2, 0, '--queues 3 needs a producer per queue: give -x 3 or more (-x is 2)'],
    [3, 3, 2, '--queues 3 needs a consumer per queue: give -y 3 or more, or -y 0 for none (-y is 2)'],
  ] as const)('--queues %i -x %i -y %i: refused', (queues, producers, consumers, message) => {
    expect(() => checkQueueSpread(queues, producers, consumers)).toThrow(new UsageError(message));
  });
});

describe('QueueMeter: one queue’s counts and rates over its own publishing time', () => {
  /** A meter whose clock reads the times listed, one per call. */
  function meterAt(): { meter: QueueMeter; at: (ms: number) => void } {
    let t = 0;
    return { meter: new QueueMeter({ now: () => t }), at: (ms) => (t = ms) };
  }
  const where = { queue: 'q-1', leaderAtStart: 'rabbit1', leaderAtEnd: 'rabbit1', producers: 1, consumers: 1 };

  it('nothing published: no rates, empty latency', () => {
    const { meter } = meterAt();
    expect(meter.row(where)).toEqual({
      ...where,
      published: 0,
      confirmed: 0,
      consumed: 0,
      publishRatePerSec: null,
      consumeRatePerSec: null,
      confirmLatency: NO_LATENCY,
    });
  });

  it('published over first written to last written or confirmed; consumed over first written to last consumed', () => {
    const { meter, at } = meterAt();
    at(1_000);
    meter.onWritten();
    at(1_500);
    meter.onWritten();
    meter.onConsumed();
    at(2_000);
    meter.onWritten();
    meter.onConfirm(4);
    meter.onConfirm(6);
    at(3_000);
    meter.onConfirm(8);
    meter.onConsumed();
    at(5_000);
    meter.onConsumed();
    const row = meter.row(where);
    expect(row).toMatchObject({ published: 3, confirmed: 3, consumed: 3 });
    // 3 messages over 1,000 → 3,000 ms; 3 consumed over 1,000 → 5,000 ms.
    expect(row.publishRatePerSec).toBe(1.5);
    expect(row.consumeRatePerSec).toBe(0.75);
    expect(row.confirmLatency).toMatchObject({ count: 3, maxMs: 8 });
    // An HDR histogram's bucket edge: within 0.1 ms.
    expect(row.confirmLatency.p50Ms).toBeCloseTo(6, 1);
  });

  it('the only queue of a run: its row from the run meter is the one a QueueMeter fed the same calls makes', () => {
    let t = 0;
    const now = () => t;
    const queueMeter = new QueueMeter({ now });
    const runMeter = new ModeMeter({ now, cpuMicros: () => 0, rssBytes: () => 0 });
    runMeter.start();
    const feed = (f: (m: QueueMeter | ModeMeter) => void) => {
      f(queueMeter);
      f(runMeter);
    };
    t = 1_000;
    feed((m) => m.onWritten(t));
    t = 1_500;
    feed((m) => m.onWritten(t));
    feed((m) => m.onConsumed(undefined));
    t = 2_000;
    feed((m) => m.onConfirm(4, t));
    feed((m) => m.onConfirm(6, t));
    t = 4_000;
    feed((m) => m.onConsumed(undefined));
    const { totals } = runMeter.finish();
    expect(onlyQueueRow(where, totals)).toEqual(queueMeter.row(where, totals.confirmLatency));
    expect(onlyQueueRow(where, totals)).toMatchObject({ published: 2, confirmed: 2, consumed: 2, publishRatePerSec: 2, consumeRatePerSec: 2 / 3 });
  });

  it('a confirm without a latency (tx) counts, records nothing', () => {
    const { meter, at } = meterAt();
    meter.onWritten();
    at(500);
    meter.onConfirm(undefined);
    expect(meter.row(where)).toMatchObject({ confirmed: 1, publishRatePerSec: 2, confirmLatency: { count: 0 } });
  });
});

describe('vhostOf and urlsFrom', () => {
  it.each([
    ['amqp://u:p@h:5672', '/'],
    ['amqp://u:p@h:5672/', '/'],
    ['amqp://u:p@h:5672/%2F', '/'],
    ['amqp://u:p@h:5672/orders', 'orders'],
    ['amqps://u:p@h/a%2Fb', 'a/b'],
  ] as const)('vhostOf(%s) = %s', (url, vhost) => {
    expect(vhostOf(url)).toBe(vhost);
  });

  it.each([
    [0, ['a', 'b', 'c']],
    [1, ['b', 'c', 'a']],
    [2, ['c', 'a', 'b']],
    [4, ['b', 'c', 'a']],
  ] as const)('urlsFrom(a,b,c, %i)', (start, urls) => {
    expect(urlsFrom(['a', 'b', 'c'], start)).toEqual(urls);
  });
});

describe('queuesText (the progress line)', () => {
  it.each([
    [['bench-async256-k3x9q'], ['rabbit1'], 'bench-async256-k3x9q (leader rabbit1)'],
    [['bench-async256-k3x9q'], [null], 'bench-async256-k3x9q'],
    [['bench-none-k3x9q-1', 'bench-none-k3x9q-2', 'bench-none-k3x9q-3'], ['rabbit1', 'rabbit2', null], 'bench-none-k3x9q-1..3 (leaders rabbit1, rabbit2, ?)'],
    [['bench-none-k3x9q-1', 'bench-none-k3x9q-2'], [null, null], 'bench-none-k3x9q-1..2'],
  ] as const)('%j %j', (queues, leaders, text) => {
    expect(queuesText(queues, leaders)).toBe(text);
  });
});

describe('leaderText', () => {
  it.each([
    ['rabbit2', 'rabbit2', 'rabbit2'],
    ['rabbit2', 'rabbit3', 'rabbit2, moved to rabbit3'],
    [null, null, '?'],
    ['rabbit2', null, 'rabbit2 (at the end: ?)'],
    [null, 'rabbit3', '? (at the end: rabbit3)'],
  ] as const)('%s then %s: %s', (leaderAtStart, leaderAtEnd, text) => {
    expect(leaderText({ leaderAtStart, leaderAtEnd })).toBe(text);
  });
});

/** A queue row of a three-queue async run: 30,000 messages, rabbit<n> its leader. */
function queueRow(n: number, overrides: Partial<BenchQueueRow> = {}): BenchQueueRow {
  return {
    queue: `bench-async256-abcde-${n}`,
    leaderAtStart: `rabbit${n}`,
    leaderAtEnd: `rabbit${n}`,
    producers: 1,
    consumers: 1,
    published: 30_000,
    confirmed: 30_000,
    consumed: 30_000,
    publishRatePerSec: 3_000.2,
    consumeRatePerSec: 2_990.4,
    confirmLatency: latency(5.5, 12, 24.44, 100),
    ...overrides,
  };
}

const threeQueues = benchRun({
  queue: 'bench-async256-abcde-1',
  producers: 3,
  consumers: 3,
  perQueue: [queueRow(1), queueRow(2, { leaderAtEnd: 'rabbit3' }), queueRow(3, { publishRatePerSec: 2_999.6, consumeRatePerSec: null, consumed: 0 })],
});

const row = tableRow;

describe('renderQueueTable: each queue, then all of them', () => {
  const text = renderQueueTable(threeQueues);

  it('wider than a terminal: a block per queue, then the aggregate, a line per figure', () => {
    expect(text.split('\n').slice(0, 10)).toEqual([
      'queue: bench-async256-abcde-1',
      '  leader: rabbit1',
      '  producers: 1',
      '  consumers: 1',
      '  published: 30000',
      '  consumed: 30000',
      '  publish rate (msg/s): 3000',
      '  consume rate (msg/s): 2990',
      '  confirm p50 (ms): 5.50',
      '  confirm p99 (ms): 24.4',
    ]);
    // The aggregate has no leader: its block has one line fewer.
    expect(text.split('\n')).toHaveLength(3 * 10 + 9);
  });

  it.each([
    ['bench-async256-abcde-1', ['bench-async256-abcde-1', 'rabbit1', '1', '1', '30000', '30000', '3000', '2990', '5.50', '24.4']],
    ['bench-async256-abcde-2', ['bench-async256-abcde-2', 'rabbit2, moved to rabbit3', '1', '1', '30000', '30000', '3000', '2990', '5.50', '24.4']],
    ['bench-async256-abcde-3', ['bench-async256-abcde-3', 'rabbit3', '1', '1', '30000', '0', '3000', '-', '5.50', '24.4']],
    // The run's own figures (fixtures/bench.ts: 90,000 at 9,000/s, confirm p50 5.12, p99 25.6); its leader cell is empty.
    ['all queues', ['all queues', '3', '3', '90000', '90000', '9000', '8951', '5.12', '25.6']],
  ] as const)('%s', (label, cells) => {
    expect(row(text, label)).toEqual(cells);
  });

  it('mode none: no confirm figures; -y 0: no consume figures', () => {
    const none = renderQueueTable({ ...threeQueues, mode: 'none', label: 'none', consumers: 0 });
    expect(row(none, 'bench-async256-abcde-1').slice(5)).toEqual(['-', '3000', '-', '-', '-']);
    expect(row(none, 'all queues').slice(4)).toEqual(['-', '9000', '-', '-', '-']);
  });
});

describe('renderPerQueue and the notes', () => {
  it('one queue per run: one line of leaders', () => {
    expect(renderPerQueue([benchRun({ label: 'sync' }), benchRun()])).toEqual(['', 'queue leaders: sync rabbit1, async/256 rabbit1']);
  });

  it('several: a table per run, under its label', () => {
    expect(renderPerQueue([threeQueues])).toEqual(['', 'async/256, per queue:', renderQueueTable(threeQueues)]);
  });

  it('a document from before --queues: nothing', () => {
    const old = { ...benchRun(), perQueue: undefined } as unknown as BenchModeResult;
    expect(renderPerQueue([old])).toEqual([]);
    expect(runNotes(old)).toEqual([]);
  });

  it('a leader that moved is a note; one unknown at either end is not', () => {
    expect(runNotes(threeQueues)).toEqual(['async/256: the leader of bench-async256-abcde-2 moved from rabbit2 to rabbit3 during the run']);
    expect(runNotes(benchRun({ perQueue: [queueRow(1, { leaderAtEnd: null })] }))).toEqual([]);
  });
});

describe('renderBench with --queues', () => {
  const result: BenchResult = {
    options: { ...BENCH_OPTIONS, modes: ['async'], producers: 3, consumers: 3, queues: 3 },
    startedAtIso: '2026-01-01T00:00:00.000Z',
    runs: [threeQueues],
    interrupted: false,
    processPeakRssBytes: 120 * MB,
  };
  const lines = renderBench(result).split('\n');

  it('the heading says how many queues and how the clients spread', () => {
    expect(unwrapped(lines.join('\n')).split('\n')[0]).toBe(
      'bench: 3 producers, 3 consumers (prefetch 100, ack every 1); 100-byte persistent messages, as fast as possible, into 3 fresh quorum queues per mode (leaders spread over the nodes, producers and consumers round-robin over them); each mode publishes for 10.0 s',
    );
  });

  it('the aggregate table, the per-queue table under it, the legend, then the note of the leader that moved', () => {
    const text = unwrapped(lines.join('\n'));
    expect(text.indexOf('published ')).toBeLessThan(text.indexOf('async/256, per queue:'));
    expect(text).toContain(renderQueueTable(threeQueues));
    expect(text).toContain(
      "producer and consumer i use queue i mod 3, connected to its node first. A queue's rates are over its own publishing time; 'all queues' is the aggregate.",
    );
    expect(lines.at(-1)).toBe('async/256: the leader of bench-async256-abcde-2 moved from rabbit2 to rabbit3 during the run');
  });

  it('one queue: the heading and the legend as without --queues', () => {
    const one = renderBench({ ...result, options: { ...result.options, queues: 1 }, runs: [benchRun()] });
    expect(unwrapped(one).split('\n')[0]).toContain('into a fresh quorum queue per mode;');
    expect(one).not.toContain('round-robin');
  });
});

describe('the HTML charts and the document shape', () => {
  it('several queues: a bar group per queue of each such run, its leader in the label; one queue: none', () => {
    const charts = benchCharts({ runs: [threeQueues] });
    expect(charts).toContain('<h2>Throughput per queue</h2>');
    const perQueue = charts[charts.indexOf('<h2>Throughput per queue</h2>') + 1]!;
    expect(perQueue).toContain('async/256: each queue&#39;s publish and consume rate');
    for (const label of ['1 (rabbit1)', '2 (rabbit2)', '3 (rabbit3)']) expect(perQueue).toContain(label);
    expect(benchCharts({ runs: [benchRun()] })).not.toContain('<h2>Throughput per queue</h2>');
  });

  it('perQueue is checked when present, and may be absent', () => {
    const doc = (runs: unknown[]): Record<string, unknown> => ({ kind: 'bench', runs });
    const plain = { ...benchRun(), perQueue: undefined };
    expect(shapeMismatches('bench', doc([JSON.parse(JSON.stringify(threeQueues)), plain]))).toEqual([]);
    const broken = { ...benchRun(), perQueue: [{ ...queueRow(1), leaderAtStart: 3, published: 'many' }] };
    expect(shapeMismatches('bench', doc([broken])).map(mismatchText)).toEqual([
      'runs[0].perQueue[0].leaderAtStart is a number, expected a string or null',
      'runs[0].perQueue[0].published is a string, expected a number',
    ]);
  });
});
