import { describe, expect, it } from 'vitest';
import type { AuditItem } from '../../src/audit/check.js';
import { auditChecks, checkById, CHECKS } from '../../src/audit/checklist.js';
import { effectiveQueue } from '../../src/cluster/broker/policy.js';
import type { BrokerSnapshot } from '../../src/cluster/broker/snapshot.js';
import { topicMatches, Topology } from '../../src/cluster/broker/topology.js';
import { auditResultOf } from '../../src/scenarios/broker-tools/audit.js';
import {
  binding,
  classicQueue,
  defaultBinding,
  exchange,
  MEMBERS,
  node,
  policy,
  quorumQueue,
  stockSnapshot,
  stockWithDlq,
  streamQueue,
  unroutableStats,
} from './audit.fixtures.js';

const OPTIONS = { maxUnacked: 1_000 };

function itemsOf(s: BrokerSnapshot): AuditItem[] {
  return auditChecks(s, OPTIONS);
}

function find(items: AuditItem[], id: string, object: string): AuditItem {
  const hit = items.find((i) => i.id === id && i.object === object);
  if (!hit)
    throw new Error(
      `no ${id} item for ${object}; have: ${items
        .filter((i) => i.id === id)
        .map((i) => `${i.object}=${i.status}`)
        .join(', ')}`,
    );
  return hit;
}

const problems = (items: AuditItem[]): string[] => items.filter((i) => i.status !== 'pass').map((i) => `${i.status} ${i.id} ${i.object}`);

describe('audit of the stock topology (cluster/definitions.json)', () => {
  it('fails only on the retry loop: demo.orders ⇄ demo.retry with no DLQ bound to demo.dlx; both dead-letter at most once', () => {
    const items = itemsOf(stockSnapshot());
    expect(problems(items)).toEqual([
      'fail retry-loop queues demo.orders → demo.retry → demo.orders',
      'warn dead-letter-strategy queue demo.orders',
      'warn dead-letter-strategy queue demo.retry',
    ]);
    const loop = find(items, 'retry-loop', 'queues demo.orders → demo.retry → demo.orders');
    expect(loop.message).toContain('demo.retry holds them 5000 ms');
    expect(loop.message).toContain('no copy anywhere');
    expect(loop.fix).toContain("bind a DLQ to 'demo.dlx'");
    expect(find(items, 'delivery-limit', 'queue demo.orders').message).toBe('delivery limit 5 (policy)');
    expect(find(items, 'delivery-limit', 'queue demo.retry').message).toBe('delivery limit 20 (the broker default: not set on the queue)');
    expect(find(items, 'dlx-configured', 'queue demo.orders').message).toBe("dead-letter exchange 'demo.dlx' (policy dlx-orders)");
    expect(find(items, 'dlx-route', 'queue demo.orders').message).toMatch(/^dead letters reach demo\.retry through 'demo\.dlx'/);
    expect(find(items, 'dlx-route', 'queue demo.retry').message).toMatch(
      /^dead letters reach demo\.orders through the default exchange '' with routing key 'demo\.orders'/,
    );
    // demo.retry is a retry queue: no DLX check of its own, no "no consumer" warning.
    expect(items.filter((i) => i.object === 'queue demo.retry').map((i) => i.id)).not.toContain('no-consumers');
  });

  it('with demo.dlq bound to demo.dlx (after dlq-demo): the loop is a warning, and a non-empty DLQ is one', () => {
    const items = itemsOf(stockWithDlq(3));
    expect(problems(items)).toEqual([
      'warn dead-letter-strategy queue demo.orders',
      'warn dead-letter-strategy queue demo.retry',
      'warn retry-loop queues demo.orders → demo.retry → demo.orders',
      'warn dlq-messages queue demo.dlq',
    ]);
    expect(find(items, 'retry-loop', 'queues demo.orders → demo.retry → demo.orders').message).toContain('also reaches demo.dlq, so none is lost');
    expect(find(items, 'dlq-messages', 'queue demo.dlq').message).toBe('dead-letter queue holds 3 messages: each one failed somewhere');
    expect(auditResultOf(stockWithDlq(0), { answeredBy: { node: 'rabbit1', url: 'http://127.0.0.1:15672' }, unanswered: [] }, OPTIONS).ok).toBe(true);
  });
});

type Case = { name: string; change: (s: BrokerSnapshot) => void; id: string; object: string; status: 'pass' | 'warn' | 'fail'; message?: RegExp };

describe('consumer-timeout: quorum queues only', () => {
  it('a classic queue with x-consumer-timeout gets no consumer-timeout item', () => {
    const s = stockSnapshot();
    s.queues.push(classicQueue('t.classic-ct', { arguments: { 'x-consumer-timeout': 1_000 } }));
    expect(itemsOf(s).filter((i) => i.id === 'consumer-timeout' && i.object === 'queue t.classic-ct')).toEqual([]);
    expect(
      itemsOf(s)
        .filter((i) => i.id === 'consumer-timeout')
        .map((i) => i.object),
    ).toEqual(['queue demo.orders', 'queue demo.retry']);
  });
});

describe('one broken topology per check', () => {
  const cases: Case[] = [
    {
      name: 'a transient queue',
      change: (s) => s.queues.push(classicQueue('t.transient', { durable: false })),
      id: 'queue-durable',
      object: 'queue t.transient',
      status: 'fail',
      message: /transient/,
    },
    {
      name: 'an exclusive queue is not audited',
      change: (s) => s.queues.push(classicQueue('amq.gen-x', { durable: false, exclusive: true })),
      id: 'queue-durable',
      object: 'queue demo.orders',
      status: 'pass',
    },
    {
      name: 'a classic queue',
      change: (s) => s.queues.push(classicQueue('t.classic')),
      id: 'queue-type',
      object: 'queue t.classic',
      status: 'warn',
      message: /one copy, on one node/,
    },
    {
      name: 'a classic mirroring policy (3.x)',
      change: (s) => s.policies.push(policy('ha-all', '.*', { 'ha-mode': 'all', 'ha-sync-mode': 'automatic' })),
      id: 'mirroring-policy',
      object: 'policy ha-all',
      status: 'fail',
      message: /ha-mode, ha-sync-mode.*removed in RabbitMQ 4\.0/,
    },
    {
      name: 'a transient exchange',
      change: (s) => s.exchanges.push(exchange('t.x', 'topic', { durable: false })),
      id: 'exchange-durable',
      object: 'exchange t.x',
      status: 'fail',
    },
    {
      name: 'a work queue without a DLX',
      change: (s) => s.queues.push(quorumQueue('t.work')),
      id: 'dlx-configured',
      object: 'queue t.work',
      status: 'warn',
      message: /past its delivery limit \(20\) is dropped/,
    },
    {
      name: 'a DLX with nothing bound',
      change: (s) => {
        s.exchanges.push(exchange('t.dlx', 'fanout'));
        s.queues.push(quorumQueue('t.work', { arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': 't.dlx' } }));
      },
      id: 'dlx-route',
      object: 'queue t.work',
      status: 'fail',
      message: /no queue is bound for them: they are dropped/,
    },
    {
      name: 'a DLX that does not exist',
      change: (s) => s.queues.push(quorumQueue('t.work', { arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': 't.nope' } })),
      id: 'dlx-route',
      object: 'queue t.work',
      status: 'fail',
      message: /'t\.nope' does not exist/,
    },
    {
      name: 'a direct DLX bound with another key than x-dead-letter-routing-key',
      change: (s) => {
        s.exchanges.push(exchange('t.dlx', 'direct'));
        s.queues.push(
          quorumQueue('t.dlq'),
          quorumQueue('t.work', { arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': 't.dlx', 'x-dead-letter-routing-key': 'dead' } }),
        );
        s.bindings.push(binding('t.dlx', 't.dlq', 'other'));
      },
      id: 'dlx-route',
      object: 'queue t.work',
      status: 'fail',
      message: /routing key 'dead', and no queue is bound/,
    },
    {
      name: 'a topic DLX whose binding matches the original key',
      change: (s) => {
        s.exchanges.push(exchange('t.dlx', 'topic'), exchange('t.in', 'direct'));
        s.queues.push(quorumQueue('t.dlq'), quorumQueue('t.work', { arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': 't.dlx' } }));
        s.bindings.push(binding('t.in', 't.work', 'orders.eu'), binding('t.dlx', 't.dlq', 'orders.#'));
      },
      id: 'dlx-route',
      object: 'queue t.work',
      status: 'pass',
      message: /reach t\.dlq .*'orders\.eu'/,
    },
    {
      name: 'a queue fed by a fanout, dead-lettering to a direct DLX without key',
      change: (s) => {
        s.exchanges.push(exchange('t.dlx', 'direct'), exchange('t.fan', 'fanout'));
        s.queues.push(quorumQueue('t.work', { arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': 't.dlx' } }));
        s.bindings.push(binding('t.fan', 't.work'));
      },
      id: 'dlx-route',
      object: 'queue t.work',
      status: 'warn',
      message: /and others the bindings do not tell/,
    },
    {
      name: 'delivery-limit -1 (unlimited)',
      change: (s) => s.queues.push(quorumQueue('t.work', { delivery_limit: 'unlimited', arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': -1 } })),
      id: 'delivery-limit',
      object: 'queue t.work',
      status: 'fail',
      message: /unlimited \(-1 from the argument\)/,
    },
    {
      name: 'delivery-limit not set on 3.13 (unlimited there)',
      change: (s) => {
        s.overview.rabbitmq_version = '3.13.7';
        s.queues.push(quorumQueue('t.work', { delivery_limit: undefined }));
      },
      id: 'delivery-limit',
      object: 'queue t.work',
      status: 'fail',
      message: /not set: unlimited before RabbitMQ 4\.0/,
    },
    {
      name: 'a policy -1 yields to the argument',
      change: (s) => {
        s.policies.push(policy('t-unlimited', '^t\\.', { 'delivery-limit': -1 }, 1));
        s.queues.push(quorumQueue('t.work', { arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 3 } }));
      },
      id: 'delivery-limit',
      object: 'queue t.work',
      status: 'pass',
      message: /^delivery limit 3 \(argument and policy\)$/,
    },
    {
      name: 'the article’s priority-15 delayed-retry policy over dlx-orders',
      change: (s) =>
        s.policies.push(
          policy('delayed-retry', '^demo\\.orders$', { 'delayed-retry-type': 'failed', 'delayed-retry-min': 500, 'delayed-retry-max': 1200 }, 15),
        ),
      id: 'policy-shadowed',
      object: 'queue demo.orders',
      status: 'fail',
      message: /delayed-retry \(priority 15\) wins, so dlx-orders \(priority 2\) loses dead-letter-exchange, delivery-limit/,
    },
    {
      name: 'a higher policy that repeats the keys it shadows',
      change: (s) =>
        s.policies.push(
          policy('delayed-retry', '^demo\\.orders$', { 'delayed-retry-type': 'failed', 'dead-letter-exchange': 'demo.dlx', 'delivery-limit': 5 }, 15),
        ),
      id: 'policy-shadowed',
      object: 'queue demo.orders',
      status: 'pass',
      message: /repeats the keys of dlx-orders/,
    },
    {
      name: 'a loop with no exit, outside the demo',
      change: (s) => {
        s.exchanges.push(exchange('t.dlx', 'fanout'));
        s.queues.push(
          quorumQueue('t.work', { arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': 't.dlx' } }),
          quorumQueue('t.wait', {
            arguments: { 'x-queue-type': 'quorum', 'x-message-ttl': 1000, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 't.work' },
          }),
        );
        s.bindings.push(defaultBinding('t.work'), defaultBinding('t.wait'), binding('t.dlx', 't.wait'));
      },
      id: 'retry-loop',
      object: 'queues t.work → t.wait → t.work',
      status: 'fail',
      message: /t\.wait holds them 1000 ms/,
    },
    {
      name: 'a queue dead-lettering to itself (default exchange, no routing key)',
      change: (s) => s.queues.push(quorumQueue('t.self', { arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': '' } })),
      id: 'retry-loop',
      object: 'queues t.self → t.self',
      status: 'fail',
    },
    { name: 'two nodes', change: (s) => void s.nodes.pop(), id: 'cluster-size', object: 'cluster rabbit@rabbit1', status: 'fail', message: /2 nodes/ },
    {
      name: 'a node down',
      change: (s) => (s.nodes[1] = node('rabbit@rabbit2', { running: false })),
      id: 'node-running',
      object: 'node rabbit@rabbit2',
      status: 'fail',
      message: /not running \(2 of 3 are\)/,
    },
    {
      name: 'a partition',
      change: (s) => (s.nodes[0] = node('rabbit@rabbit1', { partitions: ['rabbit@rabbit3'] })),
      id: 'partitions',
      object: 'node rabbit@rabbit1',
      status: 'fail',
    },
    {
      name: 'a memory alarm',
      change: (s) => (s.nodes[2] = node('rabbit@rabbit3', { mem_alarm: true })),
      id: 'alarms',
      object: 'node rabbit@rabbit3',
      status: 'fail',
      message: /^memory alarm/,
    },
    {
      name: 'a disk alarm',
      change: (s) => (s.nodes[2] = node('rabbit@rabbit3', { disk_free_alarm: true })),
      id: 'alarms',
      object: 'node rabbit@rabbit3',
      status: 'fail',
      message: /^disk alarm/,
    },
    {
      name: 'messages dropped as unroutable',
      change: (s) => (s.overview.message_stats = unroutableStats(3, 1)),
      id: 'unroutable-dropped',
      object: 'cluster rabbit@rabbit1',
      status: 'fail',
      message: /^3 messages dropped as unroutable \(1 message returned to a mandatory publisher\), counted since the nodes started/,
    },
    {
      name: 'messages returned to mandatory publishers only',
      change: (s) => (s.overview.message_stats = unroutableStats(0, 4)),
      id: 'unroutable-dropped',
      object: 'cluster rabbit@rabbit1',
      status: 'pass',
      message: /^no message dropped as unroutable since the nodes started \(4 messages returned/,
    },
    {
      name: 'a quorum queue with a member offline',
      change: (s) => s.queues.push(quorumQueue('t.q', { online: MEMBERS.slice(0, 2) })),
      id: 'quorum-members',
      object: 'queue t.q',
      status: 'warn',
      message: /2\/3 members online \(rabbit@rabbit3 offline\)/,
    },
    {
      name: 'a quorum queue without majority or leader',
      change: (s) => s.queues.push(quorumQueue('t.q', { online: MEMBERS.slice(0, 1), leader: undefined })),
      id: 'quorum-members',
      object: 'queue t.q',
      status: 'fail',
      message: /1\/3 members online, no leader/,
    },
    {
      name: 'a quorum queue with one member',
      change: (s) => s.queues.push(quorumQueue('t.q', { members: MEMBERS.slice(0, 1), online: MEMBERS.slice(0, 1), leader: 'rabbit@rabbit1' })),
      id: 'quorum-members',
      object: 'queue t.q',
      status: 'warn',
      message: /only 1 member/,
    },
    {
      name: 'a DLQ known by its name before any dead letter',
      change: (s) => s.queues.push(quorumQueue('t.dlq', { messages: 2, messages_ready: 2 })),
      id: 'dlq-messages',
      object: 'queue t.dlq',
      status: 'warn',
    },
    {
      name: 'a stream without a retention grows for ever',
      change: (s) => s.queues.push(streamQueue('t.events')),
      id: 'stream-retention',
      object: 'queue t.events',
      status: 'warn',
      message: /^a stream without max-age or max-length-bytes: reading never removes a message/,
    },
    {
      name: 'a stream with x-max-length-bytes',
      change: (s) => s.queues.push(streamQueue('t.events', { arguments: { 'x-queue-type': 'stream', 'x-max-length-bytes': 20_000_000_000 } })),
      id: 'stream-retention',
      object: 'queue t.events',
      status: 'pass',
      message: /^retention: max-length-bytes 20000000000$/,
    },
    {
      name: 'a stream with a max-age from its policy',
      change: (s) => {
        s.queues.push(streamQueue('t.events', { policy: 'events-retention' }));
        s.policies.push(policy('events-retention', '^t\\.events$', { 'max-age': '7D' }, 0, 'streams'));
      },
      id: 'stream-retention',
      object: 'queue t.events',
      status: 'pass',
      message: /^retention: max-age 7D$/,
    },
    {
      name: 'many unacked',
      change: (s) => s.queues.push(quorumQueue('t.busy', { messages_unacknowledged: 1_000, consumers: 1 })),
      id: 'unacked',
      object: 'queue t.busy',
      status: 'warn',
      message: /^1000 unacked messages \(limit 1000\)/,
    },
    {
      name: 'messages ready and no consumer',
      change: (s) => s.queues.push(quorumQueue('t.idle', { messages: 4, messages_ready: 4 })),
      id: 'no-consumers',
      object: 'queue t.idle',
      status: 'warn',
      message: /^4 messages ready and no consumer$/,
    },
    {
      name: 'an empty queue without consumer is fine',
      change: (s) => s.queues.push(quorumQueue('t.idle')),
      id: 'no-consumers',
      object: 'queue t.idle',
      status: 'pass',
    },
    {
      name: 'at-least-once with reject-publish: the dead letter stays until confirmed',
      change: (s) =>
        s.policies.push(
          policy(
            'dlx-orders-alo',
            '^demo\\.orders$',
            { 'dead-letter-exchange': 'demo.dlx', 'delivery-limit': 5, 'dead-letter-strategy': 'at-least-once', overflow: 'reject-publish' },
            5,
          ),
        ),
      id: 'dead-letter-strategy',
      object: 'queue demo.orders',
      status: 'pass',
      message: /^at-least-once with overflow reject-publish/,
    },
    {
      name: 'at-least-once without reject-publish: it runs at most once',
      change: (s) =>
        s.queues.push(
          quorumQueue('t.alo', { arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': 'demo.dlx', 'x-dead-letter-strategy': 'at-least-once' } }),
        ),
      id: 'dead-letter-strategy',
      object: 'queue t.alo',
      status: 'fail',
      message: /^dead-letter-strategy at-least-once with overflow drop-head: RabbitMQ falls back to at-most-once/,
    },
    {
      name: 'a quorum queue without a DLX has no dead-letter strategy item (dlx-configured speaks for it)',
      change: (s) => s.queues.push(quorumQueue('t.nodlx')),
      id: 'dead-letter-strategy',
      object: 'queue demo.orders',
      status: 'warn',
      message: /^dead-lettering at-most-once \(the default\): a dead letter leaves without a confirm/,
    },
    {
      name: 'a quorum queue without a consumer timeout of its own: the broker setting, named as unseen',
      change: (s) => s.queues.push(quorumQueue('t.ct')),
      id: 'consumer-timeout',
      object: 'queue t.ct',
      status: 'pass',
      message: /^consumer timeout the broker's consumer_timeout \(rabbitmq\.conf; 30 min unless set there, which the management API does not show\)$/,
    },
    {
      name: 'queue argument and policy: the smaller one is in force',
      change: (s) => {
        s.queues.push(quorumQueue('t.ct', { arguments: { 'x-queue-type': 'quorum', 'x-consumer-timeout': 600_000 } }));
        s.policies.push(policy('ct', '^t\\.ct$', { 'consumer-timeout': 120_000 }));
      },
      id: 'consumer-timeout',
      object: 'queue t.ct',
      status: 'pass',
      message: /^consumer timeout 2 min \(the smaller of the queue argument and the policy\)$/,
    },
    {
      name: 'a policy of two days: as good as none',
      change: (s) =>
        s.policies.push(policy('ct', '^demo\\.orders$', { 'consumer-timeout': 172_800_000, 'dead-letter-exchange': 'demo.dlx', 'delivery-limit': 5 }, 5)),
      id: 'consumer-timeout',
      object: 'queue demo.orders',
      status: 'warn',
      message: /^consumer timeout 48 h \(policy ct\): the queue's 48 h is as good as none/,
    },
    {
      name: "a consumer's argument overrides the queue's, and a day is flagged",
      change: (s) => {
        s.queues.push(quorumQueue('t.ct', { arguments: { 'x-queue-type': 'quorum', 'x-consumer-timeout': 60_000 } }));
        s.consumers = [
          { queue: { name: 't.ct', vhost: '/' }, consumer_tag: 'slow-worker', arguments: { 'x-consumer-timeout': 86_400_000 } },
          { queue: { name: 't.ct', vhost: '/' }, consumer_tag: 'plain', arguments: {} },
        ];
      },
      id: 'consumer-timeout',
      object: 'queue t.ct',
      status: 'warn',
      message:
        /^consumer timeout 1 min \(queue argument\); 1 consumer\(s\) override it with x-consumer-timeout: slow-worker 24 h: consumer slow-worker's 24 h is as good as none/,
    },
    {
      name: 'classic queues have no consumer timeout item (4.3 enforces it on quorum queues)',
      change: (s) => s.queues.push(classicQueue('t.classic-ct', { arguments: { 'x-consumer-timeout': 1_000 } })),
      id: 'queue-type',
      object: 'queue t.classic-ct',
      status: 'warn',
    },
    {
      name: 'another vhost is named',
      change: (s) => s.queues.push(classicQueue('t.c', { vhost: 'shop' })),
      id: 'queue-type',
      object: 'queue t.c (vhost shop)',
      status: 'warn',
    },
  ];

  it.each(cases)('$name → $id $status', (c) => {
    const s = stockWithDlq(0);
    c.change(s);
    const item = find(itemsOf(s), c.id, c.object);
    expect(item.status).toBe(c.status);
    if (c.message) expect(item.message).toMatch(c.message);
    expect(item.fix === null).toBe(c.status === 'pass');
  });

  it('every check id is covered by a failing or warning case above, but a note (it only informs)', () => {
    const broken = new Set(cases.filter((c) => c.status !== 'pass').map((c) => c.id));
    const all = new Set(itemsOf(stockWithDlq(0)).map((i) => i.id));
    for (const id of all) if (!checkById(id)?.note) expect(broken, id).toContain(id);
    expect(CHECKS.filter((c) => c.note).map((c) => c.id)).toEqual(['requeue-loop']);
  });
});

describe('effective settings', () => {
  const policies = [
    policy('low', '^q$', { 'dead-letter-exchange': 'p.dlx', 'message-ttl': 9000 }, 1),
    policy('other-type', '^q$', { 'max-length': 1 }, 99, 'streams'),
  ];
  it.each([
    ['argument DLX wins over the policy', { 'x-dead-letter-exchange': 'a.dlx' }, 'a.dlx', 'argument', 9000],
    ['policy DLX when no argument', {}, 'p.dlx', 'policy', 9000],
    ['the smaller TTL wins', { 'x-message-ttl': 4000 }, 'p.dlx', 'policy', 4000],
  ])('%s', (_n, args, dlx, from, ttl) => {
    const eq = effectiveQueue(quorumQueue('q', { arguments: { 'x-queue-type': 'quorum', ...args } }), policies, { rabbitmq_version: '4.3.6' });
    expect(eq.policy?.name).toBe('low'); // the streams-only policy does not apply to a quorum queue
    expect(eq.dlx).toBe(dlx);
    expect(eq.dlxFrom).toBe(from);
    expect(eq.messageTtlMs).toBe(ttl);
  });

  it('equal priorities: the broker’s own choice (queue.policy) decides', () => {
    const two = [policy('a', '^q$', { 'delivery-limit': 1 }, 5), policy('b', '^q$', { 'delivery-limit': 2 }, 5)];
    expect(effectiveQueue(quorumQueue('q', { policy: 'b' }), two, {}).deliveryLimit).toEqual({ limit: 2, source: 'policy' });
  });

  it('a policy with an invalid pattern matches nothing', () => {
    expect(effectiveQueue(quorumQueue('q'), [policy('bad', '(', { 'delivery-limit': 1 })], {}).policy).toBeUndefined();
  });
});

describe('topicMatches', () => {
  it.each([
    ['orders.#', 'orders', true],
    ['orders.#', 'orders.eu.new', true],
    ['orders.*', 'orders.eu', true],
    ['orders.*', 'orders.eu.new', false],
    ['#', '', true],
    ['*.eu', 'orders.eu', true],
    ['#.new', 'orders.eu.new', true],
    ['orders', 'order', false],
  ])('%s ~ %s → %s', (pattern, key, expected) => {
    expect(topicMatches(pattern, key)).toBe(expected);
  });
});

describe('Topology.route', () => {
  it('follows exchange-to-exchange bindings and the alternate exchange', () => {
    const s = stockSnapshot();
    s.exchanges.push(exchange('t.front', 'direct', { arguments: { 'alternate-exchange': 't.ae' } }), exchange('t.ae', 'fanout'), exchange('t.inner', 'topic'));
    s.queues.push(quorumQueue('t.unrouted'), quorumQueue('t.eu'));
    s.bindings.push(binding('t.ae', 't.unrouted'), binding('t.front', 't.inner', 'eu', 'exchange'), binding('t.inner', 't.eu', '#'));
    const t = new Topology(s);
    expect([...t.route('/', 't.front', 'eu').queues].map((k) => t.nameOf(k))).toEqual(['t.eu']);
    expect([...t.route('/', 't.front', 'us').queues].map((k) => t.nameOf(k))).toEqual(['t.unrouted']);
  });

  it('a headers exchange is not evaluated: all its bindings count, and it says so', () => {
    const s = stockSnapshot();
    s.exchanges.push(exchange('t.h', 'headers'));
    s.queues.push(quorumQueue('t.a'));
    s.bindings.push(binding('t.h', 't.a'));
    const r = new Topology(s).route('/', 't.h', 'x');
    expect(r.queues.size).toBe(1);
    expect(r.notEvaluated).toEqual(['t.h (headers)']);
  });
});
