import type { PublisherResult, PublisherSample } from '../../../client/publisher-result.js';
import type { Reconciliation } from '../../../ledger/reconcile.js';
import type { CompareResult, CompareRun, FaultTimeline, ModeTotals } from '../../../scenarios/under-faults/compare.js';
import { isObj, n, objs, s, strings } from '../../figure-text.js';
import type { KindView } from '../../kind-view.js';
import { bool, list, nullOr, num, obj, opt, str } from '../../shape-check.js';
import { nullNum, nullStr, order, strings as stringList } from '../shared.js';
import { compareCharts } from './charts.js';
import { renderCompare } from './text.js';
import { isConfirmingMode } from '../../../scenarios/under-faults/compare-modes.js';
import { type StuckDeliveries, type StuckHolder, stuckProblem } from '../../../measure/stuck-deliveries.js';

/** `rmq-bench compare`: the same producer with confirms off and on, the leader faulted mid-run. */
export const compare: KindView<CompareResult> = {
  shape: obj<CompareResult>({
    totals: list(
      'mode totals',
      obj<ModeTotals>({
        mode: str,
        runs: num,
        attempted: num,
        reportedSent: num,
        confirmed: num,
        read: num,
        lost: num,
        silentlyLost: num,
        duplicated: num,
        recovered: num,
      }),
    ),
    runs: list(
      'runs',
      obj<CompareRun>({
        mode: str,
        run: num,
        producer: obj<PublisherResult>({ samples: opt(list('samples', obj<PublisherSample>({ tMs: num, written: num, confirmed: num, inFlight: num }))) }),
        fault: opt(
          nullOr(
            obj<FaultTimeline>({
              kind: str,
              node: str,
              newLeader: opt(nullStr),
              faultAtMs: num,
              electedAtMs: nullNum,
              restoredAtMs: nullNum,
              rejoinedAtMs: nullNum,
            }),
          ),
        ),
        stuck: opt(
          nullOr(
            obj<StuckDeliveries>({
              queue: str,
              outcome: str,
              afterMs: num,
              deadlineMs: num,
              mostHeld: num,
              holders: list('stuck holders', obj<StuckHolder>({ count: num })),
            }),
          ),
        ),
        reconciliation: obj<Reconciliation>({
          lost: num,
          silentlyLost: num,
          duplicated: num,
          recovered: num,
          order,
          verdict: opt(obj<Reconciliation['verdict']>({ ok: opt(bool), reasons: opt(stringList) })),
        }),
      }),
    ),
    interrupted: opt(bool),
  }),
  text: renderCompare,
  charts: compareCharts,
  figures: (d) => {
    const t = objs(d.totals).map((m) => `${s(m.mode)}: lost ${n(m.lost)}, silently lost ${n(m.silentlyLost)}, duplicated ${n(m.duplicated)}`);
    // Deliveries still held past --max-stuck: only when a run saw them, so the usual line is unchanged.
    const held = objs(d.runs).filter((r) => isObj(r.stuck) && r.stuck.outcome === 'held').length;
    const stuck = held > 0 ? `; deliveries stuck in ${held} run${held === 1 ? '' : 's'}` : '';
    return `${d.interrupted === true ? 'interrupted; ' : ''}${t.join('; ')}${stuck}`;
  },
  reasons: (d) => {
    const out: string[] = [];
    if (d.interrupted === true) out.push('interrupted (Ctrl+C): the runs until then');
    for (const r of objs(d.runs)) {
      const rec = isObj(r.reconciliation) ? r.reconciliation : {};
      const verdict = isObj(rec.verdict) ? rec.verdict : {};
      if (verdict.ok === false && (isConfirmingMode(r.mode) || strings(verdict.reasons).some((x) => x.includes('unexpected'))))
        out.push(`${s(r.mode)} run ${s(r.run)}: ${strings(verdict.reasons).join('; ')}`);
      const stuck = isObj(r.stuck) ? stuckProblem(r.stuck as unknown as StuckDeliveries) : null;
      if (stuck) out.push(`${s(r.mode)} run ${s(r.run)}: ${stuck}`);
    }
    return out;
  },
};
