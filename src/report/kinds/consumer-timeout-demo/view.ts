import type { ConsumerTimeoutDemoResult, HandlingRun, NaiveRun, QueueSample, SeenDelivery, ViaResult } from '../../../scenarios/demos/consumer-timeout-plan.js';
import { held, ms, objs, s } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { bool, type Field, list, num, obj, opt, record, type Shape, str } from '../../shape-check.js';
import { claims, nullNum, nullStr, strings } from '../shared.js';
import { consumerTimeoutCharts } from './charts.js';
import { renderConsumerTimeoutDemo } from './text.js';

const seen = (extra: { readonly [K in keyof SeenDelivery]?: Field }): Shape => list('deliveries', obj<SeenDelivery>({ atMs: num, messageId: str, ...extra }));

/** `rmq-bench consumer-timeout-demo`: a consumer slower than consumer_timeout, naive and handled. */
export const consumerTimeoutDemo: KindView<ConsumerTimeoutDemoResult> = {
  shape: obj<ConsumerTimeoutDemoResult>({
    timeoutMs: num,
    runs: list(
      'runs',
      obj<ViaResult>({
        via: str,
        slowId: str,
        naive: obj<NaiveRun>({
          queue: str,
          deliveries: seen({ redelivered: bool }),
          cancelAtMs: nullNum,
          lateAckAtMs: nullNum,
          channelClosedAtMs: nullNum,
          channelError: opt(nullStr),
        }),
        handling: obj<HandlingRun>({
          queue: str,
          deliveries: seen({ deliveryCount: num, acquiredCount: num }),
          cancelAtMs: nullNum,
          resubscribedAtMs: nullNum,
        }),
        measuredTimeoutMs: opt(nullNum),
        timeoutMs: opt(num),
        checks: claims,
        problems: opt(strings),
      }),
    ),
    samples: list('samples', obj<QueueSample>({ tMs: num, ready: record('numbers', num) })),
  }),
  text: renderConsumerTimeoutDemo,
  charts: consumerTimeoutCharts,
  figures: (d) =>
    objs(d.runs)
      .map((r) => `${s(r.via)}: cancelled after ${ms(r.measuredTimeoutMs)} (timeout ${ms(r.timeoutMs)}), claims held ${held(objs(r.checks))}`)
      .join('; '),
  reasons: none,
};
