import type { OutboxProducerResult } from '../../../client/outbox-producer.js';
import { formatMs } from '../../../util/duration.js';
import { renderFields } from '../../table.js';

/** producer --outbox result → text. Pure. */

export function renderOutboxProducer(r: OutboxProducerResult): string {
  const resumed = r.atStart.written > 0;
  const rows: [string, string][] = [
    ['outbox', `${r.file} (run ${r.runId}, ${r.count} events)`],
    ['at start', resumed ? `${r.atStart.written} written, ${r.atStart.pending} pending, ${r.atStart.published} published: resumed` : 'empty'],
    ['written now', String(r.appended)],
    ['publishes', `${r.publishes} (rows marked published: ${r.markedPublished})`],
    ['back to pending', `nacked ${r.nacked}, confirm timeouts ${r.timedOut}, lost with a connection ${r.requeuedOnReconnect}`],
    ['late acks', String(r.lateAcks)],
    ['reconnects', String(r.reconnects)],
    ['at end', `${r.atEnd.written} written, ${r.atEnd.pending} pending, ${r.atEnd.published} published`],
    ['duration', formatMs(r.durationMs)],
    [
      'result',
      r.completed ? 'completed' : r.interrupted ? 'interrupted: the pending rows stay in the outbox' : r.gaveUp ? `gave up: ${r.gaveUp}` : 'incomplete',
    ],
  ];
  return renderFields(rows);
}
