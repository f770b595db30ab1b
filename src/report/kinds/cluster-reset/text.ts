import type { ResetResult } from '../../../cluster/lifecycle/reset.js';
import { formatMs } from '../../../util/duration.js';
import { fitLines } from '../../text-wrap.js';

/** cluster reset result → text. Pure. */

export function renderReset(r: ResetResult): string {
  const purged = r.purgedQueues.map((q) => `${q.name} (${q.messages})`).join(', ') || 'none';
  return fitLines([
    `reset in ${formatMs(r.elapsedMs)}`,
    `deleted queues:    ${r.deletedQueues.join(', ') || 'none'}`,
    `purged queues:     ${purged}`,
    `deleted exchanges: ${r.deletedExchanges.join(', ') || 'none'}`,
    `deleted policies:  ${r.deletedPolicies.join(', ') || 'none'}`,
  ]);
}
