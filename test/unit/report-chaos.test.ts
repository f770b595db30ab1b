import { describe, expect, it } from 'vitest';
import { connections, drainLines, leadersChanged, nemesisTable, renderChaos, renderChaosLive } from '../../src/report/kinds/chaos/text.js';
import { faultBands } from '../../src/report/kinds/chaos/charts.js';
import { ratesFrom } from '../../src/report/chart-parts.js';
import { renderHtmlReport } from '../../src/report/html.js';
import { type Band, lineChart } from '../../src/report/svg.js';
import type { ChaosResult } from '../../src/scenarios/under-faults/chaos-plan.js';
import { blockLines, unwrapped } from './fixtures/text.js';
import { chaosProducer, chaosResult, faultRecord, steadySamples } from './fixtures/chaos.js';

/** The line of `text` that starts with `label` (a table row, in either form: blockLines), its cells split on 2+ spaces. */
function row(text: string, label: string): string[] {
  const line = blockLines(text)
    .split('\n')
    .find((l) => l.startsWith(label));
  expect(line, label).toBeDefined();
  return line!
    .slice(label.length)
    .trim()
    .split(/\s{2,}/);
}

const control = chaosProducer(
  4,
  [
    ['aw', 1, 1_950],
    ['aw', 0, 50],
  ],
  { confirms: false, queue: 'rmq-bench.chaos.control', connectedTo: ['rabbit3'] },
);

describe('renderChaos', () => {
  it('the header: duration, producers, consumers, queues, faults and seed', () => {
    const first = unwrapped(renderChaos(chaosResult())).split('\n')[0]!;
    expect(first).toBe(
      'chaos: 1 m 0 s, 3 producers (confirms) at 100/s each, 3 consumers, 3 quorum queues; 2 faults (kinds kill, pause, quorum-loss; one every 15.0 s, held 5.00 s), seed 42',
    );
  });

  it('the totals, without control: one column', () => {
    const text = renderChaos(chaosResult());
    const expected: [string, string[]][] = [
      ['attempted', ['6,000']],
      ['reported sent', ['6,000']],
      ['confirmed', ['6,000']],
      ['consumed', ['6,000']],
      ['lost', ['0']],
      ['silently lost', ['0']],
      ['indeterminate unread', ['0']],
      ['recovered', ['0']],
      ['duplicated', ['3']],
      ['duplicate deliveries', ['3']],
    ];
    for (const [label, cells] of expected) expect(row(text, `${label} `), label).toEqual(cells);
    expect(text).not.toContain('control');
    expect(text).toContain('the idempotent store absorbed 3 duplicate deliveries; unexpected: 0');
  });

  it('the totals with control: a second column, "-" where confirms mean nothing, and a contrast line', () => {
    const text = renderChaos(chaosResult({ control }));
    expect(text).toMatch(/^ +with confirms {2}control \(no confirms\)$/m);
    expect(row(text, 'attempted ')).toEqual(['6,000', '2,000']);
    expect(row(text, 'confirmed ')).toEqual(['6,000', '-']);
    expect(row(text, 'consumed ')).toEqual(['6,000', '1,950']);
    expect(row(text, 'lost ')).toEqual(['0', '-']);
    expect(row(text, 'silently lost ')).toEqual(['0', '50']);
    expect(text).toContain('control (no confirms): 50 of 2,000 messages silently lost, while the producer reported 2,000 as sent');
    expect(text).toContain('3 producers (confirms) + 1 control (no confirms)');
    // The control producer in the per-producer table.
    expect(row(text, '4 (control) ')).toEqual(['rmq-bench.chaos.control', 'no', '0', '0 ms', 'rabbit3', '-', '50', '0']);
  });

  it('a control producer that lost nothing says so', () => {
    const clean = chaosProducer(4, [['aw', 1, 500]], { confirms: false });
    expect(renderChaos(chaosResult({ control: clean }))).toContain('control (no confirms): no message lost this time (500 of 500 consumed)');
  });

  it('the per-producer table', () => {
    const text = renderChaos(chaosResult());
    expect(text).toMatch(/^producer {2}queue +confirms {2}reconnects {2}longest stall {2}nodes connected +lost {2}silently lost {2}duplicated$/m);
    expect(row(text, '       1 ')).toEqual(['rmq-bench.chaos.1', 'yes', '1', '4.20 s', 'rabbit1 → rabbit2', '0', '0', '0']);
    expect(row(text, '       3 ')).toEqual(['rmq-bench.chaos.3', 'yes', '0', '0 ms', 'rabbit1', '0', '0', '3']);
  });

  it('the nemesis history: times, the target as resolved, held, heal → whole, leaders changed, stall, heal → first confirm', () => {
    const text = renderChaos(chaosResult());
    expect(text).toContain('nemesis (times since the run started):');
    // held: from the fault's issue (10.00 s) to the restore (15.05 s).
    expect(row(text, '1 ')).toEqual(['10.0', 'kill', 'leader of rmq-bench.chaos.1', 'rabbit1', '5.05 s', '2.95 s', 'q.1 rabbit1→rabbit3', '4.20 s', '750 ms']);
    // Never healed: '-' for what did not happen; reason 'random' is not repeated.
    expect(row(text, '2 ')).toEqual(['30.0', 'pause', 'random', 'rabbit2', '-', '-', 'none', '0 ms', '-']);
    expect(text).not.toMatch(/ error$/m);
  });

  it('an error column only when a fault has one; a fault not applied has no nodes', () => {
    const faults = [faultRecord(), faultRecord({ index: 2, nodes: [], appliedAtMs: null, restoredAtMs: null, wholeAtMs: null, error: 'no leader found' })];
    const text = renderChaos(chaosResult({ faults }));
    expect(text).toMatch(/^ {2}error: no leader found$/m);
    expect(row(text, '2 ').at(-1)).toBe('no leader found');
    expect(row(text, '1 ')).toHaveLength(9);
  });

  it('no faults', () => {
    const text = renderChaos(chaosResult({ faults: [] }));
    expect(text).toContain('nemesis: no fault was injected');
    expect(text).toContain('verdict: OK — 0 of 6,000 confirmed messages lost over 0 faults');
  });

  it('kinds left out, one line each', () => {
    const text = renderChaos(
      chaosResult({
        overrides: {
          skippedKinds: [
            { kind: 'latency', why: "'latency' needs root on a Linux host" },
            { kind: 'partition', why: "'partition' needs nsenter" },
          ],
        },
      }),
    );
    expect(text).toContain("latency left out: 'latency' needs root on a Linux host");
    expect(text).toContain("partition left out: 'partition' needs nsenter");
  });

  it('the latency table by phase', () => {
    const text = renderChaos(chaosResult());
    expect(text).toMatch(/^phase {2}confirms {6}p50 {6}p95 {4}p99 {6}max$/m);
    expect(row(text, 'calm ')).toEqual(['5,000', '1.50 ms', '6.00 ms', '12 ms', '40 ms']);
    expect(row(text, 'kill ')).toEqual(['800', '12 ms', '48 ms', '96 ms', '4300 ms']);
  });

  it('no latency measured: no latency table', () => {
    expect(renderChaos(chaosResult({ overrides: { latency: [] } }))).not.toContain('confirm latency by phase');
  });

  it('the verdict OK, last', () => {
    const text = renderChaos(chaosResult());
    expect(text.split('\n').at(-1)).toBe('verdict: OK — 0 of 6,000 confirmed messages lost over 2 faults');
    expect(text).not.toContain('interrupted');
  });

  it('the verdict FAILED, with the reasons', () => {
    const lossy = [chaosProducer(1, [['awc', 1, 995]]), chaosProducer(2, [['awc', 0, 5]])];
    const r = chaosResult({ producers: lossy, unexpected: 2 });
    expect(r.ok).toBe(false);
    const text = renderChaos(r);
    expect(row(text, 'lost ')).toEqual(['5']);
    expect(text).toContain('unexpected: 2 (first ids: stranger-1)');
    expect(text.split('\n').slice(-3)).toEqual([
      'verdict: FAILED',
      '  5 confirmed messages lost: the broker confirmed them and no consumer ever received them',
      '  2 unexpected messages consumed: ids from no producer of this run',
    ]);
  });

  it('interrupted: said before the verdict', () => {
    const text = renderChaos(chaosResult({ overrides: { interrupted: true } }));
    expect(text.split('\n').slice(-2)).toEqual([
      'interrupted (Ctrl+C): the figures are what was measured until then',
      'verdict: OK — 0 of 6,000 confirmed messages lost over 2 faults',
    ]);
  });
});

describe('leadersChanged', () => {
  const cases: { name: string; before: Record<string, string | null>; after: Record<string, string | null>; expected: string[] }[] = [
    { name: 'nothing seen', before: {}, after: {}, expected: [] },
    { name: 'the same leaders', before: { 'rmq-bench.chaos.1': 'rabbit1' }, after: { 'rmq-bench.chaos.1': 'rabbit1' }, expected: [] },
    {
      name: 'one moved, one stayed',
      before: { 'rmq-bench.chaos.1': 'rabbit1', 'rmq-bench.chaos.2': 'rabbit1' },
      after: { 'rmq-bench.chaos.1': 'rabbit1', 'rmq-bench.chaos.2': 'rabbit3' },
      expected: ['q.2 rabbit1→rabbit3'],
    },
    { name: 'no leader after', before: { 'rmq-bench.chaos.1': 'rabbit1' }, after: { 'rmq-bench.chaos.1': null }, expected: ['q.1 rabbit1→?'] },
    { name: 'only seen after', before: {}, after: { 'rmq-bench.chaos.3': 'rabbit2' }, expected: ['q.3 ?→rabbit2'] },
    { name: 'both null: no change', before: { 'rmq-bench.chaos.1': null }, after: {}, expected: [] },
    { name: 'a queue of another prefix keeps its name', before: { other: 'rabbit1' }, after: { other: 'rabbit2' }, expected: ['other rabbit1→rabbit2'] },
  ];
  it.each(cases)('$name', ({ before, after, expected }) => {
    expect(leadersChanged({ leadersBefore: before, leadersAfter: after }, 'rmq-bench.chaos')).toEqual(expected);
  });
});

describe('nemesisTable', () => {
  it('a fault with no availability entry shows "-" for its stall', () => {
    const r = chaosResult();
    const t = nemesisTable({ ...r, availability: [] });
    expect(t.rows[0]!.slice(-2)).toEqual(['-', '-']);
  });
});

describe('renderChaosLive', () => {
  const cases: { name: string; s: Parameters<typeof renderChaosLive>[0]; expected: string }[] = [
    {
      name: 'during a fault',
      s: {
        elapsedMs: 42_700,
        durationMs: 300_000,
        written: 8_400,
        confirmed: 8_380,
        consumed: 8_300,
        inFlight: 20,
        phase: 'kill rabbit2 (holding)',
        faultKind: 'kill',
        controlWritten: null,
      },
      expected: 'chaos 42/300 s: written 8,400, confirmed 8,380, consumed 8,300, in flight 20, now: kill rabbit2 (holding)',
    },
    {
      name: 'at the start, no phase',
      s: { elapsedMs: 0, durationMs: 60_000, written: 0, confirmed: 0, consumed: 0, inFlight: 0, phase: '', faultKind: null, controlWritten: null },
      expected: 'chaos 0/60 s: written 0, confirmed 0, consumed 0, in flight 0',
    },
    {
      name: 'draining past the duration',
      s: {
        elapsedMs: 63_000,
        durationMs: 60_000,
        written: 1_234_567,
        confirmed: 1_234_567,
        consumed: 1_200_000,
        inFlight: 0,
        phase: 'draining',
        faultKind: null,
        controlWritten: null,
      },
      expected: 'chaos 63/60 s: written 1,234,567, confirmed 1,234,567, consumed 1,200,000, in flight 0, now: draining',
    },
    {
      name: 'with --control: what its producer wrote',
      s: {
        elapsedMs: 5_000,
        durationMs: 60_000,
        written: 900,
        confirmed: 880,
        consumed: 850,
        inFlight: 20,
        phase: 'calm',
        faultKind: null,
        controlWritten: 4321,
      },
      expected: 'chaos 5/60 s: written 900, confirmed 880, consumed 850, in flight 20, now: calm, control written 4321',
    },
  ];
  it.each(cases)('$name', ({ s, expected }) => {
    expect(renderChaosLive(s)).toBe(expected);
  });
});

// ---------------------------------------------------------------------------------------------
// HTML
// ---------------------------------------------------------------------------------------------

function bandRects(svg: string): { label: string; x: number; width: number }[] {
  return [...svg.matchAll(/<rect class="band" data-band="([^"]*)" x="([^"]*)" y="[^"]*" width="([^"]*)"/g)].map((m) => ({
    label: m[1]!,
    x: Number(m[2]),
    width: Number(m[3]),
  }));
}

function bandLabels(svg: string): { x: number; y: number; text: string }[] {
  return [...svg.matchAll(/<text class="tick band-label" x="([^"]*)" y="([^"]*)"[^>]*>([^<]*)<\/text>/g)].map((m) => ({
    x: Number(m[1]),
    y: Number(m[2]),
    text: m[3]!,
  }));
}

describe('chaos HTML', () => {
  const page = (r: ChaosResult): string => renderHtmlReport('chaos', r, renderChaos(r), { generatedAtIso: '2026-01-01T00:00:00.000Z' });

  it('a totals table, one line chart with a band per fault, the nemesis history', () => {
    const r = chaosResult({ control });
    const html = page(r);
    expect([...html.matchAll(/<svg class="chart" data-chart="([^"]*)"/g)].map((m) => m[1])).toEqual(['line']);
    expect(bandRects(html).map((b) => b.label)).toEqual(['kill rabbit1', 'pause rabbit2']);
    expect([...html.matchAll(/<polyline class="series" data-series="([^"]*)"/g)].map((m) => m[1])).toEqual([
      'written /s',
      'confirmed /s',
      'consumed /s',
      'in flight',
    ]);
    expect(html).toContain('<th>with confirms</th><th>control (no confirms)</th>');
    expect(html).toContain('<h2>Nemesis</h2>');
    expect(html).toContain('<td>leader of rmq-bench.chaos.1</td>');
    expect(html).toContain('<td>q.1 rabbit1→rabbit3</td>');
    expect(html).toContain('<span class="verdict ok">verdict: OK</span>');
    expect(html).not.toMatch(/NaN|Infinity|undefined/);
  });

  it('one band per fault, also for many faults', () => {
    const faults = Array.from({ length: 12 }, (_, i) =>
      faultRecord({ index: i + 1, issuedAtMs: i * 5_000, appliedAtMs: i * 5_000 + 10, restoredAtMs: i * 5_000 + 3_000, wholeAtMs: i * 5_000 + 4_000 }),
    );
    expect(bandRects(page(chaosResult({ faults })))).toHaveLength(12);
  });

  it('no faults: no bands, and the history says so', () => {
    const html = page(chaosResult({ faults: [] }));
    expect(bandRects(html)).toEqual([]);
    expect(html).toContain('<p>No fault was injected.</p>');
  });

  it('a failed run shows the failed verdict', () => {
    const html = page(chaosResult({ producers: [chaosProducer(1, [['awc', 0, 5]])] }));
    expect(html).toContain('<span class="verdict failed">verdict: FAILED</span>');
  });
});

describe('faultBands', () => {
  it('from the issue to whole, else to the heal, else to the end (the last sample past the duration)', () => {
    const faults = [
      faultRecord({ index: 1, issuedAtMs: 10_000, restoredAtMs: 15_000, wholeAtMs: 18_000 }),
      faultRecord({ index: 2, kind: 'pause', nodes: ['rabbit2'], issuedAtMs: 20_000, restoredAtMs: 25_000, wholeAtMs: null }),
      faultRecord({ index: 3, kind: 'quorum-loss', nodes: ['rabbit1', 'rabbit3'], issuedAtMs: 40_000, restoredAtMs: null, wholeAtMs: null }),
      faultRecord({ index: 4, kind: 'stop', nodes: [], issuedAtMs: 50_000, appliedAtMs: null, restoredAtMs: null, wholeAtMs: null, error: 'x' }),
    ];
    const bands = faultBands({ faults, durationMs: 60_000, samples: steadySamples(64, 10) });
    expect(bands.map(({ color: _, ...b }) => b)).toEqual([
      { from: 10, to: 18, label: 'kill rabbit1' },
      { from: 20, to: 25, label: 'pause rabbit2' },
      { from: 40, to: 64, label: 'quorum-loss rabbit1+rabbit3' },
      { from: 50, to: 64, label: 'stop (not applied)' },
    ]);
    expect(new Set(bands.map((b) => b.color)).size).toBe(4);
  });
});

describe('ratesFrom over chaos samples', () => {
  it('written, confirmed and consumed per second', () => {
    const samples = [
      { tMs: 0, written: 0, confirmed: 0, consumed: 0, inFlight: 0 },
      { tMs: 500, written: 100, confirmed: 90, consumed: 50, inFlight: 10 },
    ];
    expect(ratesFrom(samples, 'written')).toEqual([[0.5, 200]]);
    expect(ratesFrom(samples, 'confirmed')).toEqual([[0.5, 180]]);
    expect(ratesFrom(samples, 'consumed')).toEqual([[0.5, 100]]);
  });
});

// The plot area of lineChart's 920 × 280 view box: x from 64 to 770 (see svg.test.ts).
const LEFT = 64;
const RIGHT = 770;

describe('lineChart bands', () => {
  const base = { title: 'rates', xLabel: 's', yLabel: '/s' };
  const series = [
    {
      name: 'rate',
      points: [
        [0, 0],
        [10, 100],
      ] as [number, number][],
    },
  ];

  it('no bands: the same markup as before', () => {
    expect(lineChart({ ...base, series, bands: [] })).toBe(lineChart({ ...base, series }));
  });

  it('a band at its x range, beneath the series, with its label and colour', () => {
    const svg = lineChart({ ...base, series, bands: [{ from: 2, to: 4, label: 'kill rabbit1', color: '#123456' }] });
    const [b] = bandRects(svg);
    expect(b!.x).toBeCloseTo(LEFT + 0.2 * (RIGHT - LEFT), 1);
    expect(b!.width).toBeCloseTo(0.2 * (RIGHT - LEFT), 0);
    expect(svg.indexOf('class="band"')).toBeLessThan(svg.indexOf('class="series"'));
    expect(svg).toMatch(/<rect class="band" data-band="kill rabbit1"[^>]* fill="#123456" fill-opacity="0\.12"><title>kill rabbit1<\/title><\/rect>/);
    expect(bandLabels(svg).map((l) => l.text)).toEqual(['kill rabbit1']);
  });

  it('the x range reaches the end of the last band', () => {
    const svg = lineChart({ ...base, series, bands: [{ from: 12, to: 19, label: 'pause rabbit2' }] });
    const [b] = bandRects(svg);
    // x range 0..20: the band from 12 to 19.
    expect(b!.x).toBeCloseTo(LEFT + 0.6 * (RIGHT - LEFT), 1);
    expect(b!.x + b!.width).toBeCloseTo(LEFT + 0.95 * (RIGHT - LEFT), 0);
  });

  const clamp: { name: string; band: Band; x: number; width: number }[] = [
    { name: 'starting before 0', band: { from: -3, to: 5, label: 'a' }, x: LEFT, width: (RIGHT - LEFT) / 2 },
    { name: 'ending before it starts', band: { from: 5, to: 2, label: 'b' }, x: (LEFT + RIGHT) / 2, width: 0 },
    { name: 'NaN start', band: { from: Number.NaN, to: 5, label: 'c' }, x: LEFT, width: (RIGHT - LEFT) / 2 },
    { name: 'an infinite end', band: { from: 5, to: Number.POSITIVE_INFINITY, label: 'd' }, x: (LEFT + RIGHT) / 2, width: (RIGHT - LEFT) / 2 },
  ];
  it.each(clamp)('clamped to the plot: $name', ({ band, x, width }) => {
    const svg = lineChart({ ...base, series, bands: [band] });
    const [b] = bandRects(svg);
    expect(b!.x).toBeCloseTo(x, 0);
    expect(b!.width).toBeCloseTo(width, 0);
    expect(svg).not.toMatch(/NaN|Infinity/);
  });

  it('labels that would overlap go to the next row; a label with room stays in the first', () => {
    const svg = lineChart({
      ...base,
      series,
      bands: [
        { from: 1, to: 1.5, label: 'kill rabbit1' },
        { from: 1.6, to: 2, label: 'pause rabbit2' },
        { from: 1.8, to: 2.1, label: 'stop rabbit3' },
        { from: 8, to: 9, label: 'latency rabbit1' },
      ],
    });
    const ys = bandLabels(svg).map((l) => l.y);
    expect(new Set(ys.slice(0, 3)).size).toBe(3);
    expect(ys[3]).toBe(ys[0]);
  });

  it('a label near the right edge stays inside the plot', () => {
    const svg = lineChart({ ...base, series, bands: [{ from: 9.9, to: 10, label: 'quorum-loss rabbit1+rabbit2' }] });
    const [l] = bandLabels(svg);
    expect(l!.x + 'quorum-loss rabbit1+rabbit2'.length * 6).toBeLessThanOrEqual(RIGHT);
  });

  it('labels are escaped', () => {
    const svg = lineChart({ ...base, series, bands: [{ from: 1, to: 2, label: '<x>&' }] });
    expect(svg).toContain('data-band="&lt;x&gt;&amp;"');
    expect(svg).not.toContain('<x>');
  });
});

describe('connections: the nodes a producer connected to', () => {
  it.each([
    [[], '-'],
    [['rabbit1'], 'rabbit1'],
    [['rabbit1', 'rabbit2', 'rabbit3', 'rabbit1', 'rabbit2'], 'rabbit1 → rabbit2 → rabbit3 → rabbit1 → rabbit2'],
    [['rabbit1', 'rabbit2', 'rabbit3', 'rabbit1', 'rabbit2', 'rabbit3'], 'rabbit1 → rabbit2 → … (2 more) → rabbit2 → rabbit3'],
  ])('%j → %s', (nodes, text) => {
    expect(connections(nodes)).toBe(text);
  });
});

describe('drainLines', () => {
  const stuck = {
    ended: 'stuck' as const,
    waitedMs: 36_400,
    left: [{ queue: 'rmq-bench.chaos.3', ready: 0, unacknowledged: 9, consumersCounted: 2, consumersListed: 1 }],
  };
  const cases: { name: string; drain: Parameters<typeof drainLines>[0]; lines: string[] }[] = [
    { name: 'no drain recorded (an older document)', drain: undefined, lines: [] },
    { name: 'no drain (Ctrl+C)', drain: null, lines: [] },
    { name: 'every queue empty', drain: { ended: 'empty', waitedMs: 6_000, left: [] }, lines: [] },
    {
      name: 'stuck: the queue, its counts and why',
      drain: stuck,
      lines: [
        'the drain ended after 36.4 s: nothing delivered for 30.0 s while the broker held messages unacknowledged for consumers that did not receive them: rmq-bench.chaos.3 0 ready, 9 unacknowledged (it counts 2 consumers, 1 on live channels)',
        '  a confirmed message among them that no consumer read counts as lost above; one read already counts once',
      ],
    },
    {
      name: 'the deadline',
      drain: { ended: 'deadline', waitedMs: 300_200, left: [{ queue: 'q.1', ready: 40, unacknowledged: 0, consumersCounted: 0, consumersListed: 0 }] },
      lines: [
        'the drain ended after 5 m 0 s: its deadline passed with messages still queued: q.1 40 ready, 0 unacknowledged (it counts 0 consumers, 0 on live channels)',
        '  a confirmed message among them that no consumer read counts as lost above; one read already counts once',
      ],
    },
  ];
  it.each(cases)('$name', ({ drain, lines }) => {
    expect(drainLines(drain)).toEqual(lines);
  });

  it('renderChaos prints them under the totals', () => {
    const text = renderChaos({ ...chaosResult(), drain: stuck });
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.startsWith('the drain ended after 36.4 s'));
    expect(at).toBeGreaterThan(0);
    expect(lines[at - 1]).toMatch(/^the idempotent store absorbed/);
  });
});
