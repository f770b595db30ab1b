import type { Reconciliation } from '../../../ledger/reconcile.js';
import type {
  ChaosOptions,
  ChaosProducer,
  ChaosResult,
  ChaosSample,
  ChaosTotals,
  DrainEnd,
  FaultAvailability,
  FaultRecord,
  LeftInQueue,
} from '../../../scenarios/under-faults/chaos-plan.js';
import { type J, isObj, n, objs } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { bool, list, nullOr, num, obj, opt, record, str } from '../../shape-check.js';
import { nullNum, nullStr, order } from '../shared.js';
import { chaosCharts } from './charts.js';
import { renderChaos } from './text.js';

const totals = obj<ChaosTotals>({
  attempted: num,
  written: num,
  confirmed: num,
  read: num,
  lost: num,
  silentlyLost: num,
  indeterminateUnread: num,
  recovered: num,
  duplicated: num,
  duplicateDeliveries: num,
});

/** `rmq-bench chaos`: producers and consumers under a seeded schedule of faults. */
export const chaos: KindView<ChaosResult> = {
  shape: obj<ChaosResult>({
    options: obj<ChaosOptions>({ queuePrefix: str }),
    durationMs: num,
    totals,
    control: opt(nullOr(totals)),
    unexpected: opt(num),
    // The order section only: a document without the producers is drawn without it.
    producers: opt(list('producers', obj<ChaosProducer>({ producer: num, queue: str, confirms: bool, reconciliation: obj<Reconciliation>({ order }) }))),
    faults: list(
      'faults',
      obj<FaultRecord>({
        index: num,
        kind: str,
        target: str,
        nodes: list('node names', str),
        reason: str,
        issuedAtMs: num,
        appliedAtMs: nullNum,
        restoredAtMs: nullNum,
        wholeAtMs: nullNum,
        leadersBefore: record('node names or nulls', nullStr),
        leadersAfter: record('node names or nulls', nullStr),
        error: nullStr,
      }),
    ),
    availability: list('fault availabilities', obj<FaultAvailability>({ index: num, stallMs: num, healToConfirmMs: opt(nullNum) })),
    samples: list('samples', obj<ChaosSample>({ tMs: num, written: num, confirmed: num, consumed: num, inFlight: num })),
    drain: opt(
      nullOr(
        obj<DrainEnd>({
          ended: str,
          waitedMs: num,
          left: list('queues left', obj<LeftInQueue>({ queue: str, ready: num, unacknowledged: num, consumersCounted: num, consumersListed: num })),
        }),
      ),
    ),
  }),
  text: renderChaos,
  charts: chaosCharts,
  figures: (d) => {
    const t: J = isObj(d.totals) ? d.totals : {};
    return `${n(objs(d.faults).length)} faults; lost ${n(t.lost)}, silently lost ${n(t.silentlyLost)}, duplicated ${n(t.duplicated)}, unexpected ${n(d.unexpected)}`;
  },
  reasons: none,
};
