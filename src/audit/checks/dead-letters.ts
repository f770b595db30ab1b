import type { DeliveryLimit, EffectiveQueue } from '../../cluster/broker/policy.js';
import { objectName, type OverviewInfo } from '../../cluster/broker/snapshot.js';
import type { Topology } from '../../cluster/broker/topology.js';
import { auditedQueues, fail, pass, warn, type AuditItem, type Check } from '../check.js';

/** The checks of dead-lettering: where a failed message goes, and whether it ever stops. */

const DLX_FIX = 'set dead-letter-exchange in a policy matching the queue (or x-dead-letter-exchange) and bind a DLQ to that exchange';

/**
 * With a delivery limit: on RabbitMQ 4.3 only a failed delivery raises the count (basic.reject with
 * requeue, a crash, AMQP 1.0 modified with delivery-failed); an explicit return does not
 * (basic.nack with requeue, released, modified without delivery-failed), so a consumer that
 * requeues that way never reaches the limit.
 */
const LIMIT_NOTE =
  'and requeue a failed message with basic.reject (AMQP 1.0: modified with delivery-failed), not basic.nack or released: those never raise the delivery count and loop past the limit for ever (rmq-bench delivery-limit-demo)';

export const dlxConfigured: Check = {
  id: 'dlx-configured',
  title: 'work queues have a dead-letter exchange (a quorum queue drops what passes its delivery limit without one)',
  run: (_s, t) =>
    auditedQueues(t, { streams: false })
      .filter(({ role }) => role === 'work')
      .map(({ eq, object: obj }) =>
        eq.dlx === undefined
          ? warn(
              'dlx-configured',
              obj,
              `no dead-letter exchange: a message rejected without requeue, expired${eq.deliveryLimit?.limit != null ? `, or past its delivery limit (${eq.deliveryLimit.limit})` : ''} is dropped`,
              eq.deliveryLimit?.limit != null ? `${DLX_FIX}; ${LIMIT_NOTE}` : DLX_FIX,
            )
          : pass(
              'dlx-configured',
              obj,
              `dead-letter exchange '${eq.dlx}' (${eq.dlxFrom === 'policy' ? `policy ${eq.policy?.name ?? '?'}` : 'queue argument'})`,
            ),
      ),
};

function dlxRouteItem(t: Topology, eq: EffectiveQueue, obj: string): AuditItem {
  const route = t.deadLetterEdges.get(eq.key) ?? t.deadLetterRoute(eq);
  const dlx = eq.dlx === '' ? "the default exchange ''" : `'${eq.dlx}'`;
  const keyText =
    eq.dlRoutingKey !== undefined
      ? `routing key '${eq.dlRoutingKey}'`
      : `the original routing keys (${route.keys.map((k) => `'${k}'`).join(', ')}${route.unknownKey ? ' and others the bindings do not tell' : ''})`;
  if (route.queues.size > 0) {
    const names = [...route.queues].map((k) => t.nameOf(k)).sort();
    const guess = route.notEvaluated.length > 0 ? `; ${route.notEvaluated.join(', ')} not evaluated: all its bindings counted` : '';
    return pass('dlx-route', obj, `dead letters reach ${names.join(', ')} through ${dlx} with ${keyText}${guess}`);
  }
  if (route.missing.length > 0) {
    return fail(
      'dlx-route',
      obj,
      `dead-letter exchange ${route.missing.map((m) => `'${m}'`).join(', ')} does not exist: dead letters are dropped`,
      `declare exchange '${route.missing[0]}' (durable) and bind a DLQ to it, or point the queue at an existing exchange`,
    );
  }
  if (route.unknownKey) {
    return warn(
      'dlx-route',
      obj,
      `dead letters go through ${dlx} with ${keyText}: none of the known keys reaches a queue`,
      `set a dead-letter-routing-key that ${dlx} routes to a DLQ, or make ${dlx} a fanout exchange with a DLQ bound`,
    );
  }
  return fail(
    'dlx-route',
    obj,
    `dead letters go through ${dlx} with ${keyText}, and no queue is bound for them: they are dropped`,
    eq.dlx === ''
      ? `set x-dead-letter-routing-key to the name of an existing DLQ`
      : `bind a DLQ to ${dlx}${eq.dlRoutingKey !== undefined ? ` with key '${eq.dlRoutingKey}'` : ''}`,
  );
}

export const dlxRoute: Check = {
  id: 'dlx-route',
  title: 'dead letters reach a queue',
  run: (_s, t) =>
    auditedQueues(t, { streams: false })
      .filter(({ eq }) => eq.dlx !== undefined)
      .map(({ eq, object: obj }) => dlxRouteItem(t, eq, obj)),
};

/** "5 (policy)", "20 (the broker default: not set on the queue)": a limit and where it comes from. Pure. */
const limitText = ({ limit, source }: DeliveryLimit): string =>
  `${limit ?? 'unlimited'} (${source === 'broker default' ? 'the broker default: not set on the queue' : source})`;

export const deliveryLimit: Check = {
  id: 'delivery-limit',
  title: 'quorum queues have a delivery limit',
  run: (_s, t) =>
    auditedQueues(t, { streams: false }).flatMap(({ eq, object: obj }) => {
      if (!eq.deliveryLimit) return [];
      const { limit, source } = eq.deliveryLimit;
      return [
        limit === null
          ? fail(
              'delivery-limit',
              obj,
              `delivery limit unlimited (${source === 'not set' ? 'not set: unlimited before RabbitMQ 4.0' : `-1 from the ${source}`}): a message that crashes its consumer is redelivered forever and blocks the ones behind it`,
              'set delivery-limit in a policy (or x-delivery-limit), e.g. 5, together with a dead-letter exchange that reaches a DLQ',
            )
          : pass('delivery-limit', obj, `delivery limit ${limitText(eq.deliveryLimit)}`),
      ];
    }),
};

/** Whether the broker is RabbitMQ 4.3 or later (an unknown version counts as one): explicit returns stopped counting in 4.3.0. */
function returnsUncounted(overview: OverviewInfo): boolean {
  const m = /^(\d+)\.(\d+)\./.exec(overview.rabbitmq_version ?? overview.product_version ?? '');
  return !m || Number(m[1]) > 4 || (Number(m[1]) === 4 && Number(m[2]) >= 3);
}

/**
 * A note on each quorum queue with a delivery limit (its own, the policy's or the broker's
 * default): since RabbitMQ 4.3.0 (release notes: unlimited explicit returns) only a failed
 * delivery raises the delivery count; before it every return did. The audit cannot see how consumers requeue, so this is
 * exposure, not a finding: it passes, and says what to look for in the consumers.
 */
export const requeueLoop: Check = {
  id: 'requeue-loop',
  title: 'where a delivery limit is set: which requeues it counts (a note on consumers, which the audit cannot see)',
  note: true,
  run: (s, t) =>
    auditedQueues(t, { streams: false }).flatMap(({ eq, object: obj }) =>
      eq.deliveryLimit?.limit != null
        ? [
            pass(
              'requeue-loop',
              obj,
              returnsUncounted(s.overview)
                ? `delivery limit ${limitText(eq.deliveryLimit)} counts failed deliveries only: since RabbitMQ 4.3 a consumer that requeues with basic.nack (AMQP 0-9-1), or settles with released or with modified without delivery-failed (AMQP 1.0), never raises the delivery count, so a poison message it requeues that way loops past the limit for ever. The audit cannot see how this queue's consumers requeue: a failure requeued with basic.reject (AMQP 1.0: modified with delivery-failed) counts, and stops at the limit (rmq-bench delivery-limit-demo measures each way)`
                : `delivery limit ${limitText(eq.deliveryLimit)} counts every return before RabbitMQ 4.3 (a nack or reject with requeue, a closed channel, AMQP 1.0 released or modified): a requeued poison message stops at the limit, and is dropped without a dead-letter exchange. After an upgrade to 4.3 a basic.nack with requeue no longer counts (rmq-bench delivery-limit-demo --clusters shows both)`,
            ),
          ]
        : [],
    ),
};

export const deadLetterStrategy: Check = {
  id: 'dead-letter-strategy',
  title: 'quorum queues dead-letter at least once where the dead letter is the only copy',
  run: (_s, t) =>
    auditedQueues(t, { streams: false })
      .filter(({ eq }) => eq.type === 'quorum' && eq.dlx !== undefined && eq.deadLetterStrategy !== undefined)
      .map(({ eq, object: obj }) => {
        const atLeastOnce = eq.deadLetterStrategy === 'at-least-once';
        if (atLeastOnce && eq.overflow === 'reject-publish') {
          return pass(
            'dead-letter-strategy',
            obj,
            'at-least-once with overflow reject-publish: each dead letter stays in this queue until its target has confirmed it',
          );
        }
        const fix = 'set dead-letter-strategy at-least-once and overflow reject-publish (policy keys, or x-dead-letter-strategy and x-overflow)';
        if (atLeastOnce) {
          return fail(
            'dead-letter-strategy',
            obj,
            `dead-letter-strategy at-least-once with overflow ${eq.overflow}: RabbitMQ falls back to at-most-once without reject-publish (measured on 4.3.6: 209 of 600 dead letters lost while the DLQ's leader was paused; rmq-bench dlq-demo --strategy all)`,
            fix,
          );
        }
        return warn(
          'dead-letter-strategy',
          obj,
          `dead-lettering at-most-once${eq.deadLetterStrategy === 'at-most-once' ? ' (the default)' : ` (${eq.deadLetterStrategy})`}: a dead letter leaves without a confirm, and is lost if its target cannot take it (measured on 4.3.6: 405 of 600 lost while the DLQ's leader was paused, 200 of 400 while it was killed; rmq-bench dlq-demo --strategy both)`,
          fix,
        );
      }),
};

export const retryLoop: Check = {
  id: 'retry-loop',
  title: 'no dead-letter cycle without an exit',
  run: (_s, t) => {
    const cycles = t.deadLetterCycles();
    if (cycles.length === 0) return [pass('retry-loop', 'dead-letter graph', 'no dead-letter cycle')];
    return cycles.map((part) => {
      const members = new Set(part);
      const path = t.cyclePath(part);
      const exits = new Set<string>();
      for (const m of part) for (const q of t.deadLetterEdges.get(m)?.queues ?? []) if (!members.has(q)) exits.add(q);
      const first = t.queues.get(path[0]!)!;
      const obj = objectName('queues', first.queue.vhost, path.map((k) => t.nameOf(k)).join(' → '));
      const ttl = part
        .map((k) => t.queues.get(k)!)
        .filter((eq) => eq.messageTtlMs !== undefined)
        .map((eq) => `${eq.queue.name} holds them ${eq.messageTtlMs} ms`);
      const loop = `dead letters go round ${path.map((k) => t.nameOf(k)).join(' → ')}${ttl.length > 0 ? ` (${ttl.join(', ')})` : ''}`;
      const fix =
        'give the loop an exit: the consumer counts attempts (x-death count) and, past N, publishes the message to a DLQ and acks it; or use RabbitMQ 4.3 delayed retry (x-delayed-retry-*) with a delivery-limit and a DLX that reaches a DLQ instead of a TTL queue';
      const unrejected =
        'one dead-lettered without a rejection (delivery limit, TTL, max-length) is dropped when it comes round again (RabbitMQ’s dead-letter cycle detection)';
      if (exits.size === 0) {
        return fail(
          'retry-loop',
          obj,
          `${loop}, and no other queue receives them. A message rejected on every attempt cycles forever; ${unrejected} and is lost: there is no copy anywhere`,
          `${fix}; until then, bind a DLQ to ${first.dlx === '' ? 'the dead-letter exchange' : `'${first.dlx}'`} so that a copy of each dead letter is kept`,
        );
      }
      const exitNames = [...exits]
        .map((k) => t.nameOf(k))
        .sort()
        .join(', ');
      return warn(
        'retry-loop',
        obj,
        `${loop}. A copy of each dead letter also reaches ${exitNames}, so none is lost, but nothing ends the loop: a message rejected on every attempt cycles forever (one more copy in ${exitNames} each round); ${unrejected}, its copy in ${exitNames} remains`,
        fix,
      );
    });
  },
};
