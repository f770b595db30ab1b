import type { LatencySummary } from '../../../measure/histogram.js';
import type { ChaosLiveSample } from '../../../scenarios/under-faults/chaos.js';
import {
  type ChaosResult,
  type ChaosTotals,
  type DrainEnd,
  type FaultAvailability,
  type FaultRecord,
  STUCK_UNACKED_MS,
} from '../../../scenarios/under-faults/chaos-plan.js';
import { formatMs } from '../../../util/duration.js';
import { orderLines } from '../../order-text.js';
import { renderTable } from '../../table.js';
import { fitLines } from '../../text-wrap.js';

/** chaos's printers: result → text for stderr, and the one-line progress. Pure. */

type Cell = string | number;
type Table = { headers: string[]; rows: Cell[][] };

/** 12,345: counts with thousands separators (the table still right-aligns them). */
function count(n: number): string {
  return n.toLocaleString('en-US');
}

function ms(v: number | null): string {
  return v === null ? '-' : `${v.toFixed(v < 10 ? 2 : 0)} ms`;
}

function span(from: number | null, to: number | null): string {
  return from === null || to === null ? '-' : formatMs(to - from);
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

/** The totals, a column for the confirming producers and one for the control producer (if any). */
export function chaosTotalsTable(r: Pick<ChaosResult, 'totals' | 'control'>): Table {
  const cols: { t: ChaosTotals; confirms: boolean }[] = [{ t: r.totals, confirms: true }];
  if (r.control) cols.push({ t: r.control, confirms: false });
  const row = (label: string, f: (t: ChaosTotals) => number, confirmsOnly = false): Cell[] => [
    label,
    ...cols.map((c) => (confirmsOnly && !c.confirms ? '-' : count(f(c.t)))),
  ];
  return {
    headers: ['', 'with confirms', ...(r.control ? ['control (no confirms)'] : [])],
    rows: [
      row('attempted', (t) => t.attempted),
      row('reported sent', (t) => t.written),
      row('confirmed', (t) => t.confirmed, true),
      row('consumed', (t) => t.read),
      row('lost', (t) => t.lost, true),
      row('silently lost', (t) => t.silentlyLost),
      row('indeterminate unread', (t) => t.indeterminateUnread),
      row('recovered', (t) => t.recovered),
      row('duplicated', (t) => t.duplicated),
      row('duplicate deliveries', (t) => t.duplicateDeliveries),
    ],
  };
}

/** The nodes a producer connected to, in order; a long list as its first two and last two (the JSON has all). */
export function connections(nodes: readonly string[]): string {
  if (nodes.length === 0) return '-';
  if (nodes.length <= 5) return nodes.join(' → ');
  return `${nodes.slice(0, 2).join(' → ')} → … (${nodes.length - 4} more) → ${nodes.slice(-2).join(' → ')}`;
}

/** "q.2" for "<queuePrefix>.2"; any other name as it is. */
function shortQueue(name: string, prefix: string): string {
  return name.startsWith(`${prefix}.`) ? `q.${name.slice(prefix.length + 1)}` : name;
}

/** The queues whose leader differs before the fault and once whole again: "q.2 rabbit1→rabbit3". */
export function leadersChanged(f: Pick<FaultRecord, 'leadersBefore' | 'leadersAfter'>, queuePrefix: string): string[] {
  const names = [...new Set([...Object.keys(f.leadersBefore), ...Object.keys(f.leadersAfter)])];
  return names
    .filter((q) => (f.leadersBefore[q] ?? null) !== (f.leadersAfter[q] ?? null))
    .map((q) => `${shortQueue(q, queuePrefix)} ${f.leadersBefore[q] ?? '?'}→${f.leadersAfter[q] ?? '?'}`);
}

/** The nemesis history, one row per fault; an error column only when some fault has an error. */
export function nemesisTable(r: Pick<ChaosResult, 'faults' | 'availability' | 'options'>): Table {
  const byIndex = new Map<number, FaultAvailability>(r.availability.map((a) => [a.index, a]));
  const withErrors = r.faults.some((f) => f.error !== null);
  const headers = ['#', 'at (s)', 'fault', 'target', 'node(s)', 'held', 'heal→whole', 'leaders changed', 'stall', 'heal→first confirm'];
  if (withErrors) headers.push('error');
  const rows = r.faults.map((f): Cell[] => {
    const a = byIndex.get(f.index);
    const changed = leadersChanged(f, r.options.queuePrefix);
    const row: Cell[] = [
      f.index,
      (f.issuedAtMs / 1000).toFixed(1),
      f.kind,
      f.reason === '' ? f.target : f.reason,
      f.shape ?? (f.nodes.length > 0 ? f.nodes.join('+') : '-'),
      // Held from the issue: a stop is on while the node shuts down.
      f.appliedAtMs === null ? '-' : span(f.issuedAtMs, f.restoredAtMs),
      span(f.restoredAtMs, f.wholeAtMs),
      changed.length > 0 ? changed.join(', ') : 'none',
      a ? formatMs(a.stallMs) : '-',
      a?.healToConfirmMs == null ? '-' : formatMs(a.healToConfirmMs),
    ];
    if (withErrors) row.push(f.error ?? '');
    return row;
  });
  return { headers, rows };
}

function producersTable(r: ChaosResult): Table {
  return {
    headers: ['producer', 'queue', 'confirms', 'reconnects', 'longest stall', 'nodes connected', 'lost', 'silently lost', 'duplicated'],
    rows: r.producers.map((p) => [
      p.confirms ? p.producer : `${p.producer} (control)`,
      p.queue,
      p.confirms ? 'yes' : 'no',
      p.reconnects,
      formatMs(p.longestStallMs),
      connections(p.connectedTo),
      p.confirms ? count(p.reconciliation.lost) : '-',
      count(p.reconciliation.silentlyLost),
      count(p.reconciliation.duplicated),
    ]),
  };
}

/** "producer 1 (q.1)", "producer 4 (control, chaos.control)": whose reads an order line is about. */
export function producerLabel(p: ChaosResult['producers'][number], queuePrefix: string): string {
  return `producer ${p.producer} (${p.confirms ? '' : 'control, '}${shortQueue(p.queue, queuePrefix)})`;
}

/** A line per producer: the order its messages were consumed in, per consumer (a finding line under it when some is unexplained). */
function orderBlock(r: ChaosResult): string[] {
  if (r.producers.length === 0) return [];
  return [
    'order of the reads (each consumer in the order it was delivered to; not part of the verdict):',
    ...r.producers.flatMap((p) => orderLines(`  ${producerLabel(p, r.options.queuePrefix)}`, p.reconciliation.order)),
  ];
}

function consumersTable(r: ChaosResult): Table {
  return {
    headers: ['consumer', 'queue', 'received', 'processed', 'duplicates skipped', 'reconnects'],
    // A polling consumer (basic.get, --polling) is marked.
    rows: r.consumers.map((c) => [
      c.polling ? `${c.consumer} (poll)` : c.consumer,
      c.queue,
      count(c.received),
      count(c.processed),
      count(c.duplicatesSkipped),
      c.reconnects,
    ]),
  };
}

function latencyTable(latency: readonly { phase: string; summary: LatencySummary }[]): Table {
  return {
    headers: ['phase', 'confirms', 'p50', 'p95', 'p99', 'max'],
    rows: latency.map(({ phase, summary: s }) => [phase, count(s.count), ms(s.p50Ms), ms(s.p95Ms), ms(s.p99Ms), ms(s.maxMs)]),
  };
}

const table = (t: Table): string => renderTable(t.headers, t.rows);

function header(r: ChaosResult): string {
  const o = r.options;
  const producers = `${plural(o.producers, 'producer')} (confirms)${r.control ? ' + 1 control (no confirms)' : ''}`;
  const traffic = `${producers} at ${count(o.ratePerSec)}/s each, ${plural(o.consumers, 'consumer')}, ${plural(o.queues, 'quorum queue')}`;
  const nemesis = `${plural(r.faults.length, 'fault')} (kinds ${o.faults.join(', ')}; one every ${formatMs(o.intervalMs)}, held ${formatMs(o.holdMs)}), seed ${o.seed}`;
  return `chaos: ${formatMs(r.durationMs)}, ${traffic}; ${nemesis}`;
}

function controlLine(c: ChaosTotals): string {
  const gone = c.silentlyLost + c.lost;
  if (gone === 0) return `control (no confirms): no message lost this time (${count(c.read)} of ${count(c.attempted)} consumed)`;
  return `control (no confirms): ${count(gone)} of ${count(c.attempted)} messages silently lost, while the producer reported ${count(c.written)} as sent`;
}

/** What the drain left in the queues, when it did not end with every queue empty; none otherwise. */
export function drainLines(drain: DrainEnd | null | undefined): string[] {
  if (!drain || drain.ended === 'empty') return [];
  const queues = drain.left
    .map(
      (q) =>
        `${q.queue} ${count(q.ready)} ready, ${count(q.unacknowledged)} unacknowledged (it counts ${plural(q.consumersCounted, 'consumer')}, ${count(q.consumersListed)} on live channels)`,
    )
    .join('; ');
  const why =
    drain.ended === 'stuck'
      ? `nothing delivered for ${formatMs(STUCK_UNACKED_MS)} while the broker held messages unacknowledged for consumers that did not receive them`
      : 'its deadline passed with messages still queued';
  return [
    `the drain ended after ${formatMs(drain.waitedMs)}: ${why}: ${queues || 'no queue answered'}`,
    '  a confirmed message among them that no consumer read counts as lost above; one read already counts once',
  ];
}

export function renderChaos(r: ChaosResult): string {
  const lines = [header(r), '', table(chaosTotalsTable(r))];
  if (r.control) lines.push(controlLine(r.control));
  const samples = r.unexpectedSamples.length > 0 ? ` (first ids: ${r.unexpectedSamples.join(', ')})` : '';
  lines.push(`the idempotent store absorbed ${plural(r.absorbed, 'duplicate delivery', 'duplicate deliveries')}; unexpected: ${count(r.unexpected)}${samples}`);
  lines.push(...drainLines(r.drain));
  lines.push('', 'producers:', table(producersTable(r)));
  if (r.consumers.length > 0) lines.push('', 'consumers:', table(consumersTable(r)));
  const order = orderBlock(r);
  if (order.length > 0) lines.push('', ...order);
  lines.push('');
  if (r.faults.length === 0) lines.push('nemesis: no fault was injected');
  else lines.push('nemesis (times since the run started):', table(nemesisTable(r)));
  for (const s of r.skippedKinds) lines.push(`${s.kind} left out: ${s.why}`);
  if (r.latency.length > 0) lines.push('', 'confirm latency by phase:', table(latencyTable(r.latency)));
  lines.push('');
  if (r.interrupted) lines.push('interrupted (Ctrl+C): the figures are what was measured until then');
  if (r.ok) {
    lines.push(`verdict: OK — 0 of ${count(r.totals.confirmed)} confirmed messages lost over ${plural(r.faults.length, 'fault')}`);
  } else {
    lines.push('verdict: FAILED');
    for (const reason of r.reasons) lines.push(`  ${reason}`);
  }
  return fitLines(lines);
}

/**
 * One short progress line: "chaos 42/300 s: written 8,400, confirmed 8,380, consumed 8,300, in
 * flight 20, now: kill rabbit2 (holding)", and with --control what its producer wrote.
 */
export function renderChaosLive(s: ChaosLiveSample): string {
  const at = `${Math.floor(Math.max(0, s.elapsedMs) / 1000)}/${Math.round(s.durationMs / 1000)} s`;
  const counts = `written ${count(s.written)}, confirmed ${count(s.confirmed)}, consumed ${count(s.consumed)}, in flight ${count(s.inFlight)}`;
  const control = s.controlWritten === null ? '' : `, control written ${s.controlWritten}`;
  return `chaos ${at}: ${counts}${s.phase === '' ? '' : `, now: ${s.phase}`}${control}`;
}
