import type { RetryAttempt, RetryDemoResult } from '../../../scenarios/demos/retry-demo.js';
import type { LadderAttempt, RetryLadderResult } from '../../../scenarios/demos/retry-ladder.js';
import { type J, isObj, ms, n, objs } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { bool, byField, list, num, obj, opt, str } from '../../shape-check.js';
import { ladderCharts, retryCharts } from './charts.js';
import { renderRetryDemo, renderRetryLadder } from './text.js';

/**
 * `rmq-bench retry-demo`: one message retried through a TTL queue (RetryDemoResult); with
 * --backoff, a ladder of delay queues (RetryLadderResult, mode "ladder").
 */
export type RetryDemoDocument = RetryDemoResult | RetryLadderResult;

const isLadder = (r: RetryDemoDocument): r is RetryLadderResult => 'mode' in r;

export const retryDemo: KindView<RetryDemoDocument> = {
  shape: byField(
    'mode',
    {
      ladder: obj<RetryLadderResult>({
        rungs: list('rungs', obj<RetryLadderResult['rungs'][number]>({ ttlMs: num })),
        attempts: list('attempts', obj<LadderAttempt>({ messageId: str, attempt: num, atMs: num, routingKey: str, outcome: str })),
        good: opt(obj<RetryLadderResult['good']>({ processedTimes: opt(num), failures: opt(num) })),
        poison: opt(obj<RetryLadderResult['poison']>({ attempts: opt(num), inDlq: opt(bool) })),
      }),
    },
    obj<RetryDemoResult>({
      messageId: str,
      ttlMs: num,
      attempts: list('attempts', obj<RetryAttempt>({ attempt: num, atMs: num, outcome: str })),
      processedTimes: opt(num),
    }),
  ),
  text: (r) => (isLadder(r) ? renderRetryLadder(r) : renderRetryDemo(r)),
  charts: (r) => (isLadder(r) ? ladderCharts(r) : retryCharts(r)),
  figures: (d) => {
    if (isLadder(d)) {
      const good: J = isObj(d.good) ? d.good : {};
      const poison: J = isObj(d.poison) ? d.poison : {};
      return `good: processed ${n(good.processedTimes)}× after ${n(good.failures)} failure${good.failures === 1 ? '' : 's'}; poison: ${n(poison.attempts)} attempts, ${poison.inDlq === true ? 'in' : 'not in'} the DLQ`;
    }
    return `${n(objs(d.attempts).length)} attempts, TTL ${ms(d.ttlMs)}, processed ${n(d.processedTimes)}×`;
  },
  reasons: none,
};
