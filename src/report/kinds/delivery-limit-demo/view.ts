import type { DeliveryLimitDemoResult, DeliveryLimitRow, LoopRate, SeenDelivery } from '../../../scenarios/demos/delivery-limit-plan.js';
import { isObj, n, objs, s } from '../../figure-text.js';
import { type KindView, none } from '../../kind-view.js';
import { bool, list, nullOr, num, obj, opt, str } from '../../shape-check.js';
import { nullNum, nullStr, strings } from '../shared.js';
import { renderDeliveryLimitDemo } from './text.js';

/** `rmq-bench delivery-limit-demo`: x-delivery-limit under each AMQP 0-9-1 consumer action and AMQP 1.0 outcome, against the documented rules. */
export const deliveryLimitDemo: KindView<DeliveryLimitDemoResult> = {
  shape: obj<DeliveryLimitDemoResult>({
    deliveryLimit: num,
    rounds: num,
    rows: list(
      'rows',
      obj<DeliveryLimitRow>({
        action: str,
        dlx: bool,
        deliveries: list('deliveries', obj<SeenDelivery>({ deliveryCount: nullNum, redelivered: bool, cancelMs: opt(nullNum) })),
        fate: str,
        deathReason: opt(nullStr),
        rule: opt(str),
        agrees: bool,
        disagreements: opt(strings),
        protocol: opt(str),
        countFrom: opt(str),
        loop: opt(nullOr(obj<LoopRate>({ windowMs: num, deliveries: num, perSec: num }))),
      }),
    ),
    loopWindowMs: opt(num),
    consumerTimeoutMs: opt(num),
  }),
  text: renderDeliveryLimitDemo,
  charts: none,
  figures: (d) =>
    objs(d.rows)
      .map(
        (r) =>
          `${s(r.action)}${r.dlx === true ? ' (DLX)' : ''}: ${Array.isArray(r.deliveries) ? r.deliveries.length : '?'} deliveries, ${s(r.fate)}${isObj(r.loop) ? `, looping at ${n(r.loop.perSec)}/s` : ''}`,
      )
      .join('; '),
  reasons: (r) => r.rows.filter((x) => !x.agrees).map((x) => `${x.action} ${x.dlx ? 'with' : 'without'} a DLX: ${x.disagreements.join('; ')}`),
};
