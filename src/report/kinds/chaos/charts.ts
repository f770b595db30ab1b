import { FAULTS } from '../../../faults/registry.js';
import type { ChaosResult } from '../../../scenarios/under-faults/chaos-plan.js';
import { type Band, lineChart } from '../../svg.js';
import { countsTable, inFlightSeries, ratesFrom } from '../../chart-parts.js';
import { orderSection } from '../../order-text.js';
import { chaosTotalsTable, nemesisTable, producerLabel } from './text.js';

/** chaos: the totals, one timeline of every producer and consumer with each fault shaded, the nemesis history. Pure. */

/** Each fault as a band, from its issue until the cluster was whole again (or the heal, or the end), in seconds. Pure. */
export function faultBands(r: Pick<ChaosResult, 'faults' | 'durationMs' | 'samples'>): Band[] {
  const endMs = Math.max(r.durationMs, r.samples.at(-1)?.tMs ?? 0);
  return r.faults.map((f) => ({
    from: f.issuedAtMs / 1000,
    to: Math.max(f.issuedAtMs, f.wholeAtMs ?? f.restoredAtMs ?? endMs) / 1000,
    label: `${f.kind} ${f.shape ?? (f.nodes.length > 0 ? f.nodes.join('+') : '(not applied)')}`,
    // A document read by `rmq-bench report` may name a fault this version does not know.
    color: FAULTS[f.kind]?.color,
  }));
}

export function chaosCharts(r: ChaosResult): string[] {
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
        inFlightSeries(r.samples),
      ],
      bands: faultBands(r),
      xLabel: 'seconds since the run started',
      yLabel: 'messages per second',
      yRightLabel: 'in flight',
    }),
  );
  // A document read by `rmq-bench report` may lack the producers (chaos's view: optional).
  out.push(...orderSection((r.producers ?? []).map((p) => ({ label: producerLabel(p, r.options.queuePrefix), order: p.reconciliation.order }))));
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
