import path from 'node:path';
import type { Reconciliation } from '../../../ledger/reconcile.js';
import type { LedgerRow, ReconcileTotal } from '../../../ledger/several.js';
import { orderLines } from '../../order-text.js';
import { renderTable } from '../../table.js';
import { fitLines } from '../../text-wrap.js';

/** verify's printers: one reconciliation, or several ledgers and their total → text. Pure. */

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
  lines.push(...sampleLines('', r));
  lines.push(...orderLines('order', r.order));
  for (const a of r.advice) lines.push(a);
  lines.push(r.verdict.ok ? 'verdict: OK' : `verdict: FAILED: ${r.verdict.reasons.join('; ')}`);
  return fitLines(lines);
}

function sampleLines(prefix: string, r: Reconciliation): string[] {
  const lines: string[] = [];
  if (r.samples.lost.length > 0) lines.push(`${prefix}lost sequences (first ${r.samples.lost.length}): ${r.samples.lost.join(', ')}`);
  if (r.samples.silentlyLost.length > 0) {
    lines.push(`${prefix}silently lost sequences (first ${r.samples.silentlyLost.length}): ${r.samples.silentlyLost.join(', ')}`);
  }
  return lines;
}

/** The counts a row of the ledgers table shows: a reconciliation's, or the total's. */
type RowCounts = Pick<Reconciliation, 'counts' | 'lost' | 'silentlyLost' | 'knownFailed' | 'indeterminateUnread' | 'neverWritten' | 'duplicated'> & {
  verdict: { ok: boolean };
};

const HEADERS = ['ledger', 'run id', 'attempted', 'confirmed', 'read', 'lost', 'silently lost', 'other unread', 'duplicated', 'unexpected', 'verdict'] as const;

/** What the "other unread" column holds, said under the table when a row has some. */
const OTHER_UNREAD = 'other unread: known failed (nacked or returned), indeterminate or never written: the producer knew of each';

/** The note on "other unread", or none when every row's is 0. */
export function otherUnreadNote(total: ReconcileTotal): string[] {
  return total.knownFailed + total.indeterminateUnread + total.neverWritten > 0 ? [OTHER_UNREAD] : [];
}

function cells(label: string, runId: string, r: RowCounts): (string | number)[] {
  return [
    label,
    runId,
    r.counts.attempted,
    r.counts.confirmed,
    r.counts.readDistinct,
    r.lost,
    r.silentlyLost,
    r.knownFailed + r.indeterminateUnread + r.neverWritten,
    r.duplicated,
    r.counts.unexpected,
    r.verdict.ok ? 'OK' : 'FAILED',
  ];
}

/** The ledgers table: a row per ledger (its file and run id), then the total. For the text report and the HTML page. */
export function ledgersTable(ledgers: readonly LedgerRow[], total: ReconcileTotal): { headers: readonly string[]; rows: (string | number)[][] } {
  const rows = ledgers.map((l) => cells(l.file, l.runId, l.reconciliation));
  rows.push(cells('total', `${total.ledgers} ledgers`, total));
  return { headers: HEADERS, rows };
}

/**
 * The ledgers' one folder, when all of them are in it, and each ledger named within it: the table
 * then names p1.json, not the whole path (a long one would not leave it room). Pure.
 */
export function ledgerNames(files: readonly string[]): { folder: string | null; names: string[] } {
  const folders = new Set(files.map((f) => path.dirname(f)));
  const [folder] = folders;
  if (files.length < 2 || folders.size !== 1 || folder === undefined || folder === '.') return { folder: null, names: [...files] };
  return { folder, names: files.map((f) => path.basename(f)) };
}

/** Several ledgers: the table, then each ledger's samples, order and advice (named by its file), the foreign reads, the verdict. */
export function renderLedgers(ledgers: readonly LedgerRow[], total: ReconcileTotal): string {
  const { folder, names } = ledgerNames(ledgers.map((l) => l.file));
  const named = ledgers.map((l, i) => ({ ...l, file: names[i]! }));
  const { headers, rows } = ledgersTable(named, total);
  const lines = [...(folder === null ? [] : [`ledgers in ${folder}${path.sep}`]), renderTable(headers, rows), ...otherUnreadNote(total)];
  for (const { file, reconciliation: r } of named) {
    lines.push(...sampleLines(`${file}: `, r));
    lines.push(...orderLines(`${file} order`, r.order));
    for (const a of r.advice) lines.push(`${file}: ${a}`);
  }
  const f = total.foreign;
  if (f.count > 0) lines.push(`read, of none of the ledgers: ${f.count} (first ${f.samples.length}: ${f.samples.join(', ')})`);
  lines.push(total.verdict.ok ? 'verdict: OK' : `verdict: FAILED: ${total.verdict.reasons.join('; ')}`);
  return fitLines(lines);
}
