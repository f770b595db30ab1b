import { describe, expect, it } from 'vitest';
import type { QueueLeadership } from '../../src/cluster/broker/queue-leadership.js';
import { notWhole, rollingOrder } from '../../src/faults/rolling-restart.js';
import { applyProfile } from '../../src/scenarios/under-faults/chaos-profiles.js';

describe('rollingOrder: as a StatefulSet rolls its pods, the highest ordinal first', () => {
  it.each([
    [
      ['rabbit@rabbit1', 'rabbit@rabbit2', 'rabbit@rabbit3'],
      ['rabbit@rabbit3', 'rabbit@rabbit2', 'rabbit@rabbit1'],
    ],
    [
      ['rabbit@rabbit2', 'rabbit@rabbit5', 'rabbit@rabbit1', 'rabbit@rabbit4', 'rabbit@rabbit3'],
      ['rabbit@rabbit5', 'rabbit@rabbit4', 'rabbit@rabbit3', 'rabbit@rabbit2', 'rabbit@rabbit1'],
    ],
  ])('%j → %j', (nodes, order) => {
    expect(rollingOrder(nodes)).toEqual(order);
  });
});

describe('notWhole: why the next node must wait', () => {
  const q = (over: Partial<QueueLeadership>): QueueLeadership => ({
    name: 'q',
    type: 'quorum',
    leader: 'rabbit@rabbit1',
    members: ['rabbit@rabbit1', 'rabbit@rabbit2', 'rabbit@rabbit3'],
    online: ['rabbit@rabbit1', 'rabbit@rabbit2', 'rabbit@rabbit3'],
    messages: 0,
    ...over,
  });
  const up = [
    { name: 'rabbit@rabbit1', running: true },
    { name: 'rabbit@rabbit2', running: true },
  ];
  it.each([
    ['whole', up, [q({})], null],
    ['a node down', [...up, { name: 'rabbit@rabbit3', running: false }], [q({})], 'rabbit3 not running'],
    ['no leader', up, [q({ leader: undefined })], 'q has no leader'],
    ['a member offline', up, [q({ online: ['rabbit@rabbit1', 'rabbit@rabbit2'] })], 'q: 2 of 3 members online'],
    ['a classic queue is not waited for', up, [q({ type: 'classic', leader: undefined, online: [] })], null],
  ] as const)('%s', (_name, nodes, queues, why) => {
    expect(notWhole(nodes, queues)).toBe(why);
  });
});

describe("applyProfile('jepsen'): its schedule under what the user gave", () => {
  const base = { duration: 300_000, hold: 8_000, interval: 20_000, faults: undefined, targets: ['leader' as const] };
  it.each([
    [new Set<string>(), { duration: 180_000, hold: 10_000, interval: 30_000, targets: ['random'] }],
    [new Set(['hold']), { duration: 180_000, hold: 8_000, interval: 28_000, targets: ['random'] }],
    [new Set(['interval', 'targets']), { duration: 180_000, hold: 10_000, interval: 20_000, targets: ['leader'] }],
    [new Set(['duration']), { duration: 300_000, hold: 10_000, interval: 30_000, targets: ['random'] }],
  ])('given %j', (given, expected) => {
    const r = applyProfile('jepsen', base, given);
    expect({ duration: r.duration, hold: r.hold, interval: r.interval, targets: r.targets }).toEqual(expected);
    expect(r.faults).toEqual(['partition-halves', 'partition-ring', 'partition-bridge', 'partition']);
  });
});
