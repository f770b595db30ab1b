import type { DelayedRetryDemoResult, MeasuredRedelivery, RoundResult } from '../../../scenarios/demos/delayed-retry-plan.js';
import { n, objs, s } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { bool, list, num, obj, opt, str } from '../../shape-check.js';
import { delayedRetryCharts } from './charts.js';
import { renderDelayedRetryDemo } from './text.js';

/** `rmq-bench delayed-retry-demo`: RabbitMQ 4.3's delayed retry, each redelivery delay measured. */
export const delayedRetryDemo: KindView<DelayedRetryDemoResult> = {
  shape: obj<DelayedRetryDemoResult>({
    type: str,
    minMs: num,
    maxMs: num,
    via: opt(str),
    messages: list('message ids', str),
    rounds: list(
      'rounds',
      obj<RoundResult>({
        index: num,
        kind: str,
        expectedMs: num,
        measured: list('measured delays', obj<MeasuredRedelivery>({ delayMs: num })),
        ok: opt(bool),
      }),
    ),
    deliveries: list('deliveries', obj<DelayedRetryDemoResult['deliveries'][number]>({ messageId: str, atMs: num, round: num })),
    processed: opt(num),
  }),
  text: renderDelayedRetryDemo,
  charts: delayedRetryCharts,
  figures: (d) => {
    const rounds = objs(d.rounds);
    return `${s(d.type)} via ${s(d.via)}: ${rounds.filter((r) => r.ok === true).length}/${rounds.length} rounds as expected, ${n(d.processed)} processed`;
  },
  reasons: none,
};
