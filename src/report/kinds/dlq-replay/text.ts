import type { ReplayResult } from '../../../scenarios/broker-tools/dlq-tools.js';
import { fitColumns } from '../../text-wrap.js';

/** dlq replay result → text. Pure. */

export function renderDlqReplay(r: ReplayResult): string {
  return fitColumns(
    `replayed ${r.replayed} messages from ${r.queue} to ${r.to} (each removed only after its confirm); ${r.skipped} skipped by the filter; ${r.leftInQueue} left in ${r.queue}`,
  );
}
