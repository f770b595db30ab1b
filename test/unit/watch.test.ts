import { describe, expect, it } from 'vitest';
import { renderNoAnswer, renderWatch, renderWatchLine } from '../../src/report/kinds/watch/text.js';
import type { BrokerSnapshot } from '../../src/cluster/broker/snapshot.js';
import { trimHistory, watchView, type WatchSnapshot } from '../../src/scenarios/traffic/watch.js';
import { MEMBERS, node, quorumQueue, stockWithDlq } from './audit.fixtures.js';

const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const OPTIONS = { gapMs: 2_500 };

function snap(atMs: number, change: (b: BrokerSnapshot) => void = () => undefined, extra: Partial<WatchSnapshot> = {}): WatchSnapshot {
  const broker = stockWithDlq(0);
  change(broker);
  return { atMs, answeredBy: { node: 'rabbit1', url: 'http://127.0.0.1:15672' }, unanswered: [], broker, ...extra };
}

function setQueue(b: BrokerSnapshot, name: string, fields: Record<string, unknown>): void {
  const q = b.queues.find((x) => x.name === name)!;
  Object.assign(q, fields);
}

describe('watchView', () => {
  it('one snapshot: per queue counts, role, leader and members; no alert on a healthy cluster', () => {
    const v = watchView(
      [],
      snap(T0, (b) => setQueue(b, 'demo.orders', { messages_ready: 7, messages_unacknowledged: 2, messages_delayed: 3, consumers: 1 })),
      OPTIONS,
    );
    expect(v.at).toBe('2026-03-01T12:00:00.000Z');
    expect(v.sincePreviousMs).toBeNull();
    expect(v.queues.map((q) => [q.name, q.role])).toEqual([
      ['demo.dlq', 'dlq'],
      ['demo.orders', 'work'],
      ['demo.retry', 'retry'],
    ]);
    expect(v.queues[1]).toMatchObject({
      ready: 7,
      unacked: 2,
      delayed: 3,
      consumers: 1,
      leader: 'rabbit3',
      online: ['rabbit1', 'rabbit2', 'rabbit3'],
      publishRate: null,
    });
    expect(v.alerts).toEqual([]);
  });

  it.each([
    [
      'the management API’s rate',
      { message_stats: { publish: 100, publish_details: { rate: 12.5 } } },
      { message_stats: { publish: 130, publish_details: { rate: 30 } } },
      30,
    ],
    ['from the counters when no rate is reported', { message_stats: { publish: 100 } }, { message_stats: { publish: 130 } }, 15],
    ['unknown without stats', {}, {}, null],
  ])('publish rate: %s', (_n, before, after, expected) => {
    const v = watchView(
      [snap(T0, (b) => setQueue(b, 'demo.orders', before))],
      snap(T0 + 2_000, (b) => setQueue(b, 'demo.orders', after)),
      OPTIONS,
    );
    expect(v.queues.find((q) => q.name === 'demo.orders')!.publishRate).toBe(expected);
    expect(v.sincePreviousMs).toBe(2_000);
  });

  type Case = {
    name: string;
    before?: (b: BrokerSnapshot) => void;
    after: (b: BrokerSnapshot) => void;
    extra?: Partial<WatchSnapshot>;
    kind: string;
    message: RegExp;
  };
  const cases: Case[] = [
    {
      name: 'DLQ depth growing',
      before: (b) => setQueue(b, 'demo.dlq', { messages: 1 }),
      after: (b) => setQueue(b, 'demo.dlq', { messages: 4 }),
      kind: 'dlq-growing',
      message: /^dead-letter queue demo\.dlq grew by 3 in 9 s \(now 4\)$/,
    },
    {
      name: 'unacked growing with no acks',
      before: (b) => setQueue(b, 'demo.orders', { messages_unacknowledged: 5, message_stats: { ack: 10, ack_details: { rate: 0 } } }),
      after: (b) => setQueue(b, 'demo.orders', { messages_unacknowledged: 50, message_stats: { ack: 10, ack_details: { rate: 0 } } }),
      kind: 'unacked-growing',
      message: /^demo\.orders: unacked grew from 5 to 50 in 9 s with no ack$/,
    },
    {
      name: 'a queue without leader',
      after: (b) => setQueue(b, 'demo.orders', { leader: undefined }),
      kind: 'no-leader',
      message: /^demo\.orders has no leader/,
    },
    {
      name: 'members offline',
      after: (b) => setQueue(b, 'demo.retry', { online: MEMBERS.slice(1) }),
      kind: 'members-offline',
      message: /^demo\.retry: 2\/3 members online \(rabbit1 offline\)$/,
    },
    {
      name: 'a node down',
      after: (b) => (b.nodes[0] = node('rabbit@rabbit1', { running: false })),
      kind: 'node-down',
      message: /^rabbit@rabbit1 is not running$/,
    },
    {
      name: 'a memory alarm',
      after: (b) => (b.nodes[1] = node('rabbit@rabbit2', { mem_alarm: true })),
      kind: 'alarm',
      message: /^memory alarm on rabbit@rabbit2/,
    },
    {
      name: 'a disk alarm',
      after: (b) => (b.nodes[1] = node('rabbit@rabbit2', { disk_free_alarm: true })),
      kind: 'alarm',
      message: /^disk alarm on rabbit@rabbit2/,
    },
    {
      name: 'the first endpoint down',
      after: () => undefined,
      extra: {
        answeredBy: { node: 'rabbit2', url: 'http://127.0.0.1:15673' },
        unanswered: [{ node: 'rabbit1', url: 'http://127.0.0.1:15672', error: 'ECONNREFUSED', since: '2026-03-01T12:00:04.000Z' }],
      },
      kind: 'endpoint-down',
      message: /^rabbit1 \(http:\/\/127\.0\.0\.1:15672\) has not answered since 12:00:04 \(ECONNREFUSED\); asking rabbit2$/,
    },
  ];

  it.each(cases)('alert: $name', (c) => {
    const history = [snap(T0, c.before), snap(T0 + 8_000, c.before)];
    const v = watchView(history, snap(T0 + 9_000, c.after, c.extra), OPTIONS);
    expect(v.alerts.map((a) => a.kind)).toEqual([c.kind]);
    expect(v.alerts[0]!.message).toMatch(c.message);
  });

  it('no growth alert when unacked grows while acks go on, or the DLQ shrinks', () => {
    const before = snap(T0, (b) => {
      setQueue(b, 'demo.orders', { messages_unacknowledged: 5, message_stats: { ack: 10 } });
      setQueue(b, 'demo.dlq', { messages: 4 });
    });
    const after = snap(T0 + 2_000, (b) => {
      setQueue(b, 'demo.orders', { messages_unacknowledged: 50, message_stats: { ack: 40 } });
      setQueue(b, 'demo.dlq', { messages: 1 });
    });
    expect(watchView([before], after, OPTIONS).alerts).toEqual([]);
  });

  it('a gap: snapshots further apart than gapMs (the node asked was down)', () => {
    const v = watchView([snap(T0)], snap(T0 + 7_200), OPTIONS);
    expect(v.alerts).toEqual([{ kind: 'gap', object: 'watch', message: 'no data for 7.2 s (since 12:00:00)' }]);
  });

  it('--match keeps only the queues whose name matches', () => {
    expect(watchView([], snap(T0), { ...OPTIONS, match: /^demo\.(dlq|retry)$/ }).queues.map((q) => q.name)).toEqual(['demo.dlq', 'demo.retry']);
  });
});

describe('trimHistory', () => {
  it('keeps the window, and always the latest', () => {
    const h = [snap(T0), snap(T0 + 5_000), snap(T0 + 9_000)];
    expect(trimHistory(h, T0 + 12_000, 10_000).map((s) => s.atMs)).toEqual([T0 + 5_000, T0 + 9_000]);
    expect(trimHistory(h, T0 + 60_000, 10_000).map((s) => s.atMs)).toEqual([T0 + 9_000]);
  });
});

describe('renderWatch', () => {
  const v = watchView(
    [snap(T0)],
    snap(
      T0 + 1_000,
      (b) => {
        setQueue(b, 'demo.orders', {
          messages_ready: 7,
          messages_unacknowledged: 2,
          consumers: 1,
          message_stats: { publish_details: { rate: 20 }, deliver_get_details: { rate: 18.25 }, ack_details: { rate: 18 } },
        });
        setQueue(b, 'demo.retry', { leader: undefined });
        b.nodes[2] = node('rabbit@rabbit3', { running: false, mem_alarm: true });
        b.queues.push(quorumQueue('x', { vhost: 'shop' }));
      },
      { answeredBy: { node: 'rabbit2', url: 'http://127.0.0.1:15673' } },
    ),
    OPTIONS,
  );
  const text = renderWatch(v, { live: true });
  const line = (start: string): string | undefined => text.split('\n').find((l) => l.startsWith(start));

  it('header, nodes, one row per queue, alerts', () => {
    expect(line('rmq-bench watch')).toBe('rmq-bench watch  12:00:01  answered by rabbit2 = rabbit@rabbit1 (http://127.0.0.1:15673)  RabbitMQ 4.3.6');
    expect(line('rabbit3 ')).toMatch(/^rabbit3\s+DOWN\s+memory\s+none$/);
    expect(line('queue ')).toMatch(/^queue\s+type\s+ready\s+unacked\s+delayed\s+consumers\s+publish\/s\s+deliver\/s\s+ack\/s\s+leader\s+online$/);
    expect(line('demo.orders ')).toMatch(/^demo\.orders\s+quorum\s+7\s+2\s+0\s+1\s+20\.0\s+18\.3\s+18\.0\s+rabbit3\s+3\/3$/);
    expect(line('demo.retry ')).toMatch(/^demo\.retry\s+quorum \(retry\)\s+0\s+0\s+0\s+0\s+-\s+-\s+-\s+NONE\s+3\/3$/);
    expect(line('shop/x ')).toMatch(/^shop\/x\s+quorum/);
    expect(text).toContain('  ! node-down: rabbit@rabbit3 is not running');
    expect(text).toContain('  ! no-leader: demo.retry has no leader');
    expect(text).toContain('Ctrl+C stops');
    expect(renderWatch(v)).not.toContain('Ctrl+C');
  });

  it('one line per refresh off a terminal', () => {
    expect(renderWatchLine(v)).toMatch(
      /^12:00:01 rabbit2: nodes 2\/3 running; 4 queues, 7 ready, 2 unacked, 0 delayed; publish 20\.0\/s, deliver 18\.3\/s; node-down: /,
    );
  });

  it('a refresh where nobody answered says for how long there has been no data', () => {
    expect(renderNoAnswer(T0 + 6_500, T0, 'no management endpoint answered (…)')).toBe(
      '12:00:06 no data for 6.5 s (last at 12:00:00): no management endpoint answered (…); trying again',
    );
    expect(renderNoAnswer(T0, undefined, 'x')).toBe('12:00:00 no data yet: x; trying again');
  });
});
