import type { DeadLetterRow } from '../../../scenarios/broker-tools/dlq-tools.js';
import { renderTable } from '../../table.js';
import { fitLines } from '../../text-wrap.js';

/** dlq inspect result → text. Pure. */

export function renderDlqInspect(r: { queue: string; rows: DeadLetterRow[]; total: number }): string {
  if (r.rows.length === 0) return `${r.queue} is empty`;
  const table = renderTable(
    ['message id', 'reason', 'from queue', 'count', 'first death', 'last death', 'bytes'],
    r.rows.map((x) => [x.messageId ?? '-', x.reason ?? '-', x.sourceQueue ?? '-', x.count ?? '-', x.firstDeathAt ?? '-', x.lastDeathAt ?? '-', x.bytes]),
  );
  return fitLines([`${r.queue}: ${r.rows.length} of ${r.total} messages shown (they stay in the queue)`, table]);
}
