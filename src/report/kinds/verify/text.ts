import type { Reconciliation } from '../../../ledger/reconcile.js';
import { orderLines } from '../../order-text.js';

/** verify's printer: a reconciliation → text. Pure. */

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
  lines.push(...orderLines('order', r.order));
  for (const a of r.advice) lines.push(a);
  lines.push(r.verdict.ok ? 'verdict: OK' : `verdict: FAILED: ${r.verdict.reasons.join('; ')}`);
  return lines.join('\n');
}
