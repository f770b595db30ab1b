import { describe, expect, it } from 'vitest';
import type { PublisherSample } from '../../src/client/publisher-result.js';
import { median } from '../../src/measure/median.js';
import { renderCompare } from '../../src/report/kinds/compare/text.js';
import { faultMarkers } from '../../src/report/kinds/compare/charts.js';
import { lossPerRunChart, ratesFrom } from '../../src/report/chart-parts.js';
import { embedJson, renderHtmlReport as renderTypedPage } from '../../src/report/html.js';
import type { CompareResult, CompareRun, FaultTimeline } from '../../src/scenarios/under-faults/compare.js';
import type { DurabilityDemoResult } from '../../src/scenarios/demos/durability-demo.js';
import { BENCH_RESULT, unsampledBenchRun } from './fixtures/bench.js';
import { CONSUMER_CRASH_RESULT, crashRun } from './fixtures/consumer-crash.js';
import { delayedRetryResult } from './fixtures/delayed-retry.js';
import { DLQ_RESULT } from './fixtures/dlq.js';
import { DURABILITY_RESULT } from './fixtures/durability.js';
import { NO_LATENCY } from './fixtures/latency.js';
import {
  attributeValues,
  bars,
  charts,
  DATA_OPEN,
  dotTitles,
  embeddedDoc,
  embeddedRaw,
  expectedDoc,
  markerLabels,
  markerXs,
  reportRaw,
  seriesNames,
  svgs,
  unescapeHtml,
} from './fixtures/page.js';
import { PREFETCH_RESULT } from './fixtures/prefetch.js';
import { PRODUCER_CRASH_RESULT } from './fixtures/producer-crash.js';
import { ladderResult, RETRY_RESULT } from './fixtures/retry.js';
import { COMPARE_OPTIONS, compareResult, compareRun, compareWithFault, KILL_TIMELINE, reconciliationOf, samplesUntil } from './fixtures/runs.js';

/** The page of a document of any kind: these tables hold documents of many kinds, and some of none rmq-bench prints. */
const renderHtmlReport = renderTypedPage as (kind: string, data: object, text: string, options?: { generatedAtIso?: string }) => string;

// ---------------------------------------------------------------------------------------------
// One realistic result per kind, from ./fixtures/.
// ---------------------------------------------------------------------------------------------

const LADDER_RESULT = ladderResult();
const DELAYED_RETRY_RESULT = delayedRetryResult();

interface KindCase {
  name: string;
  kind: string;
  data: object;
  /** data-chart of each chart, in order. */
  charts: string[];
  /** The data's ok, when it has one. */
  ok?: boolean;
}

const KINDS: KindCase[] = [
  { name: 'compare', kind: 'compare', data: compareWithFault(), charts: ['line', 'line'], ok: true },
  // The totals, then a chart per mode of how each of its two runs went.
  { name: 'consumer-crash', kind: 'consumer-crash', data: CONSUMER_CRASH_RESULT, charts: ['bar', 'bar', 'bar', 'bar'], ok: true },
  { name: 'prefetch-demo', kind: 'prefetch-demo', data: PREFETCH_RESULT, charts: ['bar'] },
  { name: 'dlq-demo', kind: 'dlq-demo', data: DLQ_RESULT, charts: ['bar'], ok: false },
  { name: 'retry-demo (single message)', kind: 'retry-demo', data: RETRY_RESULT, charts: ['timeline'], ok: true },
  { name: 'retry-demo (ladder)', kind: 'retry-demo', data: LADDER_RESULT, charts: ['timeline'], ok: true },
  { name: 'delayed-retry-demo', kind: 'delayed-retry-demo', data: DELAYED_RETRY_RESULT, charts: ['timeline', 'bar'], ok: true },
  { name: 'durability-demo', kind: 'durability-demo', data: DURABILITY_RESULT, charts: ['bar'], ok: true },
  { name: 'bench', kind: 'bench', data: BENCH_RESULT, charts: ['bar', 'bar', 'bar'] },
  // One run: the totals only (a chart per run needs two or more).
  { name: 'producer-crash', kind: 'producer-crash', data: PRODUCER_CRASH_RESULT, charts: ['bar'], ok: true },
];

const TEXT = 'a report line\nsecond line';
const AT = '2025-01-02T03:04:05.000Z';

// ---------------------------------------------------------------------------------------------

describe('renderHtmlReport: every kind', () => {
  it.each(KINDS)('$name: the charts it should have, as <svg class="chart">', ({ kind, data, charts: expected }) => {
    const page = renderHtmlReport(kind, data, TEXT, { generatedAtIso: AT });
    expect(charts(page)).toEqual(expected);
    expect(svgs(page)).toHaveLength(expected.length);
  });

  it.each(KINDS)('$name: self-contained (no URL in src or href, no external script, stylesheet or image)', ({ kind, data }) => {
    const page = renderHtmlReport(kind, data, TEXT, { generatedAtIso: AT });
    expect(page).not.toMatch(/\b(?:src|href|xlink:href|action)\s*=/i);
    expect(page).not.toMatch(/<(?:link|img|iframe|object|embed|base)\b/i);
    expect(page).not.toMatch(/url\(|@import/i);
    expect(page).not.toMatch(/https?:\/\//i);
    // Exactly the two scripts: the JSON data and the small inline one.
    expect(page.match(/<script\b[^>]*>/g)).toEqual([DATA_OPEN, '<script>']);
  });

  it.each(KINDS)('$name: the --json document is embedded and parses back to the data', ({ kind, data }) => {
    const page = renderHtmlReport(kind, data, TEXT, { generatedAtIso: AT });
    expect(embeddedDoc(page)).toEqual(expectedDoc(kind, data));
  });

  it.each(KINDS)('$name: verdict from ok', ({ kind, data, ok }) => {
    const page = renderHtmlReport(kind, data, TEXT, { generatedAtIso: AT });
    const verdicts = page.match(/<span class="verdict [^"]*">[^<]*<\/span>/g) ?? [];
    if (ok === undefined) expect(verdicts).toEqual([]);
    else expect(verdicts).toEqual([ok ? '<span class="verdict ok">verdict: OK</span>' : '<span class="verdict failed">verdict: FAILED</span>']);
  });

  it.each(KINDS)('$name: no NaN or Infinity anywhere', ({ kind, data }) => {
    const page = renderHtmlReport(kind, data, TEXT, { generatedAtIso: AT });
    expect(page).not.toMatch(/NaN|Infinity|undefined/);
  });

  it.each(KINDS)('$name: title, heading, data-kind and the generated time', ({ kind, data }) => {
    const page = renderHtmlReport(kind, data, TEXT, { generatedAtIso: AT });
    expect(page).toContain(`<title>rmq-bench ${kind}</title>`);
    expect(page).toContain(`<h1>rmq-bench ${kind}</h1>`);
    expect(page).toContain(`<body data-kind="${kind}">`);
    expect(page).toContain(`generated ${AT}`);
    expect(page.startsWith('<!doctype html>')).toBe(true);
  });
});

describe('renderHtmlReport: escaping', () => {
  const hostile = '</script><!-- <script>alert("x")</script> --> & \u2028 \u2029 \'q\' https://example.com/x.js';

  it('a string with </script> and <!-- in the data round-trips and cannot end the data element', () => {
    const data = compareResult([compareRun('confirms-on', 1, reconciliationOf('on-1', [['awc', 1, 2]]), {}, null)], {
      options: { ...COMPARE_OPTIONS, queue: hostile, urls: ['amqp://guest:guest@localhost:5672/', hostile] },
    });
    const page = renderHtmlReport('compare', data, TEXT, { generatedAtIso: AT });
    const raw = embeddedRaw(page);
    expect(raw).not.toMatch(/[<>]/);
    expect(raw).not.toContain('<!--');
    expect(raw).not.toMatch(/[\u2028\u2029]/);
    const doc = embeddedDoc(page) as CompareResult;
    expect(doc.options.queue).toBe(hostile);
    expect(doc.options.urls).toEqual(['amqp://guest:guest@localhost:5672/', hostile]);
    expect(doc).toEqual(expectedDoc('compare', data));
    // The URL in the data stays data: no src or href anywhere.
    expect(page).not.toMatch(/\b(?:src|href)\s*=/i);
    // The data element's close is the only </script> before the inline script.
    expect(page.indexOf('</script>')).toBe(page.indexOf(DATA_OPEN) + DATA_OPEN.length + raw.length);
  });

  it('the data cannot override schemaVersion or kind', () => {
    const page = renderHtmlReport('prefetch-demo', { ...PREFETCH_RESULT, schemaVersion: 99, kind: 'other' }, TEXT, { generatedAtIso: AT });
    expect(embeddedDoc(page)).toMatchObject({ schemaVersion: 1, kind: 'prefetch-demo' });
  });

  const texts: { name: string; text: string; escaped: string }[] = [
    { name: 'less-than and ampersand', text: 'p99 < 10 ms && lost 0', escaped: 'p99 &lt; 10 ms &amp;&amp; lost 0' },
    { name: 'quotes', text: `queue "demo" isn't`, escaped: 'queue &quot;demo&quot; isn&#39;t' },
    { name: 'markup', text: '</pre><script>alert(1)</script>', escaped: '&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;' },
    { name: 'already-escaped entity is escaped again', text: '&lt;', escaped: '&amp;lt;' },
    { name: 'plain text is untouched', text: 'compare: 2000 messages\n  lost 0', escaped: 'compare: 2000 messages\n  lost 0' },
  ];

  it.each(texts)('report text: $name', ({ text, escaped }) => {
    const page = renderHtmlReport('prefetch-demo', PREFETCH_RESULT, text, { generatedAtIso: AT });
    expect(reportRaw(page)).toBe(escaped);
    expect(unescapeHtml(reportRaw(page))).toBe(text);
    expect(page.match(/<script\b/g)).toHaveLength(2);
  });

  it("the real compare report text survives, escaped, in <pre id='report'>", () => {
    const data = compareWithFault();
    const text = renderCompare(data);
    const page = renderHtmlReport('compare', data, text, { generatedAtIso: AT });
    expect(unescapeHtml(reportRaw(page))).toBe(text);
  });

  it('a kind with markup is escaped in the title, heading and data-kind', () => {
    const page = renderHtmlReport('<b>&"', {}, TEXT, { generatedAtIso: AT });
    expect(page).toContain('<title>rmq-bench &lt;b&gt;&amp;&quot;</title>');
    expect(page).toContain('<body data-kind="&lt;b&gt;&amp;&quot;">');
    expect(charts(page)).toEqual([]);
  });
});

describe('renderHtmlReport: verdict', () => {
  const { ok: _ok, ...withoutOk } = DURABILITY_RESULT;
  const cases: { name: string; data: object; expected: string | null }[] = [
    { name: 'ok true', data: { ...withoutOk, ok: true }, expected: '<span class="verdict ok">verdict: OK</span>' },
    { name: 'ok false', data: { ...withoutOk, ok: false }, expected: '<span class="verdict failed">verdict: FAILED</span>' },
    { name: 'no ok field', data: withoutOk, expected: null },
    { name: 'ok not a boolean', data: { ...withoutOk, ok: 'yes' }, expected: null },
  ];

  it.each(cases)('$name', ({ data, expected }) => {
    const page = renderHtmlReport('durability-demo', data, TEXT, { generatedAtIso: AT });
    const meta = /<div class="meta">([\s\S]*?)<\/div>/.exec(page)![1]!;
    if (expected === null) expect(meta).toBe(`generated ${AT} `);
    else expect(meta).toBe(`generated ${AT} ${expected}`);
  });

  it('a failed compare shows FAILED', () => {
    const page = renderHtmlReport('compare', { ...compareWithFault(), ok: false }, TEXT, { generatedAtIso: AT });
    expect(page).toContain('verdict: FAILED');
    expect(page).not.toContain('verdict: OK');
  });
});

describe('renderHtmlReport compare: timelines', () => {
  it('one line chart per run, titled with its counts', () => {
    const data = compareWithFault();
    const page = renderHtmlReport('compare', data, TEXT, { generatedAtIso: AT });
    const titles = [...page.matchAll(/<figcaption>([^<]*)<\/figcaption>/g)].map((m) => m[1]);
    expect(titles).toEqual([
      'confirms-on, run 1: lost 0, silently lost 0, duplicated 0, recovered 0',
      'confirms-off, run 1: lost 0, silently lost 3, duplicated 0, recovered 0',
    ]);
  });

  it('confirms-on has a confirm rate; confirms-off does not', () => {
    const [on, off] = svgs(renderHtmlReport('compare', compareWithFault(), TEXT, { generatedAtIso: AT }));
    expect(seriesNames(on!)).toEqual(['publish rate /s', 'confirm rate /s', 'in flight']);
    expect(seriesNames(off!)).toEqual(['publish rate /s', 'in flight']);
  });

  it('the totals table has a row per mode', () => {
    const page = renderHtmlReport('compare', compareWithFault(), TEXT, { generatedAtIso: AT });
    const table = /<table class="counts">([\s\S]*?)<\/table>/.exec(page)![1]!;
    expect(table).toContain(
      '<tr><td>confirms-on</td><td>1</td><td>2,000</td><td>2,000</td><td>2,000</td><td>2,000</td><td>0</td><td>0</td><td>0</td><td>0</td></tr>',
    );
    expect(table).toContain(
      '<tr><td>confirms-off</td><td>1</td><td>2,000</td><td>2,000</td><td>0</td><td>1,963</td><td>0</td><td>37</td><td>0</td><td>0</td></tr>',
    );
  });

  const full = KILL_TIMELINE;
  const markerCases: { name: string; fault: FaultTimeline | null; labels: string[] }[] = [
    { name: 'fault: null, no markers', fault: null, labels: [] },
    { name: 'fault, election, restore and rejoin', fault: full, labels: ['kill rabbit1', 'new leader rabbit2', 'restored', 'rejoined'] },
    {
      name: 'pause, never restored nor rejoined',
      fault: { ...full, kind: 'pause', restoredAtMs: null, rejoinedAtMs: null },
      labels: ['pause rabbit1', 'new leader rabbit2'],
    },
    { name: 'no election seen', fault: { ...full, electedAtMs: null, electionMs: null, newLeader: null }, labels: ['kill rabbit1', 'restored', 'rejoined'] },
    { name: 'elected, leader unknown', fault: { ...full, newLeader: null, restoredAtMs: null, rejoinedAtMs: null }, labels: ['kill rabbit1', 'new leader ?'] },
  ];

  it.each(markerCases)('markers: $name', ({ fault, labels }) => {
    const data = compareResult([compareRun('confirms-on', 1, reconciliationOf('on-1', [['awc', 1, 5]]), { samples: samplesUntil(4_000) }, fault)]);
    const [svg] = svgs(renderHtmlReport('compare', data, TEXT, { generatedAtIso: AT }));
    expect(markerLabels(svg!)).toEqual(labels);
  });

  it('markers sit at their time on the x scale (4 s of samples: 0 s at 64, 4 s at 770)', () => {
    const data = compareResult([compareRun('confirms-on', 1, reconciliationOf('on-1', [['awc', 1, 5]]), { samples: samplesUntil(4_000) }, KILL_TIMELINE)]);
    const [svg] = svgs(renderHtmlReport('compare', data, TEXT, { generatedAtIso: AT }));
    // 64 + t / 4 × 706 for t = 1.5, 3.25, 3.5 and 3.9 s, to one decimal
    const xs = markerXs(svg!);
    expect(xs).toHaveLength(4);
    const expected = [328.75, 637.625, 681.75, 752.35];
    for (let i = 0; i < expected.length; i++) expect(Math.abs(xs[i]! - expected[i]!)).toBeLessThanOrEqual(0.051);
  });

  it("a rejoin long after the last sample: the axis reaches it, the producer's rates go on at 0 until then, the fault window is a band", () => {
    const data = compareResult([
      compareRun('confirms-on', 1, reconciliationOf('on-1', [['awc', 1, 5]]), { samples: samplesUntil(4_000) }, { ...KILL_TIMELINE, rejoinedAtMs: 12_000 }),
    ]);
    const [svg] = svgs(renderHtmlReport('compare', data, TEXT, { generatedAtIso: AT }));
    // The axis ends at the round tick past 12 s (15): the rejoin at 64 + 12 / 15 × 706.
    expect(Math.abs(markerXs(svg!).at(-1)! - (64 + (12 / 15) * 706))).toBeLessThanOrEqual(0.051);
    expect(svg).not.toContain('→');
    // The publish rate line reaches the rejoin, at 0 from the producer's end.
    const rate = /data-series="publish rate \/s"[^>]* points="([^"]*)"/
      .exec(svg!)![1]!
      .split(' ')
      .map((p) => p.split(',').map(Number));
    expect(Math.abs(rate.at(-1)![0]! - (64 + (12 / 15) * 706))).toBeLessThanOrEqual(0.051);
    expect(rate.at(-1)![1]).toBe(rate.reduce((a, p) => Math.max(a, p[1]!), 0));
    expect(svg).toMatch(/class="band"[^>]*>[\s\S]*kill rabbit\d: fault until rejoin/);
  });
});

describe('renderHtmlReport: per-kind content', () => {
  it('consumer-crash: bars sum every run of a mode', () => {
    const [svg] = svgs(renderHtmlReport('consumer-crash', CONSUMER_CRASH_RESULT, TEXT, { generatedAtIso: AT }));
    expect(bars(svg!)).toEqual({
      'lost/autoack': 'autoack lost: 100',
      'processed twice/autoack': 'autoack processed twice: 0',
      'duplicates skipped/autoack': 'autoack duplicates skipped: 0',
      'lost/manual': 'manual lost: 0',
      'processed twice/manual': 'manual processed twice: 16',
      'duplicates skipped/manual': 'manual duplicates skipped: 0',
      'lost/idempotent': 'idempotent lost: 0',
      'processed twice/idempotent': 'idempotent processed twice: 0',
      'duplicates skipped/idempotent': 'idempotent duplicates skipped: 17',
    });
  });

  it('prefetch-demo: fast and slow per prefetch', () => {
    const [svg] = svgs(renderHtmlReport('prefetch-demo', PREFETCH_RESULT, TEXT, { generatedAtIso: AT }));
    expect(bars(svg!)).toEqual({
      'fast/prefetch 1': 'prefetch 1 fast: 190',
      'slow/prefetch 1': 'prefetch 1 slow: 10',
      'fast/prefetch 0': 'prefetch 0 fast: 100',
      'slow/prefetch 0': 'prefetch 0 slow: 100',
    });
  });

  it('dlq-demo: published, expected and found per reason', () => {
    const [svg] = svgs(renderHtmlReport('dlq-demo', DLQ_RESULT, TEXT, { generatedAtIso: AT }));
    expect(bars(svg!)).toMatchObject({
      'published/rejected': 'rejected published: 3',
      'found in demo.dlq/rejected': 'rejected found in demo.dlq: 3',
      'expected in demo.dlq/expired': 'expired expected in demo.dlq: 2',
      'found in demo.dlq/expired': 'expired found in demo.dlq: 1',
    });
  });

  it('retry-demo: a dot per attempt with its time and outcome', () => {
    const [svg] = svgs(renderHtmlReport('retry-demo', RETRY_RESULT, TEXT, { generatedAtIso: AT }));
    expect(dotTitles(svg!)).toEqual(['attempt 1 at 0.01 s: failed', 'attempt 2 at 1.03 s: failed', 'attempt 3 at 2.05 s: processed']);
    // A lane name longer than 10 characters keeps its last 9.
    expect(svg).toContain('>…ry-7f3a9c</text>');
  });

  it('retry-demo ladder: a lane per message, its attempts on it', () => {
    const page = renderHtmlReport('retry-demo', LADDER_RESULT, TEXT, { generatedAtIso: AT });
    const [svg] = svgs(page);
    expect(page).toContain('<figcaption>each attempt at its measured time; rungs 100 ms, 400 ms</figcaption>');
    const lanes = [...svg!.matchAll(/<text class="tick" x="[^"]*" y="[^"]*" text-anchor="end">([^<]*)<\/text>/g)].map((m) => m[1]);
    expect(lanes).toEqual(['good-1', 'poison-1']);
    // Real ids are long (`<run>.fq6q-good`): shown whole, the plot starting further right.
    const long = { ...LADDER_RESULT, attempts: LADDER_RESULT.attempts.map((a) => ({ ...a, messageId: `rmq-bench-ladder-r2k9.fq6q-${a.messageId}` })) };
    const [svgLong] = svgs(renderHtmlReport('retry-demo', long, TEXT, { generatedAtIso: AT }));
    const longLanes = [...svgLong!.matchAll(/<text class="tick" x="[^"]*" y="[^"]*" text-anchor="end">([^<]*)<\/text>/g)].map((m) => m[1]);
    expect(longLanes).toEqual(['rmq-bench-ladder-r2k9.fq6q-good-1', 'rmq-bench-ladder-r2k9.fq6q-poison-1']);
    expect(dotTitles(svg!)).toEqual([
      'attempt 1 (demo.backoff.orders) at 0.01 s: failed',
      'attempt 2 (demo.backoff.orders) at 0.11 s: processed',
      'attempt 1 (demo.backoff.orders) at 0.01 s: failed',
      'attempt 2 (demo.backoff.orders) at 0.11 s: failed',
    ]);
  });

  it('delayed-retry-demo: deliveries per message, and the slowest measured delay against the formula', () => {
    const [timeline, bar] = svgs(renderHtmlReport('delayed-retry-demo', DELAYED_RETRY_RESULT, TEXT, { generatedAtIso: AT }));
    expect(dotTitles(timeline!)).toEqual([
      'delivery 1 at 0.00 s',
      'delivery 2 at 0.21 s after return #1 (reject)',
      'delivery 3 at 0.63 s after return #2 (nack)',
      'delivery 1 at 0.00 s',
      'delivery 2 at 0.23 s after return #1 (reject)',
      'delivery 3 at 0.64 s after return #2 (nack)',
    ]);
    expect(bars(bar!)).toEqual({
      'expected ms/#1 reject': '#1 reject expected ms: 200',
      'measured ms/#1 reject': '#1 reject measured ms: 230',
      'expected ms/#2 nack': '#2 nack expected ms: 400',
      'measured ms/#2 nack': '#2 nack measured ms: 415',
    });
  });

  const hows: { how: DurabilityDemoResult['how']; word: string }[] = [
    { how: 'kill', word: 'killed' },
    { how: 'stop', word: 'stopped' },
  ];
  it.each(hows)('durability-demo ($how): confirmed, survived and expected per queue and mode', ({ how, word }) => {
    const page = renderHtmlReport('durability-demo', { ...DURABILITY_RESULT, how }, TEXT, { generatedAtIso: AT });
    expect(page).toContain(`confirmed before, found after every node was ${word} and started`);
    expect(bars(svgs(page)[0]!)).toMatchObject({
      'survived/classic transient': 'classic transient survived: 0',
      'the article says/classic persistent': 'classic persistent the article says: 100',
      'survived/quorum transient': 'quorum transient survived: 100',
    });
  });

  it('bench: throughput, confirm and end-to-end latency per mode; a missing figure is a zero bar', () => {
    const [rate, confirm, e2e] = svgs(renderHtmlReport('bench', BENCH_RESULT, TEXT, { generatedAtIso: AT }));
    expect(bars(rate!)).toEqual({
      'publish /s/none': 'none publish /s: 20k',
      'consume /s/none': 'none consume /s: 8951',
      'publish /s/async/256': 'async/256 publish /s: 9000',
      'consume /s/async/256': 'async/256 consume /s: 8951',
    });
    expect(bars(confirm!)).toMatchObject({ 'p50/none': 'none p50: 0', 'p99/async/256': 'async/256 p99: 25.6', 'max/async/256': 'async/256 max: 180.2' });
    expect(confirm).toMatch(/data-series="p50" data-category="none" x="[^"]*" y="240.0" width="[^"]*" height="0.0"/);
    expect(bars(e2e!)).toMatchObject({ 'p95/none': 'none p95: 15', 'max/async/256': 'async/256 max: 210' });
  });
});

describe('renderHtmlReport: edge cases produce no NaN or Infinity', () => {
  const run = (samples: PublisherSample[] | undefined, fault: FaultTimeline | null = KILL_TIMELINE): CompareRun => {
    const r = compareRun('confirms-on', 1, reconciliationOf('on-1', []), {}, fault);
    // samples is optional on a PublisherResult (older reports have none).
    if (samples === undefined) delete (r.producer as { samples?: unknown }).samples;
    else r.producer.samples = samples;
    return r;
  };
  const zero: PublisherSample = { tMs: 0, written: 0, confirmed: 0, inFlight: 0 };

  const cases: { name: string; kind: string; data: object }[] = [
    { name: 'compare: zero samples, no fault', kind: 'compare', data: compareResult([run([], null)]) },
    { name: 'compare: zero samples, with a fault', kind: 'compare', data: compareResult([run([])]) },
    { name: 'compare: no samples field', kind: 'compare', data: compareResult([run(undefined)]) },
    { name: 'compare: one sample', kind: 'compare', data: compareResult([run([{ tMs: 100, written: 50, confirmed: 40, inFlight: 10 }])]) },
    { name: 'compare: one sample at 0 ms', kind: 'compare', data: compareResult([run([zero])]) },
    {
      name: 'compare: all-zero values',
      kind: 'compare',
      data: compareResult([
        run(
          [0, 100, 200, 300].map((tMs) => ({ ...zero, tMs })),
          null,
        ),
        {
          ...run(
            [0, 100, 200, 300].map((tMs) => ({ ...zero, tMs })),
            null,
          ),
          mode: 'confirms-off',
        },
      ]),
    },
    {
      name: 'compare: a run of 0 ms (every sample at 0)',
      kind: 'compare',
      data: compareResult([run([zero, { ...zero, written: 5 }, { ...zero, written: 5 }])]),
    },
    {
      name: 'compare: fault at 0 ms, everything at 0',
      kind: 'compare',
      data: compareResult([run([zero], { ...KILL_TIMELINE, faultAtMs: 0, electedAtMs: 0, restoredAtMs: 0, rejoinedAtMs: 0 })]),
    },
    { name: 'compare: no runs (interrupted before the first)', kind: 'compare', data: compareResult([], { totals: [], interrupted: true, ok: false }) },
    { name: 'consumer-crash: no runs', kind: 'consumer-crash', data: { ...CONSUMER_CRASH_RESULT, runs: [] } },
    { name: 'consumer-crash: all zero', kind: 'consumer-crash', data: { ...CONSUMER_CRASH_RESULT, runs: [crashRun('manual', 1, 0, 0, 0)] } },
    { name: 'prefetch-demo: no rows', kind: 'prefetch-demo', data: { ...PREFETCH_RESULT, rows: [] } },
    {
      name: 'prefetch-demo: nothing processed',
      kind: 'prefetch-demo',
      data: { ...PREFETCH_RESULT, rows: [{ prefetch: 1, fastProcessed: 0, slowProcessed: 0, totalMs: 0, fastMaxHeld: 0, slowMaxHeld: 0 }] },
    },
    { name: 'dlq-demo: no reasons', kind: 'dlq-demo', data: { results: [], ok: true } },
    { name: 'retry-demo: no attempts', kind: 'retry-demo', data: { ...RETRY_RESULT, attempts: [] } },
    { name: 'retry-demo: one attempt at 0 ms', kind: 'retry-demo', data: { ...RETRY_RESULT, attempts: [{ ...RETRY_RESULT.attempts[0]!, atMs: 0 }] } },
    { name: 'retry-demo ladder: no attempts', kind: 'retry-demo', data: { ...LADDER_RESULT, attempts: [] } },
    {
      name: 'delayed-retry-demo: no rounds, no deliveries',
      kind: 'delayed-retry-demo',
      data: { ...DELAYED_RETRY_RESULT, messages: [], rounds: [], deliveries: [] },
    },
    {
      name: 'delayed-retry-demo: a round with nothing measured',
      kind: 'delayed-retry-demo',
      data: { ...DELAYED_RETRY_RESULT, rounds: [{ ...DELAYED_RETRY_RESULT.rounds[0]!, measured: [] }], deliveries: [] },
    },
    { name: 'durability-demo: no rows', kind: 'durability-demo', data: { ...DURABILITY_RESULT, rows: [] } },
    {
      name: 'bench: every figure null',
      kind: 'bench',
      data: {
        ...BENCH_RESULT,
        runs: [
          unsampledBenchRun({
            publishRatePerSec: null,
            consumeRatePerSec: null,
            confirmLatency: NO_LATENCY,
            e2eLatency: NO_LATENCY,
            published: 0,
            consumed: 0,
            durationMs: 0,
            publishDurationMs: 0,
          }),
        ],
      },
    },
    { name: 'bench: no runs', kind: 'bench', data: { ...BENCH_RESULT, runs: [], interrupted: true } },
  ];

  it.each(cases)('$name', ({ kind, data }) => {
    const page = renderHtmlReport(kind, data, TEXT, { generatedAtIso: AT });
    expect(page).not.toMatch(/NaN|Infinity/);
    for (const v of attributeValues(page)) expect(v).not.toMatch(/NaN|Infinity|undefined/);
    // Every numeric attribute a chart carries is a finite number.
    for (const m of page.matchAll(/\s(?:x|y|x1|x2|y1|y2|cx|cy|width|height)="([^"]*)"/g)) expect(Number.isFinite(Number(m[1]))).toBe(true);
    for (const m of page.matchAll(/\spoints="([^"]*)"/g)) {
      for (const n of m[1]!.split(/[ ,]/).filter((s) => s !== '')) expect(Number.isFinite(Number(n))).toBe(true);
    }
    expect(embeddedDoc(page)).toEqual(expectedDoc(kind, data));
  });
});

describe('ratesFrom', () => {
  const s = (tMs: number, written: number, confirmed = 0): PublisherSample => ({ tMs, written, confirmed, inFlight: written - confirmed });
  const cases: { name: string; samples: PublisherSample[]; field: 'written' | 'confirmed'; expected: [number, number][] }[] = [
    { name: 'no samples', samples: [], field: 'written', expected: [] },
    { name: 'one sample: no interval yet', samples: [s(100, 50)], field: 'written', expected: [] },
    {
      name: 'per second from a 100 ms interval',
      samples: [s(0, 0), s(100, 50), s(200, 150)],
      field: 'written',
      expected: [
        [0.1, 500],
        [0.2, 1_000],
      ],
    },
    { name: 'the confirmed counter', samples: [s(0, 0, 0), s(250, 100, 25)], field: 'confirmed', expected: [[0.25, 100]] },
    { name: 'a zero-length interval is skipped', samples: [s(0, 0), s(0, 10), s(100, 20)], field: 'written', expected: [[0.1, 100]] },
    { name: 'time going backwards is skipped', samples: [s(200, 10), s(100, 20)], field: 'written', expected: [] },
    { name: 'no progress is a zero rate', samples: [s(0, 5), s(500, 5)], field: 'written', expected: [[0.5, 0]] },
  ];

  it.each(cases)('$name', ({ samples, field, expected }) => {
    expect(ratesFrom(samples, field)).toEqual(expected);
  });
});

describe('faultMarkers', () => {
  it('no fault, no markers', () => {
    expect(faultMarkers({ fault: null })).toEqual([]);
  });

  it('every moment, in seconds, with its label and colour', () => {
    expect(faultMarkers({ fault: KILL_TIMELINE })).toEqual([
      { x: 1.5, label: 'kill rabbit1', color: '#dc2626' },
      { x: 3.25, label: 'new leader rabbit2', color: '#7c3aed' },
      { x: 3.5, label: 'restored', color: '#16a34a' },
      { x: 3.9, label: 'rejoined', color: '#0891b2' },
    ]);
  });

  it('a moment at 0 ms is still a marker (0 is not "missing")', () => {
    expect(faultMarkers({ fault: { ...KILL_TIMELINE, faultAtMs: 0, electedAtMs: 0, restoredAtMs: 0, rejoinedAtMs: 0 } }).map((m) => m.x)).toEqual([0, 0, 0, 0]);
  });
});

describe('embedJson', () => {
  const cases: { name: string; value: unknown }[] = [
    { name: 'a closing script tag', value: { s: '</script><script>alert(1)</script>' } },
    { name: 'an HTML comment opener', value: { s: '<!-- x -->' } },
    { name: 'upper-case close tag', value: { s: '</SCRIPT >' } },
    { name: 'ampersands and entities', value: { s: '&lt; &amp; &' } },
    { name: 'line and paragraph separators', value: { s: 'a\u2028b\u2029c' } },
    { name: 'nested', value: { a: [{ b: '<b>' }, 1, null, true], c: { d: '>' } } },
  ];

  it.each(cases)('$name: no < > & or U+2028/9 left raw, parses back to the same value', ({ value }) => {
    const out = embedJson(JSON.stringify(value, null, 2));
    expect(out).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(out)).toEqual(value);
  });
});

describe('loss per run (--runs K): a bar per run and measure, the medians in the title', () => {
  it.each([
    [[], 0],
    [[5], 5],
    [[9_200, 15_200, 18_789, 14_937, 11_000], 14_937],
    [[1, 4], 2.5],
    [[3, 1, 2, 10], 2.5],
  ])('median(%j) = %d', (values, m) => expect(median(values)).toBe(m));

  it('nothing for a single run', () => {
    expect(lossPerRunChart('x', [{ run: 1 }], [{ name: 'lost', of: () => 3 }])).toEqual([]);
  });

  it("compare --runs 3: confirms-off's silent loss per run, its median; confirms-on's runs beside it", () => {
    const off = [9_200, 15_200, 11_000].map((n, i) =>
      compareRun(
        'confirms-off',
        i + 1,
        reconciliationOf(`off-${i}`, [
          ['aw', 0, n],
          ['aw', 1, 20_000 - n],
        ]),
        { samples: samplesUntil(1_000) },
      ),
    );
    const on = [33, 18, 177].map((n, i) =>
      compareRun(
        'confirms-on',
        i + 1,
        reconciliationOf(`on-${i}`, [
          ['awc', 2, n],
          ['awc', 1, 100 - n],
        ]),
        { samples: samplesUntil(1_000) },
      ),
    );
    const page = renderHtmlReport('compare', compareResult([...on, ...off]), TEXT, { generatedAtIso: AT });
    const figs = svgs(page);
    // Two per-run charts (one per mode), then a timeline per run.
    expect(charts(page)).toEqual(['bar', 'bar', 'line', 'line', 'line', 'line', 'line', 'line']);
    expect(page).toContain('confirms-off: lost, silently lost and duplicated, per run (median: lost 0, silently lost 11,000, duplicated 0)');
    expect(page).toContain('confirms-on: lost, silently lost and duplicated, per run (median: lost 0, silently lost 0, duplicated 33)');
    expect(bars(figs[1]!)).toMatchObject({ 'silently lost/run 1': 'run 1 silently lost: 9200', 'silently lost/run 2': 'run 2 silently lost: 15.2k' });
  });

  it('consumer-crash --runs 2: a chart per mode, with its medians', () => {
    const page = renderHtmlReport('consumer-crash', CONSUMER_CRASH_RESULT, TEXT, { generatedAtIso: AT });
    expect(page).toContain('autoack: lost and processed twice, per run (median: lost 50, processed twice 0)');
    expect(page).toContain('manual: lost and processed twice, per run (median: lost 0, processed twice 8)');
  });

  it('producer-crash --runs 2: lost and duplicated per run', () => {
    const second = { ...PRODUCER_CRASH_RESULT.runs[0]!, run: 2, runId: 'pc-2', lost: 0, duplicated: 41 };
    const page = renderHtmlReport('producer-crash', { ...PRODUCER_CRASH_RESULT, runs: [PRODUCER_CRASH_RESULT.runs[0]!, second] }, TEXT, { generatedAtIso: AT });
    expect(page).toContain('naive: lost and duplicated, per run (median: lost 0, duplicated 35)');
  });
});
