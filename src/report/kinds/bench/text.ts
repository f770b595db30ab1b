import type { BenchSample } from '../../../measure/meter.js';
import type { BenchModeResult, BenchQueueRow, BenchResult } from '../../../scenarios/traffic/bench.js';
import { formatMs } from '../../../util/duration.js';
import type { LatencySummary } from '../../../measure/histogram.js';
import { renderTable } from '../../table.js';
import { fitLines } from '../../text-wrap.js';

/** Printers for bench: the per-second line, the table, the CSV. Pure. */

const MB = 1024 * 1024;

/** A latency in ms: two decimals below 10, one below 100, whole from 100; '-' when there is none. */
export function ms(v: number | null | undefined): string {
  if (v === null || v === undefined) return '-';
  return v.toFixed(v < 10 ? 2 : v < 100 ? 1 : 0);
}

function whole(v: number | null): string {
  return v === null ? '-' : String(Math.round(v));
}

function mb(bytes: number): string {
  return (bytes / MB).toFixed(1);
}

/** p50/p95/p99 of a summary, e.g. '5.10/9.80/14.0 ms'; '-' when empty. */
function percentiles(l: LatencySummary): string {
  return l.count === 0 ? '-' : `${ms(l.p50Ms)}/${ms(l.p95Ms)}/${ms(l.p99Ms)} ms`;
}

/** The PerfTest-like line printed once a second while a mode runs. */
export function renderSampleLine(label: string, s: BenchSample, confirms: boolean): string {
  const perSec = (n: number): string => String(s.intervalMs > 0 ? Math.round((n * 1000) / s.intervalMs) : 0);
  const parts = [
    `${label}`,
    `time ${(s.elapsedMs / 1000).toFixed(1)} s`,
    `sent ${perSec(s.published)} msg/s`,
    ...(confirms ? [`confirmed ${perSec(s.confirmed)} msg/s`, `nacked ${s.nacked}`] : []),
    `received ${perSec(s.consumed)} msg/s`,
    ...(confirms ? [`confirm p50/p95/p99 ${percentiles(s.confirmLatency)}`] : []),
    `e2e p50/p95/p99 ${percentiles(s.e2eLatency)}`,
    `cpu ${s.intervalMs > 0 ? Math.round((s.cpuSeconds * 100_000) / s.intervalMs) : 0}%`,
    `rss ${mb(s.rssBytes)} MB`,
  ];
  return parts.join(', ');
}

const confirms = (r: BenchModeResult): boolean => r.mode !== 'none';

/** One column per mode, one row per figure. */
export function renderBenchTable(runs: readonly BenchModeResult[]): string {
  const row = (label: string, f: (r: BenchModeResult) => string | number): [string, ...(string | number)[]] => [label, ...runs.map(f)];
  const lat = (
    label: string,
    pick: (r: BenchModeResult) => LatencySummary,
    key: 'p50Ms' | 'p95Ms' | 'p99Ms' | 'maxMs',
    only?: (r: BenchModeResult) => boolean,
  ) => row(label, (r) => (only && !only(r) ? '-' : ms(pick(r)[key])));
  const rows = [
    row('published', (r) => r.published),
    row('confirmed', (r) => (confirms(r) ? r.confirmed : '-')),
    row('nacked', (r) => (confirms(r) ? r.nacked : '-')),
    row('consumed', (r) => (r.consumers > 0 ? r.consumed : '-')),
    row('publish rate (msg/s)', (r) => whole(r.publishRatePerSec)),
    row('consume rate (msg/s)', (r) => (r.consumers > 0 ? whole(r.consumeRatePerSec) : '-')),
    lat('confirm p50 (ms)', (r) => r.confirmLatency, 'p50Ms', confirms),
    lat('confirm p95 (ms)', (r) => r.confirmLatency, 'p95Ms', confirms),
    lat('confirm p99 (ms)', (r) => r.confirmLatency, 'p99Ms', confirms),
    lat('confirm max (ms)', (r) => r.confirmLatency, 'maxMs', confirms),
    lat('end-to-end p50 (ms)', (r) => r.e2eLatency, 'p50Ms'),
    lat('end-to-end p95 (ms)', (r) => r.e2eLatency, 'p95Ms'),
    lat('end-to-end p99 (ms)', (r) => r.e2eLatency, 'p99Ms'),
    lat('end-to-end max (ms)', (r) => r.e2eLatency, 'maxMs'),
    row('client CPU (s)', (r) => r.cpuSeconds.toFixed(2)),
    row('client CPU (% of a core)', (r) => (r.durationMs > 0 ? whole((r.cpuSeconds * 100_000) / r.durationMs) : '-')),
    row('client CPU per msg (µs)', (r) => whole(r.cpuUsPerMessage)),
    row('client peak RSS (MB)', (r) => mb(r.peakRssBytes)),
  ];
  return renderTable(['', ...runs.map((r) => r.label)], rows);
}

/** A run's per-queue rows; none in a document from before --queues. */
const perQueue = (r: BenchModeResult): readonly BenchQueueRow[] => r.perQueue ?? [];

/** Where a queue's leader was: 'rabbit2', 'rabbit2, moved to rabbit3', '?' where the management API did not say. */
export function leaderText(q: Pick<BenchQueueRow, 'leaderAtStart' | 'leaderAtEnd'>): string {
  const { leaderAtStart: start, leaderAtEnd: end } = q;
  if (start === end) return start ?? '?';
  if (start !== null && end !== null) return `${start}, moved to ${end}`;
  return `${start ?? '?'} (at the end: ${end ?? '?'})`;
}

/** One row per queue, then the run's own figures: the aggregate beside each queue's. */
export function renderQueueTable(r: BenchModeResult): string {
  const c = confirms(r);
  const rows = perQueue(r).map((q) => [
    q.queue,
    leaderText(q),
    q.producers,
    q.consumers,
    q.published,
    r.consumers > 0 ? q.consumed : '-',
    whole(q.publishRatePerSec),
    r.consumers > 0 ? whole(q.consumeRatePerSec) : '-',
    c ? ms(q.confirmLatency.p50Ms) : '-',
    c ? ms(q.confirmLatency.p99Ms) : '-',
  ]);
  rows.push([
    'all queues',
    '',
    r.producers,
    r.consumers,
    r.published,
    r.consumers > 0 ? r.consumed : '-',
    whole(r.publishRatePerSec),
    r.consumers > 0 ? whole(r.consumeRatePerSec) : '-',
    c ? ms(r.confirmLatency.p50Ms) : '-',
    c ? ms(r.confirmLatency.p99Ms) : '-',
  ]);
  return renderTable(
    [
      'queue',
      'leader',
      'producers',
      'consumers',
      'published',
      'consumed',
      'publish rate (msg/s)',
      'consume rate (msg/s)',
      'confirm p50 (ms)',
      'confirm p99 (ms)',
    ],
    rows,
  );
}

/**
 * Under the table: with one queue per run, a line of each run's leader; with several, a table
 * per run, its queues and then all of them. Nothing for a document without per-queue rows.
 */
export function renderPerQueue(runs: readonly BenchModeResult[]): string[] {
  const withRows = runs.filter((r) => perQueue(r).length > 0);
  if (withRows.length === 0) return [];
  if (withRows.every((r) => perQueue(r).length === 1))
    return ['', `queue leaders: ${withRows.map((r) => `${r.label} ${leaderText(perQueue(r)[0]!)}`).join(', ')}`];
  return withRows.flatMap((r) => ['', `${r.label}, per queue:`, renderQueueTable(r)]);
}

/** Remarks under the table: runs that did not end as planned, leaders that moved. */
export function runNotes(r: BenchModeResult): string[] {
  const notes: string[] = [];
  for (const q of perQueue(r))
    if (q.leaderAtStart !== null && q.leaderAtEnd !== null && q.leaderAtStart !== q.leaderAtEnd)
      notes.push(`${r.label}: the leader of ${q.queue} moved from ${q.leaderAtStart} to ${q.leaderAtEnd} during the run`);
  if (r.stoppedBy === 'interrupted') notes.push(`${r.label}: interrupted after ${formatMs(r.durationMs)}: its figures are what was measured until Ctrl+C`);
  if (r.gaveUp) notes.push(`${r.label}: gave up: ${r.gaveUp}`);
  if (r.drained === false)
    notes.push(`${r.label}: consumers read ${r.consumed} of ${r.publishes} messages before the drain timeout; the rest went with the queue`);
  if (confirms(r) && r.stoppedBy !== 'interrupted' && r.confirmed < r.published) {
    notes.push(`${r.label}: ${r.published - r.confirmed} of ${r.published} messages not confirmed (${r.nacked} nacked, ${r.indeterminate} indeterminate)`);
  }
  return notes;
}

function boundText(o: BenchResult['options']): string {
  const parts: string[] = [];
  if (o.durationMs !== undefined) parts.push(formatMs(o.durationMs));
  if (o.count !== undefined) parts.push(`${o.count} messages per producer`);
  return parts.join(' or ');
}

export function renderBench(b: BenchResult): string {
  const o = b.options;
  const plural = (n: number, w: string): string => `${n} ${w}${n === 1 ? '' : 's'}`;
  const rate = o.ratePerSec > 0 ? `${o.ratePerSec} msg/s per producer` : 'as fast as possible';
  const consumers =
    o.consumers > 0 ? `${plural(o.consumers, 'consumer')} (prefetch ${o.prefetch === 0 ? 'unlimited' : o.prefetch}, ack every ${o.ackEvery})` : 'no consumer';
  const queues = o.queues ?? 1;
  const into =
    queues === 1
      ? 'into a fresh quorum queue per mode'
      : `into ${queues} fresh quorum queues per mode (leaders spread over the nodes, producers and consumers round-robin over them)`;
  const lines = [
    `bench: ${plural(o.producers, 'producer')}, ${consumers}; ${o.sizeBytes}-byte persistent messages, ${rate}, ${into}; each mode publishes for ${boundText(o)}`,
    '',
  ];
  if (b.runs.length === 0) lines.push('no mode was measured');
  else lines.push(renderBenchTable(b.runs), ...renderPerQueue(b.runs));
  lines.push('');
  lines.push(
    'none: no confirms, so its publish rate is what the client handed to the socket; tx/N: a commit every N messages (its latency is the commit round trip);',
  );
  lines.push(
    'batch/N: waits for the confirms every N; async/W: at most W unconfirmed. End-to-end: publish to delivery, from the publish time each message carries.',
  );
  if (queues > 1)
    lines.push(
      `Queue i was declared through node i (client-local leader locator); producer and consumer i use queue i mod ${queues}, connected to its node first. A queue's rates are over its own publishing time; 'all queues' is the aggregate.`,
    );
  lines.push(
    'Client CPU and RSS are this process’s: the producers and the consumers run in it, with their bookkeeping. CPU per msg: from the first message written to the last one confirmed (or consumed, if later); connecting and closing are left out.',
  );
  for (const r of b.runs) lines.push(...runNotes(r));
  if (b.interrupted) lines.push('interrupted: the modes after the last one shown were not run');
  return fitLines(lines);
}

export const CSV_HEADER = [
  'mode',
  'second',
  'elapsed_s',
  'interval_s',
  'published',
  'confirmed',
  'nacked',
  'consumed',
  'publish_rate',
  'confirm_rate',
  'consume_rate',
  'confirm_p50_ms',
  'confirm_p95_ms',
  'confirm_p99_ms',
  'e2e_p50_ms',
  'e2e_p95_ms',
  'e2e_p99_ms',
  'cpu_s',
  'rss_mb',
] as const;

/** One row per second per mode (the last row of a mode may cover less than a second). */
export function renderCsv(runs: readonly BenchModeResult[]): string {
  const num = (v: number | null): string => (v === null ? '' : String(Math.round(v * 1000) / 1000));
  const lines = [CSV_HEADER.join(',')];
  for (const r of runs) {
    for (const s of r.samples) {
      const perSec = (n: number): number | null => (s.intervalMs > 0 ? (n * 1000) / s.intervalMs : null);
      lines.push(
        [
          r.label,
          s.second,
          num(s.elapsedMs / 1000),
          num(s.intervalMs / 1000),
          s.published,
          s.confirmed,
          s.nacked,
          s.consumed,
          num(perSec(s.published)),
          num(perSec(s.confirmed)),
          num(perSec(s.consumed)),
          num(s.confirmLatency.p50Ms),
          num(s.confirmLatency.p95Ms),
          num(s.confirmLatency.p99Ms),
          num(s.e2eLatency.p50Ms),
          num(s.e2eLatency.p95Ms),
          num(s.e2eLatency.p99Ms),
          num(s.cpuSeconds),
          num(s.rssBytes / MB),
        ].join(','),
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
