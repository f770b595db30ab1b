import { describe, expect, it } from 'vitest';
import { CHECK_IDS, type AuditItem, type AuditOptions, type CheckId } from '../../src/audit/check.js';
import { auditChecks, checkById, CHECKS } from '../../src/audit/checklist.js';
import type { BrokerSnapshot, FeatureFlagInfo } from '../../src/cluster/broker/snapshot.js';
import { Topology } from '../../src/cluster/broker/topology.js';
import { classicQueue, exchange, MEMBERS, node, policy, quorumQueue, stockSnapshot, streamQueue, stockWithDlq, unroutableStats } from './audit.fixtures.js';

const OPTIONS: AuditOptions = { maxUnacked: 1_000 };

/** Run one check, found by its id, the way auditChecks does (before sorting). */
function run(id: CheckId, s: BrokerSnapshot, options: AuditOptions = OPTIONS): AuditItem[] {
  const check = checkById(id);
  if (!check) throw new Error(`no check ${id}`);
  return check.run(s, new Topology(s), options);
}

const brief = (items: AuditItem[]): string[] => items.map((i) => `${i.status} ${i.object}`);

/** A snapshot where most checks have something to say. */
function broken(): BrokerSnapshot {
  const s = stockSnapshot();
  s.nodes = [node(MEMBERS[0]!, { mem_alarm: true }), node(MEMBERS[1]!, { running: false, partitions: [MEMBERS[0]!] })];
  s.queues.push(
    classicQueue('t.transient', { durable: false, messages_ready: 4, messages_unacknowledged: 2_000 }),
    quorumQueue('t.q', { online: [MEMBERS[0]!], messages_unacknowledged: 7 }),
    quorumQueue('t.dlq', { messages: 2 }),
    streamQueue('t.events'),
  );
  s.exchanges.push(exchange('t.x', 'topic', { durable: false }));
  s.policies.push(policy('ha-legacy', '^legacy\\.', { 'ha-mode': 'all' }), policy('low', '^demo\\.orders$', { 'message-ttl': 1_000 }, 1));
  s.overview.message_stats = unroutableStats(7, 2);
  s.featureFlags = [flag('quorum_queue', 'enabled'), flag('khepri_db', 'disabled')];
  return s;
}

const flag = (name: string, state: string, stability = 'stable'): FeatureFlagInfo => ({ name, state, stability });

/** demo.orders with `unacked` unacknowledged messages and these consumers: [prefetch, ack_required]. */
function heldBy(unacked: number, ...consumers: [prefetch: number | undefined, ackRequired: boolean][]): () => BrokerSnapshot {
  return () => {
    const s = stockSnapshot();
    s.queues[0]!.messages_unacknowledged = unacked;
    s.queues[0]!.consumers = consumers.length;
    s.consumers = consumers.map(([prefetch, ackRequired], i) => ({
      queue: { name: 'demo.orders', vhost: '/' },
      consumer_tag: `ctag-${i + 1}`,
      ack_required: ackRequired,
      ...(prefetch === undefined ? {} : { prefetch_count: prefetch }),
    }));
    return s;
  };
}

const withFlags =
  (...flags: FeatureFlagInfo[]) =>
  (): BrokerSnapshot => ({ ...stockSnapshot(), featureFlags: flags });

/** The stock snapshot with the overview's message_stats replaced (undefined: none at all). */
function withStats(stats: BrokerSnapshot['overview']['message_stats']): () => BrokerSnapshot {
  return () => {
    const s = stockSnapshot();
    s.overview.message_stats = stats;
    return s;
  };
}

describe('the checklist', () => {
  it('has one check per id, unique, in CHECK_IDS order', () => {
    const ids = CHECKS.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...CHECK_IDS]);
  });

  it.each(CHECK_IDS.map((id) => [id]))('%s is findable by its id and has a title', (id) => {
    const check = checkById(id);
    expect(check?.id).toBe(id);
    expect(check?.title).not.toBe('');
  });

  it.each(CHECKS.filter((c) => c.note).map((c) => [c.id, c] as const))('%s is a note: it only ever passes', (_id, check) => {
    for (const s of [stockSnapshot(), stockWithDlq(3), broken()]) {
      const items = check.run(s, new Topology(s), OPTIONS);
      expect(items.length).toBeGreaterThan(0);
      for (const item of items) expect([item.status, item.fix]).toEqual(['pass', null]);
    }
  });

  it.each(CHECKS.map((c) => [c.id, c] as const))('%s yields items with its own id only', (id, check) => {
    for (const s of [stockSnapshot(), stockWithDlq(3), broken()]) {
      for (const item of check.run(s, new Topology(s), OPTIONS)) expect(item.id).toBe(id);
    }
  });

  it('auditChecks is every check’s items, failures first, and every check has something to say about broken()', () => {
    const s = broken();
    const t = new Topology(s);
    const all = CHECKS.flatMap((c) => c.run(s, t, OPTIONS));
    const sorted = auditChecks(s, OPTIONS);
    expect(sorted).toHaveLength(all.length);
    expect(sorted).toEqual(expect.arrayContaining(all));
    expect(sorted.map((i) => i.status)).toEqual(
      [...sorted.map((i) => i.status)].sort((a, b) => ['fail', 'warn', 'pass'].indexOf(a) - ['fail', 'warn', 'pass'].indexOf(b)),
    );
    expect(new Set(sorted.map((i) => i.id))).toEqual(new Set(CHECK_IDS));
  });
});

describe('single checks, run directly', () => {
  type Case = { id: CheckId; snapshot: () => BrokerSnapshot; options?: AuditOptions; expected: string[] };
  const cases: Case[] = [
    { id: 'retry-loop', snapshot: stockSnapshot, expected: ['fail queues demo.orders → demo.retry → demo.orders'] },
    { id: 'retry-loop', snapshot: () => stockWithDlq(0), expected: ['warn queues demo.orders → demo.retry → demo.orders'] },
    { id: 'retry-loop', snapshot: () => ({ ...stockSnapshot(), queues: [quorumQueue('demo.orders')] }), expected: ['pass dead-letter graph'] },
    { id: 'exchange-durable', snapshot: broken, expected: ['pass exchange demo.dlx', 'pass exchange demo.orders', 'fail exchange t.x'] },
    { id: 'cluster-size', snapshot: broken, expected: ['fail cluster rabbit@rabbit1'] },
    { id: 'node-running', snapshot: broken, expected: ['pass node rabbit@rabbit1', 'fail node rabbit@rabbit2'] },
    { id: 'mirroring-policy', snapshot: stockSnapshot, expected: ['pass policies'] },
    { id: 'mirroring-policy', snapshot: broken, expected: ['fail policy ha-legacy'] },
    { id: 'policy-shadowed', snapshot: stockSnapshot, expected: ['pass policies'] },
    { id: 'quorum-members', snapshot: broken, expected: ['pass queue demo.orders', 'pass queue demo.retry', 'fail queue t.q', 'pass queue t.dlq'] },
    { id: 'dlq-messages', snapshot: () => stockWithDlq(3), expected: ['warn queue demo.dlq'] },
    { id: 'requeue-loop', snapshot: broken, expected: ['pass queue demo.orders', 'pass queue demo.retry', 'pass queue t.q', 'pass queue t.dlq'] },
    {
      id: 'unacked',
      snapshot: broken,
      options: { maxUnacked: 2_000 },
      expected: ['pass queue demo.orders', 'pass queue demo.retry', 'warn queue t.transient', 'pass queue t.q', 'pass queue t.dlq'],
    },
    {
      id: 'unacked',
      snapshot: broken,
      options: { maxUnacked: 2_001 },
      expected: ['pass queue demo.orders', 'pass queue demo.retry', 'pass queue t.transient', 'pass queue t.q', 'pass queue t.dlq'],
    },
    { id: 'unacked-unexplained', snapshot: stockSnapshot, expected: [] },
    { id: 'unacked-unexplained', snapshot: broken, expected: ['warn queue t.q'] },
    { id: 'unacked-unexplained', snapshot: heldBy(10, [5, true], [5, true]), expected: ['pass queue demo.orders'] },
    { id: 'unacked-unexplained', snapshot: heldBy(11, [5, true], [5, true]), expected: ['warn queue demo.orders'] },
    { id: 'unacked-unexplained', snapshot: heldBy(11, [5, true], [50, false]), expected: ['warn queue demo.orders'] },
    { id: 'unacked-unexplained', snapshot: heldBy(500, [5, true], [0, true]), expected: ['pass queue demo.orders'] },
    { id: 'unacked-unexplained', snapshot: heldBy(500, [undefined, true]), expected: ['pass queue demo.orders'] },
    { id: 'unacked-unexplained', snapshot: heldBy(3), expected: ['warn queue demo.orders'] },
    {
      id: 'unacked-unexplained',
      snapshot: () => {
        // The statistics still count the consumer that closed a moment ago; the live list has none.
        const s = heldBy(3)();
        s.queues[0]!.consumers = 1;
        return s;
      },
      expected: ['pass queue demo.orders'],
    },
    { id: 'feature-flags', snapshot: stockSnapshot, expected: [] },
    {
      id: 'feature-flags',
      snapshot: withFlags(flag('quorum_queue', 'enabled', 'required'), flag('khepri_db', 'enabled')),
      expected: ['pass cluster rabbit@rabbit1'],
    },
    { id: 'feature-flags', snapshot: withFlags(flag('quorum_queue', 'enabled'), flag('khepri_db', 'disabled')), expected: ['warn cluster rabbit@rabbit1'] },
    {
      id: 'feature-flags',
      snapshot: withFlags(flag('quorum_queue', 'enabled'), flag('new_thing', 'disabled', 'experimental')),
      expected: ['pass cluster rabbit@rabbit1'],
    },
  ];

  it.each(cases.map((c) => [`${c.id}: ${c.expected.join(', ')}`, c] as const))('%s', (_name, c) => {
    expect(brief(run(c.id, c.snapshot(), c.options))).toEqual(c.expected);
  });

  it('unacked-unexplained: the message says how many are held beyond the prefetch, or that no consumer is left', () => {
    expect(run('unacked-unexplained', heldBy(11, [5, true], [5, true])())[0]?.message).toBe(
      '11 unacked messages, more than the prefetch of its 2 consumers allows (10): 1 held by a cancelled consumer or for a channel that is gone',
    );
    expect(run('unacked-unexplained', heldBy(3)())[0]?.message).toBe(
      '3 unacked messages and no consumer: held by a cancelled consumer or for a channel that is gone',
    );
    expect(run('unacked-unexplained', heldBy(3)())[0]?.fix).toContain('rabbitmq-server #15473');
    expect(run('unacked-unexplained', heldBy(10, [5, true], [5, true])())[0]?.message).toBe('10 unacked messages, within the prefetch of 2 consumers (10)');
  });

  it('feature-flags: names the disabled flags and the command that enables them', () => {
    const [item] = run('feature-flags', withFlags(flag('a', 'disabled'), flag('b', 'enabled'), flag('c', 'disabled'))());
    expect(item?.message).toMatch(/^2 stable feature flags disabled \(a, c\): /);
    expect(item?.fix).toContain('rabbitmqctl enable_feature_flag all');
  });

  it('retry-loop: the message and fix name the loop, its TTL and the exchange to bind a DLQ to', () => {
    const [item] = run('retry-loop', stockSnapshot());
    expect(item?.message).toContain('dead letters go round demo.orders → demo.retry → demo.orders (demo.retry holds them 5000 ms)');
    expect(item?.fix).toContain("bind a DLQ to 'demo.dlx'");
  });

  describe('unroutable-dropped: one item on the cluster, from /api/overview message_stats', () => {
    const FIX =
      'publish with mandatory (and handle basic.return) or give the exchange an alternate-exchange; find the publisher with a routing key that matches no binding';
    const SINCE = 'counted since the nodes started (a restart resets it): a publisher used neither mandatory nor an alternate exchange, and no binding matched';
    type StatsCase = [name: string, snapshot: () => BrokerSnapshot, status: string, message: string, fix: string | null];
    const statsCases: StatsCase[] = [
      ['a fresh cluster: neither key yet', stockSnapshot, 'pass', 'no message dropped as unroutable since the nodes started', null],
      [
        'returned only (mandatory publishers)',
        withStats(unroutableStats(0, 2)),
        'pass',
        'no message dropped as unroutable since the nodes started (2 messages returned to a mandatory publisher)',
        null,
      ],
      [
        'an explicit zero is a zero',
        withStats({ drop_unroutable: 0, return_unroutable: 1 }),
        'pass',
        'no message dropped as unroutable since the nodes started (1 message returned to a mandatory publisher)',
        null,
      ],
      [
        'one dropped, none returned',
        withStats(unroutableStats(1, 0)),
        'fail',
        `1 message dropped as unroutable (0 messages returned to a mandatory publisher), ${SINCE}`,
        FIX,
      ],
      ['dropped and returned: both numbers', broken, 'fail', `7 messages dropped as unroutable (2 messages returned to a mandatory publisher), ${SINCE}`, FIX],
      [
        'no message_stats at all: metrics collection is off, nothing to count with',
        withStats(undefined),
        'warn',
        'the management API reports no message statistics (metrics collection is off), so messages dropped as unroutable cannot be counted',
        'turn metrics collection back on (management_agent.disable_metrics_collector = false), or read rabbitmq_global_messages_unroutable_dropped_total on every node’s Prometheus endpoint',
      ],
    ];
    it.each(statsCases)('%s → %s', (_name, snapshot, status, message, fix) => {
      expect(run('unroutable-dropped', snapshot())).toEqual([{ id: 'unroutable-dropped', status, object: 'cluster rabbit@rabbit1', message, fix }]);
    });

    it('names the cluster as cluster-size does (the node answering when there is no cluster_name)', () => {
      const s = withStats(unroutableStats(3, 0))();
      delete s.overview.cluster_name;
      expect(brief(run('unroutable-dropped', s))).toEqual(['fail cluster rabbit@rabbit1']);
      expect(run('unroutable-dropped', s)[0]?.object).toBe(run('cluster-size', s)[0]?.object);
    });
  });

  it('policy-shadowed: a lower-priority policy whose keys are lost is a failure on the queue', () => {
    const items = run('policy-shadowed', broken());
    expect(brief(items)).toEqual(['fail queue demo.orders']);
    expect(items[0]?.message).toBe('only one policy applies to a queue: policy dlx-orders (priority 2) wins, so low (priority 1) loses message-ttl');
  });
});
