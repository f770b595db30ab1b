import type { OrderReport } from '../ledger/order.js';
import { countsTable } from './chart-parts.js';
import { escapeHtml } from './svg.js';

/**
 * A reconciliation's order (ledger/order.ts) in words, for every report that shows one: a line
 * per reconciliation, a finding line when some reads out of order are unexplained, and the same
 * as a table for the HTML page. Unexplained disorder is a finding, never a failed verdict. Pure.
 *
 * `order` is undefined in a document that carries no order field, null where the order was not
 * observed (reads replayed from a store's counts).
 */

type Order = OrderReport | null | undefined;

const count = (n: number): string => n.toLocaleString('en-US');
const reads = (n: number): string => `${count(n)} ${n === 1 ? 'read' : 'reads'}`;

/** "12 of 20,000 reads out of order (12 redeliveries or resends, 0 unexplained); largest gap 340". */
export function orderSummary(o: Order): string {
  if (o === undefined) return 'not in this document';
  if (o === null) return 'not observed (the reads were replayed from counts, not seen as they arrived)';
  if (o.reads === 0) return 'nothing read';
  const gap = `largest gap ${count(o.largestGap)}`;
  if (o.outOfOrder === 0) return `all ${reads(o.reads)} in order; ${gap}`;
  const expected = `${count(o.expected)} ${o.expected === 1 ? 'redelivery or resend' : 'redeliveries or resends'}`;
  return `${count(o.outOfOrder)} of ${reads(o.reads)} out of order (${expected}, ${count(o.unexplained)} unexplained); ${gap}`;
}

/** Where a stream is: "demo.orders", "chaos.1 consumer 2", "consumer 2", or "(no queue)". */
function streamName(s: OrderReport['streams'][number]): string {
  const consumer = s.consumer === null ? '' : `consumer ${s.consumer}`;
  if (s.queue === null) return consumer === '' ? '(no queue)' : consumer;
  return consumer === '' ? s.queue : `${s.queue} ${consumer}`;
}

/**
 * The finding, when some reads out of order have nothing to explain them: how many, where, the
 * first sequences. null when there is none.
 */
export function orderFinding(o: Order): string | null {
  if (!o || o.unexplained === 0) return null;
  const where = o.streams.filter((s) => s.unexplained > 0).map((s) => `${streamName(s)}: ${count(s.unexplained)}`);
  const first = o.samples.length > 0 ? `; first sequences ${o.samples.join(', ')}` : '';
  return `${reads(o.unexplained)} out of order with no redelivery, second copy or resend to explain them (${where.join('; ')}${first}): delivered in another order than published`;
}

/** One line (label: summary), and a finding line indented under it when there is one. */
export function orderLines(label: string, o: Order): string[] {
  const finding = orderFinding(o);
  const indent = `${/^ */.exec(label)![0]}  `;
  return [`${label}: ${orderSummary(o)}`, ...(finding === null ? [] : [`${indent}finding: ${finding}`])];
}

/**
 * The HTML section: a row per reconciliation (its label, then the counts; '-' where the order is
 * not known), and each finding below the table. [] without rows.
 */
export function orderSection(rows: readonly { label: string; order: Order }[]): string[] {
  if (rows.length === 0) return [];
  const cells = rows.map(({ label, order: o }) =>
    o ? [label, o.reads, o.outOfOrder, o.expected, o.unexplained, o.largestGap] : [label, o === null ? 'not observed' : '-', '-', '-', '-', '-'],
  );
  const findings = rows.flatMap(({ label, order }) => {
    const f = orderFinding(order);
    return f === null ? [] : [`<p><strong>Finding</strong> (${escapeHtml(label)}): ${escapeHtml(f)}</p>`];
  });
  return ['<h2>Order</h2>', countsTable(['', 'reads', 'out of order', 'redeliveries or resends', 'unexplained', 'largest gap'], cells), ...findings];
}
