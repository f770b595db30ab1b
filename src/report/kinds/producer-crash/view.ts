import type { Reconciliation } from '../../../ledger/reconcile.js';
import type { ProducerCrashResult, ProducerCrashRun, ProducerCrashTotals } from '../../../scenarios/crashes/producer-crash-result.js';
import { n, objs, s } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { list, num, obj, opt, str } from '../../shape-check.js';
import { order } from '../shared.js';
import { producerCrashCharts } from './charts.js';
import { renderProducerCrash } from './text.js';

/** `rmq-bench producer-crash`: a producer killed mid-run, naive against the outbox. */
export const producerCrash: KindView<ProducerCrashResult> = {
  shape: obj<ProducerCrashResult>({
    totals: list('mode totals', obj<ProducerCrashTotals>({ mode: str, lost: num, duplicated: num })),
    runs: list('runs', obj<ProducerCrashRun>({ mode: str, run: num, lost: num, duplicated: num, reconciliation: opt(obj<Reconciliation>({ order })) })),
  }),
  text: renderProducerCrash,
  charts: producerCrashCharts,
  figures: (d) =>
    objs(d.totals)
      .map((t) => `${s(t.mode)}: lost ${n(t.lost)}, duplicated ${n(t.duplicated)}`)
      .join('; '),
  reasons: none,
};
