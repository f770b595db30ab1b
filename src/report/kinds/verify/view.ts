import type { DrainResult } from '../../../client/amqp091/drain.js';
import type { ReconcileCounts, Reconciliation } from '../../../ledger/reconcile.js';
import type { ForeignReads, LedgerRow, ReconcileTotal } from '../../../ledger/several.js';
import { countsTable } from '../../chart-parts.js';
import { type J, isObj, n, strings } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { orderSection } from '../../order-text.js';
import { escapeHtml } from '../../svg.js';
import { bool, list, num, obj, opt, str } from '../../shape-check.js';
import { order, strings as stringList } from '../shared.js';
import { ledgersTable, otherUnreadNote, renderLedgers, renderReconciliation } from './text.js';

/**
 * `rmq-bench verify`: a queue drained once and reconciled with one producer's --ledger or several.
 * verify writes every field; a document `rmq-bench report` reads may lack the optional ones.
 */
export interface VerifyResult {
  readonly queue: string;
  readonly drain: DrainResult;
  /** total.verdict.ok: every ledger's verdict ok, and nothing read of none of them. */
  readonly ok?: boolean;
  /** With one ledger: its reconciliation (ledgers[0]'s), at the top level. */
  readonly reconciliation?: Reconciliation;
  /** Each ledger reconciled, in the order given (a folder's files by name). */
  readonly ledgers?: readonly LedgerRow[];
  readonly total?: ReconcileTotal;
}

/** The several-ledger text and page: what they read of a reconciliation and of the total. */
const COUNTS = obj<ReconcileCounts>({ attempted: num, confirmed: num, readDistinct: num, unexpected: num });
const ROW_COUNTS = {
  counts: COUNTS,
  lost: num,
  silentlyLost: num,
  knownFailed: num,
  indeterminateUnread: num,
  neverWritten: num,
  duplicated: num,
};
const RECONCILIATION = obj<Reconciliation>({
  lost: opt(num),
  silentlyLost: opt(num),
  duplicated: opt(num),
  order,
  // A reconciliation's verdict; the document's own is `ok` (the total's), where there is one.
  verdict: obj<Reconciliation['verdict']>({ ok: bool, reasons: opt(stringList) }),
});
const ROW_RECONCILIATION = obj<Reconciliation>({ ...ROW_COUNTS, order, verdict: obj<Reconciliation['verdict']>({ ok: bool }) });

/** The total of a document of several ledgers; undefined for one ledger (its reconciliation says it all). */
function several(d: { readonly total?: unknown }): J | undefined {
  const total = d.total;
  return isObj(total) && typeof total.ledgers === 'number' && total.ledgers > 1 ? total : undefined;
}

export const verify: KindView<VerifyResult> = {
  shape: obj<VerifyResult>({
    reconciliation: opt(RECONCILIATION),
    ledgers: opt(list('ledgers', obj<LedgerRow>({ file: str, runId: str, reconciliation: ROW_RECONCILIATION }))),
    total: opt(
      obj<ReconcileTotal>({
        ...ROW_COUNTS,
        ledgers: num,
        foreign: obj<ForeignReads>({ count: num }),
        verdict: obj<ReconcileTotal['verdict']>({ ok: bool, reasons: opt(stringList) }),
      }),
    ),
  }),
  text: (r) => {
    if (r.ledgers !== undefined && r.ledgers.length > 1 && r.total !== undefined) return renderLedgers(r.ledgers, r.total);
    const one = r.reconciliation ?? r.ledgers?.[0]?.reconciliation;
    return one === undefined ? 'nothing reconciled' : renderReconciliation(one);
  },
  charts: (r) => {
    if (r.ledgers === undefined || r.ledgers.length < 2 || r.total === undefined) return none();
    const { headers, rows } = ledgersTable(r.ledgers, r.total);
    return [
      '<h2>Ledgers</h2>',
      countsTable(headers, rows),
      ...otherUnreadNote(r.total).map((note) => `<p>${escapeHtml(note)}</p>`),
      ...orderSection(r.ledgers.map((l) => ({ label: l.file, order: l.reconciliation.order }))),
    ];
  },
  figures: (d) => {
    const total = several(d);
    const r: J = total ?? (isObj(d.reconciliation) ? d.reconciliation : {});
    const figures = `lost ${n(r.lost)}, silently lost ${n(r.silentlyLost)}, duplicated ${n(r.duplicated)}`;
    return total === undefined ? figures : `${n(total.ledgers)} ledgers: ${figures}`;
  },
  reasons: (d) => {
    const rec: J = several(d) ?? (isObj(d.reconciliation) ? d.reconciliation : {});
    return strings(isObj(rec.verdict) ? rec.verdict.reasons : undefined);
  },
  verdict: (d) => {
    if (typeof d.ok === 'boolean') return d.ok;
    const rec: J = isObj(d.reconciliation) ? d.reconciliation : {};
    return isObj(rec.verdict) && typeof rec.verdict.ok === 'boolean' ? rec.verdict.ok : null;
  },
};
