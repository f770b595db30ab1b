import type { AlarmDemoResult } from '../scenarios/alarm-plan.js';
import type { CompareResult, CompareRun } from '../scenarios/compare.js';
import type { ConsumerCrashResult } from '../scenarios/consumer-crash.js';
import type { ProducerCrashResult } from '../scenarios/producer-crash.js';
import type { ConsumerTimeoutDemoResult } from '../scenarios/consumer-timeout-plan.js';
import type { DelayedRetryDemoResult } from '../scenarios/delayed-retry-demo.js';
import type { DlxStrategyResult } from '../scenarios/dlx-strategy-plan.js';
import type { DlqDemoResult } from '../scenarios/dlq-demo.js';
import type { DurabilityDemoResult } from '../scenarios/durability-demo.js';
import type { PrefetchDemoResult } from '../scenarios/prefetch-demo.js';
import type { RetryDemoResult } from '../scenarios/retry-demo.js';
import type { RetryLadderResult } from '../scenarios/retry-ladder.js';
import type { FaultKind } from '../cluster/faults.js';
import type { ChaosResult } from '../scenarios/chaos-plan.js';
import { chaosTotalsTable, nemesisTable } from './chaos.js';
import { toJsonDocument } from './json.js';
import { PALETTE, barChart, dotTimeline, escapeHtml, lineChart, type Band, type Marker } from './svg.js';

/**
 * `--html <file>`: one self-contained page (inline styles, inline SVG, no network fetches) with
 * the terminal report, charts, and the same JSON document `--json` prints, embedded in a
 * <script type="application/json" id="rmq-bench-data">. Pure: data in, markup out.
 */

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:980px;padding:0 12px;color:#111827;background:#fff}
h1,h2,.meta,figcaption{overflow-wrap:anywhere}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.meta{color:#4b5563;margin-bottom:16px}
.verdict{display:inline-block;padding:3px 10px;border-radius:4px;font-weight:600;color:#fff}
.verdict.ok{background:#16a34a}.verdict.failed{background:#dc2626}
pre{background:#f3f4f6;padding:12px;overflow-x:auto;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;border-radius:4px}
figure{margin:12px 0 20px}figcaption{font-weight:600;margin-bottom:4px}
svg.chart{max-width:100%;height:auto;background:#fff;overflow:hidden}
.grid{stroke:#e5e7eb}.axis{stroke:#9ca3af}.tick{font-size:11px;fill:#374151}.label{font-size:12px;fill:#111827}
table.counts{border-collapse:collapse;margin:6px 0 12px;display:block;max-width:100%;overflow-x:auto}table.counts td,table.counts th{border:1px solid #d1d5db;padding:3px 8px;text-align:right}
table.counts th{background:#f9fafb}table.counts td:first-child,table.counts th:first-child{text-align:left}
details summary{cursor:pointer;color:#2563eb}
`;

/** The JSON document, safe inside a <script> element. Pure. */
export function embedJson(json: string): string {
  return json
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/**
 * The start of every page rmq-bench writes, up to <body>: self-contained (a CSP that allows no
 * request, inline styles), the viewport for a phone, the title. Pure.
 */
export function pageHead(title: string, extraStyle = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${escapeHtml(title)}</title>
<style>${STYLE}${extraStyle}</style>
</head>`;
}

export function renderHtmlReport(kind: string, data: object, text: string, generatedAtIso = new Date().toISOString()): string {
  const ok = (data as { ok?: unknown }).ok;
  const verdict = typeof ok === 'boolean' ? `<span class="verdict ${ok ? 'ok' : 'failed'}">${ok ? 'verdict: OK' : 'verdict: FAILED'}</span>` : '';
  const sections = chartsFor(kind, data);
  return `${pageHead(`rmq-bench ${kind}`)}
<body data-kind="${escapeHtml(kind)}">
<h1>rmq-bench ${escapeHtml(kind)}</h1>
<div class="meta">generated ${escapeHtml(generatedAtIso)} ${verdict}</div>
${sections.join('\n')}
<h2>Report</h2>
<pre id="report">${escapeHtml(text)}</pre>
<details><summary>The JSON document (the same one --json prints)</summary><pre id="json-view"></pre></details>
<script type="application/json" id="rmq-bench-data">${embedJson(toJsonDocument(kind, data))}</script>
<script>
(function () {
  var doc = JSON.parse(document.getElementById('rmq-bench-data').textContent);
  document.getElementById('json-view').textContent = JSON.stringify(doc, null, 2);
  document.body.setAttribute('data-ready', String(document.querySelectorAll('svg.chart').length));
})();
</script>
</body>
</html>
`;
}

/** The charts of one --json document of this kind (none for a kind without charts). Pure. */
export function chartsFor(kind: string, data: object): string[] {
  switch (kind) {
    case 'compare':
      return compareCharts(data as CompareResult);
    case 'consumer-crash':
      return consumerCrashCharts(data as ConsumerCrashResult);
    case 'producer-crash':
      return producerCrashCharts(data as ProducerCrashResult);
    case 'prefetch-demo':
      return prefetchCharts(data as PrefetchDemoResult);
    case 'dlq-demo':
      return (data as { mode?: string }).mode === 'strategy' ? dlxStrategyCharts(data as DlxStrategyResult) : dlqDemoCharts(data as DlqDemoResult);
    case 'retry-demo':
      return 'mode' in data ? ladderCharts(data as RetryLadderResult) : retryCharts(data as RetryDemoResult);
    case 'delayed-retry-demo':
      return delayedRetryCharts(data as DelayedRetryDemoResult);
    case 'consumer-timeout-demo':
      return consumerTimeoutCharts(data as ConsumerTimeoutDemoResult);
    case 'alarm-demo':
      return alarmCharts(data as AlarmDemoResult);
    case 'durability-demo':
      return durabilityCharts(data as DurabilityDemoResult);
    case 'bench':
      return benchCharts(data as BenchLike);
    case 'chaos':
      return chaosCharts(data as ChaosResult);
    default:
      return [];
  }
}

/** `cls`: another class beside "counts" (chaos's nemesis history: left-aligned, unwrapped text). */
function countsTable(headers: readonly string[], rows: readonly (readonly (string | number)[])[], cls = ''): string {
  const th = headers.map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  const trs = rows.map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(typeof c === 'number' ? c.toLocaleString('en-US') : c)}</td>`).join('')}</tr>`).join('');
  return `<table class="counts${cls === '' ? '' : ` ${cls}`}"><thead><tr>${th}</tr></thead><tbody>${trs}</tbody></table>`;
}

/** Per-second rates from cumulative counter samples (a producer's, chaos's), at each sample's time in seconds. Pure. */
export function ratesFrom<K extends string>(samples: readonly ({ readonly tMs: number } & { readonly [k in K]: number })[], field: K): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1]!;
    const b = samples[i]!;
    const dt = b.tMs - a.tMs;
    if (dt <= 0) continue;
    out.push([b.tMs / 1000, ((b[field] - a[field]) * 1000) / dt]);
  }
  return out;
}

/** The median of a list (the mean of the two middle values for an even count); 0 for none. Pure. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const v = [...values].sort((a, b) => a - b);
  const mid = Math.floor(v.length / 2);
  return v.length % 2 === 1 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

/**
 * How a count varied from run to run (the reason --runs exists): a bar per run and measure, the
 * median of each in the title. Nothing for a single run. Pure.
 */
export function lossPerRunChart(
  title: string,
  runs: readonly { run: number }[],
  measures: readonly { name: string; of: (i: number) => number; color?: string }[],
): string[] {
  if (runs.length < 2) return [];
  const medians = measures.map((m) => `${m.name} ${fmtCount(median(runs.map((_, i) => m.of(i))))}`).join(', ');
  return [
    barChart({
      title: `${title}, per run (median: ${medians})`,
      categories: runs.map((r) => `run ${r.run}`),
      series: measures.map((m) => ({ name: m.name, values: runs.map((_, i) => m.of(i)), ...(m.color ? { color: m.color } : {}) })),
      yLabel: 'messages',
    }),
  ];
}

const fmtCount = (n: number): string => (Number.isInteger(n) ? n.toLocaleString('en-US') : n.toLocaleString('en-US', { maximumFractionDigits: 1 }));

/** The fault's last moment (the rejoin, else the restore, the election, the fault), ms since the producer started; null without a fault. Pure. */
export function lastFaultEventMs(run: Pick<CompareRun, 'fault'>): number | null {
  const f = run.fault;
  if (!f) return null;
  return f.rejoinedAtMs ?? f.restoredAtMs ?? f.electedAtMs ?? f.faultAtMs;
}

/**
 * A producer's samples carried on, flat, to `untilMs` (the last event of its run): the producer had
 * finished, and a rate of 0 until the rejoin is data, not an empty axis. One flat sample per
 * sampling interval of the run (at least one), so the rate line drops to 0 and stays there. Pure.
 */
export function samplesUntil<S extends { tMs: number }>(samples: readonly S[], untilMs: number | null): S[] {
  const last = samples[samples.length - 1];
  if (!last || untilMs === null || untilMs <= last.tMs) return [...samples];
  const stepMs = samples.length > 1 ? Math.max(1, (last.tMs - samples[0]!.tMs) / (samples.length - 1)) : untilMs - last.tMs;
  const out = [...samples];
  const n = Math.min(2_000, Math.ceil((untilMs - last.tMs) / stepMs));
  for (let i = 1; i <= n; i++) out.push({ ...last, tMs: Math.min(untilMs, last.tMs + i * stepMs) });
  return out;
}

/** The fault window as a band: from the fault to the rejoin (or the last moment known). Pure. */
export function faultWindow(run: Pick<CompareRun, 'fault'>): Band[] {
  const f = run.fault;
  const end = lastFaultEventMs(run);
  if (!f || end === null || end <= f.faultAtMs) return [];
  return [
    {
      from: f.faultAtMs / 1000,
      to: end / 1000,
      label: `${f.kind} ${f.node}: fault until ${f.rejoinedAtMs === null ? 'the last event' : 'rejoin'}`,
      color: '#dc2626',
    },
  ];
}

/** The fault's moments as chart markers, in seconds since the producer started. Pure. */
export function faultMarkers(run: Pick<CompareRun, 'fault'>): Marker[] {
  const f = run.fault;
  if (!f) return [];
  const m: Marker[] = [{ x: f.faultAtMs / 1000, label: `${f.kind} ${f.node}`, color: '#dc2626' }];
  if (f.electedAtMs !== null) m.push({ x: f.electedAtMs / 1000, label: `new leader ${f.newLeader ?? '?'}`, color: '#7c3aed' });
  if (f.restoredAtMs !== null) m.push({ x: f.restoredAtMs / 1000, label: 'restored', color: '#16a34a' });
  if (f.rejoinedAtMs !== null) m.push({ x: f.rejoinedAtMs / 1000, label: 'rejoined', color: '#0891b2' });
  return m;
}

function compareCharts(c: CompareResult): string[] {
  const out: string[] = ['<h2>Totals</h2>'];
  out.push(
    countsTable(
      ['mode', 'runs', 'attempted', 'reported sent', 'confirmed', 'read', 'lost', 'silently lost', 'duplicated', 'recovered'],
      c.totals.map((t) => [t.mode, t.runs, t.attempted, t.reportedSent, t.confirmed, t.read, t.lost, t.silentlyLost, t.duplicated, t.recovered]),
    ),
  );
  const modes = [...new Set(c.runs.map((r) => r.mode))];
  const perRun = modes.flatMap((mode) => {
    const runs = c.runs.filter((r) => r.mode === mode);
    return lossPerRunChart(`${mode}: lost, silently lost and duplicated`, runs, [
      { name: 'lost', of: (i) => runs[i]!.reconciliation.lost, color: PALETTE[3] },
      { name: 'silently lost', of: (i) => runs[i]!.reconciliation.silentlyLost, color: PALETTE[2] },
      { name: 'duplicated', of: (i) => runs[i]!.reconciliation.duplicated, color: PALETTE[4] },
    ]);
  });
  if (perRun.length > 0) out.push('<h2>Loss per run</h2>', ...perRun);
  out.push('<h2>Timelines</h2>');
  for (const run of c.runs) {
    const samples = samplesUntil(run.producer.samples ?? [], lastFaultEventMs(run));
    const series = [
      { name: 'publish rate /s', points: ratesFrom(samples, 'written') },
      ...(run.mode === 'confirms-off' ? [] : [{ name: 'confirm rate /s', points: ratesFrom(samples, 'confirmed') }]),
      { name: 'in flight', points: samples.map((s): [number, number] => [s.tMs / 1000, s.inFlight]), rightAxis: true },
    ];
    const r = run.reconciliation;
    out.push(
      lineChart({
        title: `${run.mode}, run ${run.run}: lost ${r.lost.toLocaleString('en-US')}, silently lost ${r.silentlyLost.toLocaleString('en-US')}, duplicated ${r.duplicated.toLocaleString('en-US')}, recovered ${r.recovered.toLocaleString('en-US')}`,
        series,
        markers: faultMarkers(run),
        bands: faultWindow(run),
        xLabel: 'seconds since the producer started',
        yLabel: 'messages per second',
        yRightLabel: 'in flight',
      }),
    );
  }
  return out;
}

function consumerCrashCharts(c: ConsumerCrashResult): string[] {
  const modes = [...new Set(c.runs.map((r) => r.mode))];
  const sum = (mode: string, f: (r: ConsumerCrashResult['runs'][number]) => number): number =>
    c.runs.filter((r) => r.mode === mode).reduce((a, r) => a + f(r), 0);
  return [
    '<h2>Lost and processed twice, per mode (all runs)</h2>',
    barChart({
      title: 'consumer killed mid-run',
      categories: modes,
      series: [
        { name: 'lost', values: modes.map((m) => sum(m, (r) => r.lost)), color: PALETTE[3] },
        { name: 'processed twice', values: modes.map((m) => sum(m, (r) => r.processedTwice)), color: PALETTE[2] },
        { name: 'duplicates skipped', values: modes.map((m) => sum(m, (r) => r.duplicatesSkipped)), color: PALETTE[1] },
      ],
      yLabel: 'messages',
    }),
    ...modes.flatMap((mode) => {
      const runs = c.runs.filter((r) => r.mode === mode);
      const charts = lossPerRunChart(`${mode}: lost and processed twice`, runs, [
        { name: 'lost', of: (i) => runs[i]!.lost, color: PALETTE[3] },
        { name: 'processed twice', of: (i) => runs[i]!.processedTwice, color: PALETTE[2] },
      ]);
      return charts.length > 0 ? [`<h2>Loss per run: ${escapeHtml(mode)}</h2>`, ...charts] : [];
    }),
  ];
}

/** producer-crash: per mode, what each run lost and read twice (--runs K). */
export function producerCrashCharts(c: ProducerCrashResult): string[] {
  const modes = [...new Set(c.runs.map((r) => r.mode))];
  return [
    '<h2>Lost and duplicated, per mode (all runs)</h2>',
    barChart({
      title: 'producer killed with SIGKILL mid-run',
      categories: modes,
      series: [
        { name: 'lost', values: modes.map((m) => c.totals.find((t) => t.mode === m)?.lost ?? 0), color: PALETTE[3] },
        { name: 'duplicated', values: modes.map((m) => c.totals.find((t) => t.mode === m)?.duplicated ?? 0), color: PALETTE[2] },
      ],
      yLabel: 'messages',
    }),
    ...modes.flatMap((mode) => {
      const runs = c.runs.filter((r) => r.mode === mode);
      const charts = lossPerRunChart(`${mode}: lost and duplicated`, runs, [
        { name: 'lost', of: (i) => runs[i]!.lost, color: PALETTE[3] },
        { name: 'duplicated', of: (i) => runs[i]!.duplicated, color: PALETTE[2] },
      ]);
      return charts.length > 0 ? [`<h2>Loss per run: ${escapeHtml(mode)}</h2>`, ...charts] : [];
    }),
  ];
}

function prefetchCharts(p: PrefetchDemoResult): string[] {
  return [
    '<h2>Who did the work</h2>',
    barChart({
      title: 'messages processed by the fast and the slow consumer, per prefetch',
      categories: p.rows.map((r) => `prefetch ${r.prefetch}`),
      series: [
        { name: 'fast', values: p.rows.map((r) => r.fastProcessed) },
        { name: 'slow', values: p.rows.map((r) => r.slowProcessed) },
      ],
      yLabel: 'messages',
    }),
  ];
}

function dlqDemoCharts(d: DlqDemoResult): string[] {
  return [
    '<h2>Dead letters per reason</h2>',
    barChart({
      title: 'published and found in demo.dlq, per reason',
      categories: d.results.map((r) => r.reason),
      series: [
        { name: 'published', values: d.results.map((r) => r.published) },
        { name: 'expected in demo.dlq', values: d.results.map((r) => r.expectedInDlq) },
        { name: 'found in demo.dlq', values: d.results.map((r) => r.dead.length) },
      ],
      yLabel: 'messages',
    }),
  ];
}

function retryCharts(r: RetryDemoResult): string[] {
  return [
    '<h2>Delivery timeline</h2>',
    dotTimeline({
      title: `each attempt at its measured time (demo.retry TTL ${r.ttlMs} ms)`,
      lanes: [
        {
          name: r.messageId,
          dots: r.attempts.map((a) => ({
            x: a.atMs / 1000,
            label: `attempt ${a.attempt} at ${(a.atMs / 1000).toFixed(2)} s: ${a.outcome}`,
            color: a.outcome === 'processed' ? PALETTE[1] : PALETTE[3],
          })),
        },
      ],
      xLabel: 'seconds since the consumer started',
    }),
  ];
}

function ladderCharts(r: RetryLadderResult): string[] {
  const ids = [...new Set(r.attempts.map((a) => a.messageId))];
  return [
    '<h2>Delivery timeline</h2>',
    dotTimeline({
      title: `each attempt at its measured time; rungs ${r.rungs.map((x) => `${x.ttlMs} ms`).join(', ')}`,
      lanes: ids.map((id) => ({
        name: id,
        dots: r.attempts
          .filter((a) => a.messageId === id)
          .map((a) => ({
            x: a.atMs / 1000,
            label: `attempt ${a.attempt} (${a.routingKey}) at ${(a.atMs / 1000).toFixed(2)} s: ${a.outcome}`,
            color: a.outcome === 'processed' ? PALETTE[1] : PALETTE[3],
          })),
      })),
      xLabel: 'seconds since the publish',
      // Message ids are long (run id and role): shown whole, up to 40 characters.
      laneChars: Math.min(40, Math.max(10, ...ids.map((id) => id.length))),
    }),
  ];
}

function delayedRetryCharts(r: DelayedRetryDemoResult): string[] {
  return [
    '<h2>Delivery timeline</h2>',
    dotTimeline({
      title: `each delivery at its measured time (delayed-retry-type ${r.type}, min ${r.minMs} ms, max ${r.maxMs} ms)`,
      lanes: r.messages.map((id) => ({
        name: id,
        dots: r.deliveries
          .filter((d) => d.messageId === id)
          .map((d) => ({
            x: d.atMs / 1000,
            label: `delivery ${d.round + 1} at ${(d.atMs / 1000).toFixed(2)} s${d.round > 0 ? ` after return #${d.round} (${r.rounds[d.round - 1]?.kind ?? '?'})` : ''}`,
            color: PALETTE[d.round % PALETTE.length],
          })),
      })),
      xLabel: 'seconds since the publish',
    }),
    '<h2>Measured delay against the formula</h2>',
    barChart({
      title: 'expected min(min × x-delivery-count, max) and measured (slowest message), per return',
      categories: r.rounds.map((x) => `#${x.index} ${x.kind}`),
      series: [
        { name: 'expected ms', values: r.rounds.map((x) => x.expectedMs) },
        { name: 'measured ms', values: r.rounds.map((x) => Math.max(0, ...x.measured.map((m) => m.delayMs))) },
      ],
      yLabel: 'ms',
    }),
  ];
}

/** alarm-demo: what each publisher had sent, and the consumer's deliveries, over time; the alarm as a band, the blocks as markers. */
export function alarmCharts(r: AlarmDemoResult): string[] {
  const a = r.timeline;
  const bands: Band[] = a.clearAtMs === null ? [] : [{ from: a.raiseAtMs / 1000, to: a.clearAtMs / 1000, label: `${r.alarm} alarm on ${r.node}` }];
  // One marker per moment, not per publisher: the blocks (and the unblocks) come within a fraction of a second of each other.
  const first = (xs: (number | null)[]): number | null => xs.reduce<number | null>((m, x) => (x === null ? m : m === null ? x : Math.min(m, x)), null);
  const blockedAt = first(r.publishers.map((p) => p.blockedAtMs));
  const unblockedAt = first(r.publishers.map((p) => p.unblockedAtMs));
  const markers: Marker[] = [
    ...(blockedAt === null ? [] : [{ x: blockedAt / 1000, label: 'publishers blocked' }]),
    ...r.publishers.filter((p) => p.gaveUpAtMs !== null).map((p) => ({ x: p.gaveUpAtMs! / 1000, label: `${p.role} gave up`, color: PALETTE[3] })),
    ...(unblockedAt === null ? [] : [{ x: unblockedAt / 1000, label: 'unblocked', color: PALETTE[1] }]),
  ];
  const series = r.publishers.map((p, i) => ({
    name: `${p.role} sent`,
    points: r.samples.filter((x) => x.sent[p.role] !== undefined).map((x) => [x.tMs / 1000, x.sent[p.role] ?? 0] as [number, number]),
    color: PALETTE[i % PALETTE.length],
  }));
  series.push({ name: 'delivered', points: r.samples.map((x) => [x.tMs / 1000, x.delivered] as [number, number]), color: '#444' });
  return [
    '<h2>Sent and delivered</h2>',
    lineChart({
      title: `messages each publisher reports sent, and the consumer's deliveries (all publishers and the backlog); the alarm shaded, from rabbitmqctl to the clear`,
      series,
      markers,
      bands,
      xLabel: 'seconds since the publishers started',
      yLabel: 'messages',
    }),
    '<h2>What each publisher reported, and what arrived</h2>',
    countsTable(
      ['publisher', 'node', 'sent', 'confirmed', 'indeterminate', 'arrived', 'lost'],
      r.publishers.map((p) => [p.role, p.node, p.sent, p.confirmed ?? '-', p.indeterminate ?? '-', p.arrived, p.missing]),
    ),
  ];
}

/** consumer-timeout-demo: each consumer's deliveries and what the broker did to it; the waiting messages per queue. */
export function consumerTimeoutCharts(r: ConsumerTimeoutDemoResult): string[] {
  const at = (ms: number | null): number | null => (ms === null ? null : ms / 1000);
  const lanes = r.runs.flatMap((x) => {
    const naive = [
      ...x.naive.deliveries.map((d) => ({
        x: d.atMs / 1000,
        label: `${d.messageId} delivered${d.redelivered ? ' again' : ''} at ${(d.atMs / 1000).toFixed(2)} s`,
        color: d.messageId === x.slowId ? PALETTE[2] : PALETTE[0],
      })),
      ...[
        [at(x.naive.cancelAtMs), 'basic.cancel from the broker'],
        [at(x.naive.lateAckAtMs), `late ack of ${x.slowId}`],
        [at(x.naive.channelClosedAtMs), `channel closed${x.naive.channelError ? `: ${x.naive.channelError}` : ''}`],
      ]
        .filter((e): e is [number, string] => e[0] !== null)
        .map(([t, label]) => ({ x: t, label: `${label} at ${t.toFixed(2)} s`, color: PALETTE[3] })),
    ];
    const handling = [
      ...x.handling.deliveries.map((d) => ({
        x: d.atMs / 1000,
        label: `${d.messageId} done at ${(d.atMs / 1000).toFixed(2)} s (x-delivery-count ${d.deliveryCount}, x-acquired-count ${d.acquiredCount})`,
        color: d.messageId === x.slowId ? PALETTE[2] : PALETTE[1],
      })),
      ...[
        [at(x.handling.cancelAtMs), 'basic.cancel from the broker'],
        [at(x.handling.resubscribedAtMs), 'subscribed again'],
      ]
        .filter((e): e is [number, string] => e[0] !== null)
        .map(([t, label]) => ({ x: t, label: `${label} at ${t.toFixed(2)} s`, color: PALETTE[3] })),
    ];
    return [
      { name: `${x.via}: naive`, dots: naive },
      { name: `${x.via}: rmq-bench`, dots: handling },
    ];
  });
  const queues = r.runs.flatMap((x) => [
    { name: `${x.via} naive`, queue: x.naive.queue },
    { name: `${x.via} rmq-bench`, queue: x.handling.queue },
  ]);
  return [
    "<h2>Deliveries and the broker's cancels</h2>",
    dotTimeline({
      title: `each consumer's deliveries (the slow message in amber) and the cancel, late ack and channel close (red); timeout ${r.timeoutMs} ms`,
      lanes,
      xLabel: 'seconds since the consumers started',
      laneChars: Math.max(...lanes.map((l) => l.name.length)),
    }),
    '<h2>Messages waiting</h2>',
    lineChart({
      title: 'ready messages in each queue (a passive declare every 250 ms)',
      series: queues.map((q, i) => ({
        name: q.name,
        points: r.samples.map((p) => [p.tMs / 1000, p.ready[q.queue] ?? 0] as [number, number]),
        color: PALETTE[i % PALETTE.length],
      })),
      markers: r.runs.filter((x) => x.naive.cancelAtMs !== null).map((x) => ({ x: x.naive.cancelAtMs! / 1000, label: `${x.via} cancel` })),
      xLabel: 'seconds since the consumers started',
      yLabel: 'ready',
    }),
  ];
}

/** dlq-demo --strategy: where each run's dead letters ended, per strategy. */
export function dlxStrategyCharts(r: DlxStrategyResult): string[] {
  return [
    '<h2>Dead letters per run</h2>',
    barChart({
      title: `${r.count} messages rejected a run while the DLQ's leader was under '${r.fault}': in the DLQ, still in the source, lost`,
      categories: r.runs.map((x) => `${x.variant} #${x.run}`),
      series: [
        { name: 'in the DLQ', values: r.runs.map((x) => x.inDlq), color: PALETTE[1] },
        { name: 'left in the source', values: r.runs.map((x) => x.leftInSource), color: PALETTE[2] },
        { name: 'lost', values: r.runs.map((x) => x.lost), color: PALETTE[3] },
      ],
      yLabel: 'messages',
    }),
  ];
}

/** The fields of bench's result the charts read. */
interface BenchLike {
  runs: {
    label: string;
    publishRatePerSec: number | null;
    consumeRatePerSec: number | null;
    confirmLatency: { p50Ms: number | null; p95Ms: number | null; p99Ms: number | null; maxMs: number | null };
    e2eLatency: { p50Ms: number | null; p95Ms: number | null; p99Ms: number | null; maxMs: number | null };
  }[];
}

function benchCharts(b: BenchLike): string[] {
  const labels = b.runs.map((r) => r.label);
  const pct = (f: (r: BenchLike['runs'][number]) => number | null): number[] => b.runs.map((r) => f(r) ?? 0);
  return [
    '<h2>Throughput per mode</h2>',
    barChart({
      title: 'publish and consume rate',
      categories: labels,
      series: [
        { name: 'publish /s', values: pct((r) => r.publishRatePerSec) },
        { name: 'consume /s', values: pct((r) => r.consumeRatePerSec) },
      ],
      yLabel: 'messages per second',
    }),
    '<h2>Confirm latency per mode</h2>',
    barChart({
      title: 'publish to broker ack (tx: the commit round trip)',
      categories: labels,
      series: [
        { name: 'p50', values: pct((r) => r.confirmLatency.p50Ms) },
        { name: 'p95', values: pct((r) => r.confirmLatency.p95Ms) },
        { name: 'p99', values: pct((r) => r.confirmLatency.p99Ms) },
        { name: 'max', values: pct((r) => r.confirmLatency.maxMs) },
      ],
      yLabel: 'ms',
    }),
    '<h2>End-to-end latency per mode</h2>',
    barChart({
      title: 'publish to delivery',
      categories: labels,
      series: [
        { name: 'p50', values: pct((r) => r.e2eLatency.p50Ms) },
        { name: 'p95', values: pct((r) => r.e2eLatency.p95Ms) },
        { name: 'p99', values: pct((r) => r.e2eLatency.p99Ms) },
        { name: 'max', values: pct((r) => r.e2eLatency.maxMs) },
      ],
      yLabel: 'ms',
    }),
  ];
}

function durabilityCharts(d: DurabilityDemoResult): string[] {
  return [
    '<h2>What survived the restart</h2>',
    barChart({
      title: `confirmed before, found after every node was ${d.how === 'stop' ? 'stopped' : 'killed'} and started`,
      categories: d.rows.map((r) => `${r.queueType} ${r.deliveryMode}`),
      series: [
        { name: 'confirmed', values: d.rows.map((r) => r.confirmed) },
        { name: 'survived', values: d.rows.map((r) => r.survived), color: PALETTE[1] },
        { name: 'the article says', values: d.rows.map((r) => r.expected), color: PALETTE[7] },
      ],
      yLabel: 'messages',
    }),
  ];
}

const FAULT_COLOR: Record<FaultKind, string> = {
  kill: '#dc2626',
  stop: '#d97706',
  pause: '#7c3aed',
  disconnect: '#0891b2',
  partition: '#db2777',
  latency: '#ca8a04',
  'quorum-loss': '#991b1b',
};

/** Each fault as a band, from its issue until the cluster was whole again (or the heal, or the end), in seconds. Pure. */
export function faultBands(r: Pick<ChaosResult, 'faults' | 'durationMs' | 'samples'>): Band[] {
  const endMs = Math.max(r.durationMs, r.samples.at(-1)?.tMs ?? 0);
  return r.faults.map((f) => ({
    from: f.issuedAtMs / 1000,
    to: Math.max(f.issuedAtMs, f.wholeAtMs ?? f.restoredAtMs ?? endMs) / 1000,
    label: `${f.kind} ${f.nodes.length > 0 ? f.nodes.join('+') : '(not applied)'}`,
    color: FAULT_COLOR[f.kind],
  }));
}

function chaosCharts(r: ChaosResult): string[] {
  const totals = chaosTotalsTable(r);
  const out = ['<h2>Totals</h2>', countsTable(totals.headers, totals.rows), '<h2>Timeline</h2>'];
  const t = r.totals;
  out.push(
    lineChart({
      title: `all producers and consumers, each fault shaded until the cluster was whole again: lost ${t.lost.toLocaleString('en-US')} of ${t.confirmed.toLocaleString('en-US')} confirmed, duplicated ${t.duplicated.toLocaleString('en-US')}`,
      series: [
        { name: 'written /s', points: ratesFrom(r.samples, 'written') },
        { name: 'confirmed /s', points: ratesFrom(r.samples, 'confirmed') },
        { name: 'consumed /s', points: ratesFrom(r.samples, 'consumed') },
        { name: 'in flight', points: r.samples.map((s): [number, number] => [s.tMs / 1000, s.inFlight]), rightAxis: true },
      ],
      bands: faultBands(r),
      xLabel: 'seconds since the run started',
      yLabel: 'messages per second',
      yRightLabel: 'in flight',
    }),
  );
  out.push('<h2>Nemesis</h2>');
  if (r.faults.length === 0) out.push('<p>No fault was injected.</p>');
  else {
    const history = nemesisTable(r);
    // Scoped here so that the other kinds' pages stay as they were.
    out.push('<style>table.history td,table.history th{text-align:left;white-space:nowrap}</style>');
    out.push(`<div style="overflow-x:auto">${countsTable(history.headers, history.rows, 'history')}</div>`);
  }
  return out;
}
