import type { OrderReport, StreamOrder } from '../../ledger/order.js';
import type { LatencySummary } from '../../measure/histogram.js';
import type { Check } from '../../scenarios/demos/alarm-plan.js';
import { bool, list, nullOr, num, obj, opt, str } from '../shape-check.js';

/** Field shapes several kinds share (shape-check.ts). */
export const strings = list('strings', str);
export const nullNum = nullOr(num);
export const nullStr = nullOr(str);
/** A demo's claims: each held or not, with what was measured. */
export const claims = opt(list('claims', obj<Check>({ claim: opt(str), held: opt(bool), measured: opt(str) })));
export const latency = obj<LatencySummary>({ p50Ms: nullNum, p95Ms: nullNum, p99Ms: nullNum, maxMs: nullNum });
/**
 * A reconciliation's order (ledger/order.ts): null where it was not observed; a document without
 * it reads as "not in this document" (report/order-text.ts).
 */
export const order = opt(
  nullOr(
    obj<OrderReport>({
      reads: num,
      outOfOrder: num,
      expected: num,
      unexplained: num,
      largestGap: num,
      samples: list('sequences', num),
      streams: list('streams', obj<StreamOrder>({ queue: nullStr, consumer: nullNum, unexplained: num })),
    }),
  ),
);
