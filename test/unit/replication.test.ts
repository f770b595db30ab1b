import { describe, expect, it } from 'vitest';
import { fullyReplicated, nodesMissing } from '../../src/cluster/lifecycle/replication.js';
import type { QueueLeadership } from '../../src/cluster/broker/queue-leadership.js';

const NODES = ['rabbit@rabbit1', 'rabbit@rabbit2', 'rabbit@rabbit3'];
const q = (name: string, members: string[], online = members, leader: string | null = members[0] ?? null): QueueLeadership => ({
  name,
  type: 'quorum',
  leader: leader ?? undefined,
  members,
  online,
  messages: 0,
});

describe('nodesMissing: where cluster up grows the queues', () => {
  const cases: { name: string; queues: QueueLeadership[]; missing: string[] }[] = [
    { name: 'every queue on every node: none', queues: [q('a', NODES), q('b', NODES)], missing: [] },
    { name: 'both declared before the third node joined', queues: [q('a', NODES.slice(0, 2)), q('b', NODES.slice(0, 2))], missing: ['rabbit@rabbit3'] },
    { name: 'one on the first node only, one whole', queues: [q('a', NODES.slice(0, 1)), q('b', NODES)], missing: ['rabbit@rabbit2', 'rabbit@rabbit3'] },
    { name: 'members on different nodes: each node lacking one', queues: [q('a', ['rabbit@rabbit1']), q('b', ['rabbit@rabbit2'])], missing: NODES },
    { name: 'no queues: none', queues: [], missing: [] },
  ];
  it.each(cases)('$name', ({ queues, missing }) => expect(nodesMissing(queues, NODES)).toEqual(missing));
});

describe('fullyReplicated', () => {
  const cases: { name: string; queues: QueueLeadership[]; size: number; whole: boolean }[] = [
    { name: 'three members, all online, a leader', queues: [q('a', NODES)], size: 3, whole: true },
    { name: 'two members of three', queues: [q('a', NODES.slice(0, 2))], size: 3, whole: false },
    { name: 'three members, one offline', queues: [q('a', NODES, NODES.slice(1))], size: 3, whole: false },
    { name: 'no leader', queues: [q('a', NODES, NODES, null)], size: 3, whole: false },
  ];
  it.each(cases)('$name', ({ queues, size, whole }) => expect(fullyReplicated(queues, size)).toBe(whole));
});
