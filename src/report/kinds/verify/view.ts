import type { DrainResult } from '../../../amqp/drain.js';
import type { Reconciliation } from '../../../ledger/reconcile.js';
import { type J, isObj, n, strings } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { bool, num, obj, opt } from '../../shape-check.js';
import { order, strings as stringList } from '../shared.js';
import { renderReconciliation } from './text.js';

/** `rmq-bench verify`: a queue drained and reconciled with a producer's --ledger. */
export interface VerifyResult {
  readonly queue: string;
  readonly drain: DrainResult;
  readonly reconciliation: Reconciliation;
}

export const verify: KindView<VerifyResult> = {
  shape: obj<VerifyResult>({
    reconciliation: obj<Reconciliation>({
      lost: opt(num),
      silentlyLost: opt(num),
      duplicated: opt(num),
      order,
      // verify prints no ok of its own: this is its verdict.
      verdict: obj<Reconciliation['verdict']>({ ok: bool, reasons: opt(stringList) }),
    }),
  }),
  text: (r) => renderReconciliation(r.reconciliation),
  charts: none,
  figures: (d) => {
    const r: J = isObj(d.reconciliation) ? d.reconciliation : {};
    return `lost ${n(r.lost)}, silently lost ${n(r.silentlyLost)}, duplicated ${n(r.duplicated)}`;
  },
  reasons: (d) => {
    const rec: J = isObj(d.reconciliation) ? d.reconciliation : {};
    return strings(isObj(rec.verdict) ? rec.verdict.reasons : undefined);
  },
  verdict: (d) => {
    const rec: J = isObj(d.reconciliation) ? d.reconciliation : {};
    return isObj(rec.verdict) && typeof rec.verdict.ok === 'boolean' ? rec.verdict.ok : null;
  },
};
