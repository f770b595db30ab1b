import type { PublisherResult } from '../amqp/publisher-result.js';
import type { Reconciliation } from '../ledger/reconcile.js';
import type { CompareResult, CompareRun, ModeTotals } from '../scenarios/compare.js';
import { formatMs } from '../util/duration.js';
import type { LatencySummary } from '../measure/histogram.js';
import { renderTable } from './table.js';

/** Printers for producer, verify and compare: result → text. Pure. */

const MODE_LABEL = { 'confirms-on': 'confirms on', 'confirms-off': 'confirms off' } as const;

export function latencyLine(l: LatencySummary): string {
  if (l.count === 0) return 'none';
  const f = (v: number | null): string => (v === null ? '-' : `${v.toFixed(v < 10 ? 2 : 0)} ms`);
  return `p50 ${f(l.p50Ms)}, p95 ${f(l.p95Ms)}, p99 ${f(l.p99Ms)}, max ${f(l.maxMs)} (${l.count} confirms)`;
}

/** The plain-words verdict for one mode's totals. */
export function modeVerdict(t: ModeTotals): string {
  const runs = t.runs > 1 ? ` over ${t.runs} runs` : '';
  if (t.mode === 'confirms-off') {
    if (t.silentlyLost + t.lost === 0) {
      return `confirms off: no message lost this time${runs} (${t.read} of ${t.attempted} read). Loss depends on timing: try --runs 5 or a higher --count.`;
    }
    return `confirms off: ${t.silentlyLost} of ${t.attempted} messages silently lost${runs}, while the producer reported ${t.reportedSent === t.attempted ? `all ${t.reportedSent}` : t.reportedSent} as sent.`;
  }
  const dup = t.duplicated > 0 ? `; ${t.duplicated} delivered twice (at-least-once: make consumers idempotent)` : '';
  if (t.lost === 0) return `confirms on: 0 of ${t.confirmed} confirmed messages lost${runs}${dup}.`;
  return `confirms on: ${t.lost} confirmed messages LOST${runs}: the broker confirmed them and they were never read${dup}.`;
}

export function renderTotals(totals: readonly ModeTotals[]): string {
  const rows: [string, ...(string | number)[]][] = [
    ['runs', ...totals.map((t) => t.runs)],
    ['attempted', ...totals.map((t) => t.attempted)],
    ['reported sent', ...totals.map((t) => t.reportedSent)],
    ['confirmed', ...totals.map((t) => (t.mode === 'confirms-off' ? '-' : t.confirmed))],
    ['read', ...totals.map((t) => t.read)],
    ['lost', ...totals.map((t) => (t.mode === 'confirms-off' ? '-' : t.lost))],
    ['silently lost', ...totals.map((t) => t.silentlyLost)],
    ['duplicated', ...totals.map((t) => t.duplicated)],
    ['recovered', ...totals.map((t) => t.recovered)],
    ['reconnects', ...totals.map((t) => t.reconnects)],
    ['longest stall', ...totals.map((t) => formatMs(t.maxStallMs))],
  ];
  return renderTable(['', ...totals.map((t) => MODE_LABEL[t.mode])], rows);
}

function timeline(r: CompareRun): string {
  const f = r.fault;
  if (!f) return `  ${MODE_LABEL[r.mode]} run ${r.run}: no fault`;
  const at = (v: number | null): string => (v === null ? '-' : `${(v / 1000).toFixed(2)} s`);
  const parts = [
    `${f.kind} ${[f.node, ...(f.alsoFaulted ?? [])].join(' and ')} at ${at(f.faultAtMs)}`,
    // latency and quorum-loss await no election (none is needed, or none is possible).
    f.electedAtMs === null && f.error === null && f.restoredAtMs !== null
      ? 'no new leader while faulted'
      : `new leader ${f.newLeader ?? '?'} at ${at(f.electedAtMs)}${f.electionMs === null ? '' : ` (election ${formatMs(f.electionMs)})`}`,
    `producer resumed at ${at(f.producerResumedAtMs)}`,
    `restored at ${at(f.restoredAtMs)}, back at ${at(f.rejoinedAtMs)}`,
  ];
  return `  ${MODE_LABEL[r.mode]} run ${r.run}: ${parts.join('; ')}${f.error ? `; fault error: ${f.error}` : ''}`;
}

export function renderCompare(c: CompareResult): string {
  const o = c.options;
  const fault = o.fault === 'none' ? 'no fault' : `fault '${o.fault}' on the leader after ${Math.round(o.faultAt * 100)}% of the messages`;
  const head = `compare: ${o.count} messages per run to ${o.queue}, ${o.ratePerSec > 0 ? `${o.ratePerSec}/s` : 'as fast as possible'}, producer connected first to the leader; ${fault}`;
  const lines = [head, '', renderTotals(c.totals), '', 'timeline (since the producer started):', ...c.runs.map(timeline), ''];
  const late = c.runs.filter((r) => r.lateCopies.length > 0);
  if (late.length > 0) {
    const n = late.reduce((a, r) => a + r.lateCopies.length, 0);
    lines.push(
      `late copies: ${n} message${n === 1 ? '' : 's'} of an earlier run read in a later run's drain (${late.map((r) => `run ${r.run}: ${r.lateCopies.join(', ')}`).join('; ')}).`,
      "  Each was already read in its own run: published again after the producer gave up a silent connection, the first copy reached the queue after that run's drain. Counted as duplicates of their run, not as unexpected.",
      '',
    );
  }
  const on = c.runs.filter((r) => r.mode === 'confirms-on');
  if (on.length > 0) {
    lines.push(`confirm latency (confirms on, run 1): ${latencyLine(on[0]!.producer.confirmLatency)}`);
    lines.push(`  around the fault: ${latencyLine(on[0]!.producer.confirmLatencyAroundFault)}`);
    lines.push('');
  }
  if (c.partial) {
    const p = c.partial;
    lines.push(
      `interrupted during ${MODE_LABEL[p.mode]} run ${p.run}: the producer had written ${p.producer.written} and had ${p.producer.confirmed} confirmed; the queue was not drained`,
    );
  }
  for (const t of c.totals) if (t.runs > 0) lines.push(modeVerdict(t));
  if (c.interrupted) lines.push('verdict: none (interrupted)');
  else lines.push(c.ok ? 'verdict: OK (no confirmed message lost)' : 'verdict: FAILED (a confirmed message was lost, or an unexpected one read)');
  return lines.join('\n');
}

export function renderProducer(r: PublisherResult): string {
  const confirms = r.mode !== 'none';
  const rows: [string, string][] = [
    ['mode', r.mode === 'none' ? 'no confirms (fire and forget)' : r.mode === 'tx' ? 'transactions' : `${r.mode} confirms`],
    ['messages', `${r.count}`],
    ['written (reported sent)', `${r.written}`],
    ...(confirms
      ? ([
          ['confirmed', `${r.confirmed}`],
          ['nacked', `${r.nacked}`],
          ['indeterminate', `${r.indeterminate} (published again: ${r.republished})`],
        ] as [string, string][])
      : []),
    ['returned (mandatory)', `${r.returned}`],
    ['reconnects', `${r.reconnects}`],
    ['duration', `${formatMs(r.durationMs)} (${Math.round(r.publishRatePerSec)} publishes/s)`],
    ['longest stall', formatMs(r.longestStallMs)],
    ...(r.blocks > 0 ? ([['blocked by the broker', `${r.blocks}× (resource alarm), ${formatMs(r.blockedMs)} in all`]] as [string, string][]) : []),
    ...(confirms ? ([['confirm latency', latencyLine(r.confirmLatency)]] as [string, string][]) : []),
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  const text = rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`);
  if (!confirms) text.push('without confirms the producer only knows what it wrote to the socket: run `rmq-bench verify` to see what arrived');
  const unflushed = flushLine(r);
  if (unflushed) text.push(unflushed);
  if (r.gaveUp) text.push(`gave up: ${r.gaveUp}`);
  return text.join('\n');
}

/**
 * What the end could not hand over: the broker had not read everything written (its channel
 * close-ok did not come), typically while a resource alarm blocked the connection. undefined
 * when the end went cleanly.
 */
export function flushLine(r: Pick<PublisherResult, 'flush' | 'mode'>): string | undefined {
  const f = r.flush;
  if (!f || f.channel === 'closed') return undefined;
  const why = f.blockedBy ? `the connection was blocked by the broker (${f.blockedBy})` : f.channel === 'lost' ? 'the connection was lost' : 'no close-ok came';
  const buffered =
    f.bufferedBytes > 0
      ? `; ${f.bufferedBytes} bytes${f.bytesPerPublish > 0 ? ` (about ${Math.ceil(f.bufferedBytes / f.bytesPerPublish)} messages)` : ''} never left this process`
      : '; nothing was left in this process (what the kernel still held may yet arrive)';
  const what = r.mode === 'none' ? 'messages reported written may not have reached it' : 'unconfirmed messages are indeterminate';
  return `not flushed: the broker did not confirm reading everything (${why})${buffered}; ${what}`;
}

export function renderReconciliation(r: Reconciliation): string {
  const rows: [string, number][] = [
    ['attempted', r.counts.attempted],
    ['written', r.counts.written],
    ['confirmed', r.counts.confirmed],
    ['read (distinct)', r.counts.readDistinct],
    ['lost (confirmed, never read)', r.lost],
    ['silently lost (written, no confirm, never read)', r.silentlyLost],
    ['known failed (nacked/returned, never read)', r.knownFailed],
    ['indeterminate, never read', r.indeterminateUnread],
    ['never written', r.neverWritten],
    ['recovered (indeterminate, yet read)', r.recovered],
    ['duplicated', r.duplicated],
    ['unexpected', r.counts.unexpected],
  ];
  const w = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, v]) => `${k.padEnd(w)}  ${String(v).padStart(8)}`);
  if (r.samples.lost.length > 0) lines.push(`lost sequences (first ${r.samples.lost.length}): ${r.samples.lost.join(', ')}`);
  if (r.samples.silentlyLost.length > 0) lines.push(`silently lost sequences (first ${r.samples.silentlyLost.length}): ${r.samples.silentlyLost.join(', ')}`);
  for (const a of r.advice) lines.push(a);
  lines.push(r.verdict.ok ? 'verdict: OK' : `verdict: FAILED: ${r.verdict.reasons.join('; ')}`);
  return lines.join('\n');
}
