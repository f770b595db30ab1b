import type { CompareResult, CompareRun, ModeTotals } from '../../../scenarios/under-faults/compare.js';
import { flagsText } from '../../../faults/applied.js';
import { formatMs } from '../../../util/duration.js';
import { renderTable } from '../../table.js';
import { latencyLine } from '../producer/text.js';
import { isConfirmingMode, modeLabel } from '../../../scenarios/under-faults/compare-modes.js';
import { orderLines } from '../../order-text.js';
import { fitLines } from '../../text-wrap.js';
import { stuckText } from '../../../measure/stuck-deliveries.js';

/** compare's printers: result → text. Pure. */

/** The plain-words verdict for one mode's totals. */
export function modeVerdict(t: ModeTotals): string {
  const runs = t.runs > 1 ? ` over ${t.runs} runs` : '';
  const label = modeLabel(t.mode);
  if (!isConfirmingMode(t.mode)) {
    if (t.silentlyLost + t.lost === 0) {
      return `${label}: no message lost this time${runs} (${t.read} of ${t.attempted} read). Loss depends on timing: try --runs 5 or a higher --count.`;
    }
    return `${label}: ${t.silentlyLost} of ${t.attempted} messages silently lost${runs}, while the producer reported ${t.reportedSent === t.attempted ? `all ${t.reportedSent}` : t.reportedSent} as sent.`;
  }
  const dup = t.duplicated > 0 ? `; ${t.duplicated} delivered twice (at-least-once: make consumers idempotent)` : '';
  const what = t.outcomes ? 'accepted' : 'confirmed';
  const told = t.outcomes ? outcomesTold(t.outcomes) : t.stream ? streamTold(t.stream) : '';
  if (t.lost === 0) return `${label}: 0 of ${t.confirmed} ${what} messages lost${runs}${told}${dup}.`;
  return `${label}: ${t.lost} ${what} messages LOST${runs}: the broker ${what} them and they were never read${told}${dup}.`;
}

/** What the outcomes told the producer besides accepted, as a clause; '' when nothing. */
function outcomesTold(o: NonNullable<ModeTotals['outcomes']>): string {
  const parts = [
    o.released > 0 ? `${o.released} released` : '',
    o.rejected > 0 ? `${o.rejected} rejected` : '',
    o.modified > 0 ? `${o.modified} modified` : '',
    o.inDoubt + o.timedOut > 0 ? `${o.inDoubt + o.timedOut} in doubt` : '',
  ].filter(Boolean);
  return parts.length === 0 ? '' : ` (the producer was told: ${parts.join(', ')}; sent again where it could be)`;
}

/** What the stream side sent again and what deduplication was asked to drop, as a clause; '' when nothing was sent again. */
function streamTold(o: NonNullable<ModeTotals['stream']>): string {
  const again = o.inDoubtResent + o.timedOut;
  if (again === 0) return '';
  return ` (${again} sent again with the same publishing ids; of the ${o.resentOnReconnect} a new session sent again, the broker held ${o.storedAlready} already and deduplication dropped those copies)`;
}

export function renderTotals(totals: readonly ModeTotals[]): string {
  const rows: [string, ...(string | number)[]][] = [
    ['runs', ...totals.map((t) => t.runs)],
    ['attempted', ...totals.map((t) => t.attempted)],
    ['reported sent', ...totals.map((t) => t.reportedSent)],
    ['confirmed', ...totals.map((t) => (isConfirmingMode(t.mode) ? t.confirmed : '-'))],
    ...outcomeRows(totals),
    ...streamRows(totals),
    ['read', ...totals.map((t) => t.read)],
    ['lost', ...totals.map((t) => (isConfirmingMode(t.mode) ? t.lost : '-'))],
    ['silently lost', ...totals.map((t) => t.silentlyLost)],
    ['duplicated', ...totals.map((t) => t.duplicated)],
    ['recovered', ...totals.map((t) => t.recovered)],
    ['reconnects', ...totals.map((t) => t.reconnects)],
    ['longest stall', ...totals.map((t) => formatMs(t.maxStallMs))],
  ];
  return renderTable(['', ...totals.map((t) => modeLabel(t.mode))], rows);
}

/** With an AMQP 1.0 side that awaits outcomes: a row per outcome ('-' where a side has none). */
function outcomeRows(totals: readonly ModeTotals[]): [string, ...(string | number)[]][] {
  if (!totals.some((t) => t.outcomes && isConfirmingMode(t.mode))) return [];
  const row = (name: string, f: (o: NonNullable<ModeTotals['outcomes']>) => number): [string, ...(string | number)[]] => [
    name,
    ...totals.map((t) => (t.outcomes && isConfirmingMode(t.mode) ? f(t.outcomes) : '-')),
  ];
  return [
    row('1.0 accepted', (o) => o.accepted),
    row('1.0 released', (o) => o.released),
    row('1.0 rejected', (o) => o.rejected),
    row('1.0 modified', (o) => o.modified),
    row('1.0 in doubt', (o) => o.inDoubt + o.timedOut),
  ];
}

/**
 * With a native stream protocol side: what it sent again with the same publishing ids (in doubt
 * after a lost connection; no confirm in time), what the new sessions sent again first, and how
 * many of those the broker held already (their copies dropped by deduplication); '-' where a side
 * has none.
 */
function streamRows(totals: readonly ModeTotals[]): [string, ...(string | number)[]][] {
  if (!totals.some((t) => t.stream)) return [];
  const row = (name: string, f: (o: NonNullable<ModeTotals['stream']>) => number): [string, ...(string | number)[]] => [
    name,
    ...totals.map((t) => (t.stream ? f(t.stream) : '-')),
  ];
  return [
    row('in doubt, sent again', (o) => o.inDoubtResent),
    row('late confirms, sent again', (o) => o.timedOut),
    row('sent again on reconnect', (o) => o.resentOnReconnect),
    row('of those, stored already', (o) => o.storedAlready),
  ];
}

function timeline(r: CompareRun): string {
  const f = r.fault;
  if (!f) return `  ${modeLabel(r.mode)} run ${r.run}: no fault`;
  const at = (v: number | null): string => (v === null ? '-' : `${(v / 1000).toFixed(2)} s`);
  const parts = [
    `${f.kind} ${[f.node, ...(f.alsoFaulted ?? [])].join(' and ')}${f.shape ? ` [${f.shape}]` : ''} at ${at(f.faultAtMs)}`,
    // latency and quorum-loss await no election (none is needed, or none is possible).
    f.electedAtMs === null && f.error === null && f.restoredAtMs !== null
      ? 'no new leader while faulted'
      : `new leader ${f.newLeader ?? '?'} at ${at(f.electedAtMs)}${f.electionMs === null ? '' : ` (election ${formatMs(f.electionMs)})`}`,
    ...(f.enabledFlags ? [`flags enabled in turn: ${flagsText(f.enabledFlags)}, done at ${at(f.appliedAtMs)}`] : []),
    `producer resumed at ${at(f.producerResumedAtMs)}`,
    `restored at ${at(f.restoredAtMs)}, back at ${at(f.rejoinedAtMs)}`,
  ];
  return `  ${modeLabel(r.mode)} run ${r.run}: ${parts.join('; ')}${f.error ? `; fault error: ${f.error}` : ''}`;
}

/** Each run's stuck-deliveries figure (none for a stream), and a blank line; nothing when no run has one. Pure. */
export function stuckLines(runs: readonly CompareRun[]): string[] {
  const measured = runs.filter((r) => r.stuck);
  if (measured.length === 0) return [];
  return [
    "stuck deliveries (after the fault, once the run's holder consumer let go: how long until no message stays unacknowledged for a consumer gone):",
    ...measured.map((r) => `  ${modeLabel(r.mode)} run ${r.run}: ${stuckText(r.stuck!)}`),
    '',
  ];
}

/** Sample ids, and how many more there were. Pure. */
function idsText(ids: readonly string[], count: number): string {
  return count > ids.length ? `${ids.join(', ')} and ${count - ids.length} more` : ids.join(', ');
}

export function renderCompare(c: CompareResult): string {
  const o = c.options;
  const fault = o.fault === 'none' ? 'no fault' : `fault '${o.fault}' on the leader after ${Math.round(o.faultAt * 100)}% of the messages`;
  const type = o.queueType === undefined || o.queueType === 'quorum' ? '' : ` (a ${o.queueType} queue)`;
  const handling = c.partitionHandling ? `; partition handling ${c.partitionHandling}` : '';
  const head = `compare: ${o.count} messages per run to ${o.queue}${type}, ${o.ratePerSec > 0 ? `${o.ratePerSec}/s` : 'as fast as possible'}, producer connected first to the leader; ${fault}${handling}`;
  const lines = [head, '', renderTotals(c.totals), '', 'timeline (since the producer started):', ...c.runs.map(timeline), ''];
  if (c.runs.length > 0) {
    lines.push('order of the reads (the drain; not part of the verdict):');
    for (const r of c.runs) lines.push(...orderLines(`  ${modeLabel(r.mode)} run ${r.run}`, r.reconciliation.order));
    lines.push('');
  }
  lines.push(...stuckLines(c.runs));
  const late = c.runs.filter((r) => (r.lateCopyCount ?? r.lateCopies.length) > 0);
  if (late.length > 0) {
    const n = late.reduce((a, r) => a + (r.lateCopyCount ?? r.lateCopies.length), 0);
    lines.push(
      `late copies: ${n} message${n === 1 ? '' : 's'} of an earlier run read in a later run's drain (${late.map((r) => `run ${r.run}: ${idsText(r.lateCopies, r.lateCopyCount ?? r.lateCopies.length)}`).join('; ')}).`,
      "  Each was already read in its own run: published again after the producer gave up a silent connection, the first copy reached the queue after that run's drain. Counted as duplicates of their run, not as unexpected.",
      '',
    );
  }
  const back = c.runs.filter((r) => (r.resurfacedCount ?? 0) > 0);
  if (back.length > 0) {
    const n = back.reduce((a, r) => a + (r.resurfacedCount ?? 0), 0);
    lines.push(
      `resurfaced: ${n} message${n === 1 ? '' : 's'} of an earlier run that its own drain never read (counted lost there) read in a later run's drain (${back.map((r) => `run ${r.run}: ${idsText(r.resurfaced ?? [], r.resurfacedCount ?? 0)}`).join('; ')}).`,
      "  They were not in the queue when their run looked, and came back after: the earlier run's loss stands (its drain could not read them), and they are not counted as unexpected here.",
      '',
    );
  }
  for (const mode of c.options.modes.filter((m) => isConfirmingMode(m))) {
    const first = c.runs.find((r) => r.mode === mode);
    if (!first) continue;
    lines.push(`confirm latency (${modeLabel(mode)}, run 1): ${latencyLine(first.producer.confirmLatency)}`);
    lines.push(`  around the fault: ${latencyLine(first.producer.confirmLatencyAroundFault)}`);
    lines.push('');
  }
  if (c.partial) {
    const p = c.partial;
    lines.push(
      `interrupted during ${modeLabel(p.mode)} run ${p.run}: the producer had written ${p.producer.written} and had ${p.producer.confirmed} confirmed; the queue was not drained`,
    );
  }
  for (const t of c.totals) if (t.runs > 0) lines.push(modeVerdict(t));
  if (c.interrupted) lines.push('verdict: none (interrupted)');
  else
    lines.push(
      c.ok ? 'verdict: OK (no confirmed message lost)' : 'verdict: FAILED (a confirmed message was lost, an unexpected one read, or deliveries stuck)',
    );
  return fitLines(lines);
}
