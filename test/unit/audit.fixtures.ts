import type { NodeInfo } from '../../src/cluster/broker/management.js';
import type { BindingInfo, BrokerSnapshot, ExchangeInfo, PolicyInfo, QueueInfo } from '../../src/cluster/broker/snapshot.js';

/**
 * Snapshots shaped like RabbitMQ 4.3.6's management API answers (field names and values
 * copied from /api/queues, /api/nodes... of the bench cluster), for the pure audit and
 * watch checks.
 */

export const MEMBERS = ['rabbit@rabbit1', 'rabbit@rabbit2', 'rabbit@rabbit3'];

export function quorumQueue(name: string, over: Partial<QueueInfo> = {}): QueueInfo {
  return {
    arguments: { 'x-queue-type': 'quorum' },
    auto_delete: false,
    consumers: 0,
    delivery_limit: 20,
    durable: true,
    effective_policy_definition: {},
    exclusive: false,
    leader: 'rabbit@rabbit3',
    members: [...MEMBERS],
    messages: 0,
    messages_delayed: 0,
    messages_ready: 0,
    messages_unacknowledged: 0,
    name,
    node: 'rabbit@rabbit3',
    online: [...MEMBERS],
    state: 'running',
    type: 'quorum',
    vhost: '/',
    ...over,
  };
}

export function streamQueue(name: string, over: Partial<QueueInfo> = {}): QueueInfo {
  return {
    arguments: { 'x-queue-type': 'stream' },
    auto_delete: false,
    consumers: 0,
    durable: true,
    effective_policy_definition: {},
    exclusive: false,
    leader: 'rabbit@rabbit2',
    members: [...MEMBERS],
    name,
    node: 'rabbit@rabbit2',
    online: [...MEMBERS],
    state: 'running',
    type: 'stream',
    vhost: '/',
    ...over,
  };
}

export function classicQueue(name: string, over: Partial<QueueInfo> = {}): QueueInfo {
  return {
    arguments: { 'x-queue-type': 'classic' },
    auto_delete: false,
    consumers: 0,
    durable: true,
    effective_policy_definition: {},
    exclusive: false,
    messages: 0,
    messages_ready: 0,
    messages_unacknowledged: 0,
    name,
    node: 'rabbit@rabbit1',
    state: 'running',
    type: 'classic',
    vhost: '/',
    ...over,
  };
}

export function exchange(name: string, type: string, over: Partial<ExchangeInfo> = {}): ExchangeInfo {
  return { arguments: {}, auto_delete: false, durable: true, internal: false, name, type, vhost: '/', ...over };
}

export function binding(source: string, destination: string, routingKey = '', destinationType = 'queue'): BindingInfo {
  return { source, vhost: '/', destination, destination_type: destinationType, routing_key: routingKey, arguments: {} };
}

/** The default exchange's implicit binding, as /api/bindings lists it. */
export const defaultBinding = (queue: string): BindingInfo => binding('', queue, queue);

export function node(name: string, over: Partial<NodeInfo> = {}): NodeInfo {
  return { name, running: true, mem_alarm: false, disk_free_alarm: false, partitions: [], uptime: 199_811, ...over };
}

export function policy(name: string, pattern: string, definition: Record<string, unknown>, priority = 0, applyTo = 'queues'): PolicyInfo {
  return { vhost: '/', name, pattern, 'apply-to': applyTo, definition, priority };
}

const BUILT_IN: ExchangeInfo[] = [
  exchange('', 'direct'),
  exchange('amq.direct', 'direct'),
  exchange('amq.fanout', 'fanout'),
  exchange('amq.headers', 'headers'),
  exchange('amq.match', 'headers'),
  exchange('amq.rabbitmq.trace', 'topic', { internal: true }),
  exchange('amq.topic', 'topic'),
];

/** cluster/definitions.json as loaded: demo.orders (policy dlx-orders) → demo.dlx (fanout) → demo.retry (TTL 5 s) → demo.orders. */
export function stockSnapshot(): BrokerSnapshot {
  return {
    overview: {
      cluster_name: 'rabbit@rabbit1',
      rabbitmq_version: '4.3.6',
      product_version: '4.3.6',
      node: 'rabbit@rabbit1',
      // A fresh cluster's: no drop_unroutable or return_unroutable key until one is counted.
      message_stats: { disk_reads: 0, disk_writes: 0, disk_reads_details: { rate: 0 }, disk_writes_details: { rate: 0 } },
    },
    nodes: MEMBERS.map((n) => node(n)),
    queues: [
      quorumQueue('demo.orders', {
        delivery_limit: 5,
        effective_policy_definition: { 'dead-letter-exchange': 'demo.dlx', 'delivery-limit': 5 },
        policy: 'dlx-orders',
      }),
      quorumQueue('demo.retry', {
        arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'demo.orders', 'x-message-ttl': 5000, 'x-queue-type': 'quorum' },
      }),
    ],
    exchanges: [...BUILT_IN, exchange('demo.dlx', 'fanout'), exchange('demo.orders', 'direct')],
    bindings: [
      defaultBinding('demo.orders'),
      defaultBinding('demo.retry'),
      binding('demo.dlx', 'demo.retry'),
      binding('demo.orders', 'demo.orders', 'demo.orders'),
    ],
    policies: [policy('dlx-orders', '^demo\\.orders$', { 'dead-letter-exchange': 'demo.dlx', 'delivery-limit': 5 }, 2)],
  };
}

/** The stock topology after `rmq-bench dlq-demo`: quorum queue demo.dlq bound to demo.dlx. */
export function stockWithDlq(dlqMessages = 0): BrokerSnapshot {
  const s = stockSnapshot();
  s.queues.push(quorumQueue('demo.dlq', { messages: dlqMessages, messages_ready: dlqMessages }));
  s.bindings.push(defaultBinding('demo.dlq'), binding('demo.dlx', 'demo.dlq'));
  return s;
}

/** /api/overview's message_stats once messages were dropped and returned as unroutable (keys as 4.3.6 names them). */
export function unroutableStats(dropped: number, returned: number): NonNullable<BrokerSnapshot['overview']['message_stats']> {
  const stats: NonNullable<BrokerSnapshot['overview']['message_stats']> = { disk_reads: 0, disk_writes: 0 };
  if (dropped > 0) Object.assign(stats, { drop_unroutable: dropped, drop_unroutable_details: { rate: 0.6 } });
  if (returned > 0) Object.assign(stats, { return_unroutable: returned, return_unroutable_details: { rate: 0.2 } });
  return stats;
}
