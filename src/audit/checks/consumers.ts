import { num } from '../../cluster/broker/policy.js';
import { auditedQueues, pass, warn, type Check } from '../check.js';

/** The checks of a queue's consumers as the broker sees them. */

/** At or above this, a consumer timeout is as good as none: a stuck consumer keeps its deliveries for a day or more. */
const EFFECTIVELY_UNLIMITED_MS = 86_400_000;

function duration(ms: number): string {
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms >= 1_000 && ms % 1_000 === 0) return `${ms / 1_000} s`;
  return `${ms} ms`;
}

export const consumerTimeout: Check = {
  id: 'consumer-timeout',
  title: 'quorum queues bound how long a consumer may hold a delivery',
  run: (s, t) =>
    auditedQueues(t, { streams: false })
      .filter(({ eq }) => eq.consumerTimeout !== undefined)
      .map(({ eq, queue: q, object: obj }) => {
        const ct = eq.consumerTimeout!;
        const overrides = (s.consumers ?? [])
          .filter((c) => c.queue.name === q.name && c.queue.vhost === q.vhost)
          .map((c) => ({ tag: c.consumer_tag, ms: num(c.arguments?.['x-consumer-timeout']) }))
          .filter((c): c is { tag: string; ms: number } => c.ms !== undefined);
        const queueLevel =
          ct.ms === null
            ? "the broker's consumer_timeout (rabbitmq.conf; 30 min unless set there, which the management API does not show)"
            : `${duration(ct.ms)} (${ct.source === 'policy' ? `policy ${eq.policy?.name ?? '?'}` : ct.source === 'argument' ? 'queue argument' : 'the smaller of the queue argument and the policy'})`;
        const overrideText =
          overrides.length === 0
            ? ''
            : `; ${overrides.length} consumer(s) override it with x-consumer-timeout: ${overrides.map((c) => `${c.tag} ${duration(c.ms)}`).join(', ')}`;
        const unbounded = [
          ...(ct.ms !== null && ct.ms >= EFFECTIVELY_UNLIMITED_MS ? [`the queue's ${duration(ct.ms)}`] : []),
          ...overrides.filter((c) => c.ms >= EFFECTIVELY_UNLIMITED_MS).map((c) => `consumer ${c.tag}'s ${duration(c.ms)}`),
        ];
        if (unbounded.length > 0) {
          return warn(
            'consumer-timeout',
            obj,
            `consumer timeout ${queueLevel}${overrideText}: ${unbounded.join(' and ')} is as good as none. A stuck consumer holds its deliveries that long: nobody else gets them, and the queue's log cannot be truncated behind them (its disk use grows)`,
            "set consumer-timeout in a policy (or x-consumer-timeout) to a bound above the slowest processing, e.g. 30 min, and handle the broker's basic.cancel in the consumer (see rmq-bench consumer-timeout-demo)",
          );
        }
        return pass('consumer-timeout', obj, `consumer timeout ${queueLevel}${overrideText}`);
      }),
};
