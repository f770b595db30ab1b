import type { CompareResult, CompareRun } from '../../../scenarios/under-faults/compare.js';
import { isConfirmingMode, modeLabel } from '../../../scenarios/under-faults/compare-modes.js';
import { orderSection } from '../../order-text.js';
import { type Band, type Marker, PALETTE, lineChart } from '../../svg.js';
import { countsTable, inFlightSeries, lossPerRunByMode, ratesFrom } from '../../chart-parts.js';

/** compare's charts: the totals, each mode's loss per run, and a timeline per run with the fault on it. Pure. */

/** The fault's last moment (the rejoin, else the restore, the election, the fault), ms since the producer started; null without a fault. Pure. */
function lastFaultEventMs(run: Pick<CompareRun, 'fault'>): number | null {
  const f = run.fault;
  if (!f) return null;
  return f.rejoinedAtMs ?? f.restoredAtMs ?? f.electedAtMs ?? f.faultAtMs;
}

/**
 * A producer's samples carried on, flat, to `untilMs` (the last event of its run): the producer had
 * finished, and a rate of 0 until the rejoin is data, not an empty axis. One flat sample per
 * sampling interval of the run (at least one), so the rate line drops to 0 and stays there. Pure.
 */
function samplesUntil<S extends { tMs: number }>(samples: readonly S[], untilMs: number | null): S[] {
  const last = samples[samples.length - 1];
  if (!last || untilMs === null || untilMs <= last.tMs) return [...samples];
  const stepMs = samples.length > 1 ? Math.max(1, (last.tMs - samples[0]!.tMs) / (samples.length - 1)) : untilMs - last.tMs;
  const out = [...samples];
  const n = Math.min(2_000, Math.ceil((untilMs - last.tMs) / stepMs));
  for (let i = 1; i <= n; i++) out.push({ ...last, tMs: Math.min(untilMs, last.tMs + i * stepMs) });
  return out;
}

/** The fault window as a band: from the fault to the rejoin (or the last moment known). Pure. */
function faultWindow(run: Pick<CompareRun, 'fault'>): Band[] {
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

export function compareCharts(c: CompareResult): string[] {
  const out: string[] = ['<h2>Totals</h2>'];
  out.push(
    countsTable(
      ['mode', 'runs', 'attempted', 'reported sent', 'confirmed', 'read', 'lost', 'silently lost', 'duplicated', 'recovered'],
      c.totals.map((t) => [t.mode, t.runs, t.attempted, t.reportedSent, t.confirmed, t.read, t.lost, t.silentlyLost, t.duplicated, t.recovered]),
    ),
  );
  const perRun = lossPerRunByMode(c.runs, 'lost, silently lost and duplicated', [
    { name: 'lost', of: (r) => r.reconciliation.lost, color: PALETTE[3] },
    { name: 'silently lost', of: (r) => r.reconciliation.silentlyLost, color: PALETTE[2] },
    { name: 'duplicated', of: (r) => r.reconciliation.duplicated, color: PALETTE[4] },
  ]).flatMap((m) => m.charts);
  if (perRun.length > 0) out.push('<h2>Loss per run</h2>', ...perRun);
  out.push(...orderSection(c.runs.map((r) => ({ label: `${modeLabel(r.mode)} run ${r.run}`, order: r.reconciliation.order }))));
  out.push('<h2>Timelines</h2>');
  for (const run of c.runs) {
    const samples = samplesUntil(run.producer.samples ?? [], lastFaultEventMs(run));
    const series = [
      { name: 'publish rate /s', points: ratesFrom(samples, 'written') },
      ...(isConfirmingMode(run.mode) ? [{ name: 'confirm rate /s', points: ratesFrom(samples, 'confirmed') }] : []),
      inFlightSeries(samples),
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
