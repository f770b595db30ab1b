import { describe, expect, it } from 'vitest';
import { FAULT_KINDS, faultProblem } from '../../src/faults/kinds.js';
import { parseClassicMaster } from '../../src/cluster/broker/queue-leadership.js';
import {
  BROKER_QUEUE_TYPE,
  ELECTS_A_LEADER,
  exactPattern,
  mirrorPolicy,
  ownQueueName,
  QUEUE_TYPE_TRAITS,
  QUEUE_TYPES,
  queueTypesFor,
} from '../../src/cluster/broker/queue-types.js';

describe('queue types and the faults they take', () => {
  it.each(QUEUE_TYPES.flatMap((type) => FAULT_KINDS.map((fault) => ({ type, fault }))))('$type under $fault', ({ type, fault }) => {
    const refused = (fault === 'quorum-loss' && (type === 'mirrored' || type === 'classic')) || (fault === 'membership' && type !== 'quorum');
    expect(faultProblem(type, fault) !== undefined).toBe(refused);
  });
  it.each([
    { command: 'compare', types: ['quorum', 'mirrored', 'classic', 'stream'] },
    { command: 'failover', types: ['quorum', 'mirrored', 'classic', 'stream'] },
    // chaos's consumers take and ack their queues' messages; a stream is read by offset.
    { command: 'chaos', types: ['quorum', 'mirrored', 'classic'] },
  ] as const)('$command runs against $types', ({ command, types }) => {
    expect(queueTypesFor(command)).toEqual(types);
  });
  it.each([
    { type: 'quorum', broker: 'quorum', elects: true, byOffset: false },
    { type: 'mirrored', broker: 'classic', elects: true, byOffset: false },
    { type: 'classic', broker: 'classic', elects: false, byOffset: false },
    { type: 'stream', broker: 'stream', elects: true, byOffset: true },
  ] as const)('$type: declared as $broker, elects a leader: $elects, read by offset: $byOffset', ({ type, broker, elects, byOffset }) => {
    expect(BROKER_QUEUE_TYPE[type]).toBe(broker);
    expect(ELECTS_A_LEADER[type]).toBe(elects);
    expect(QUEUE_TYPE_TRAITS[type].readByOffset).toBe(byOffset);
  });
  it('none takes any type', () => {
    for (const t of QUEUE_TYPES) expect(faultProblem(t, 'none')).toBeUndefined();
  });
  it("a scenario's own queue and the mirror policy that matches exactly it", () => {
    expect(ownQueueName('compare', 'mirrored')).toBe('rmq-bench.compare.mirrored');
    const p = mirrorPolicy(exactPattern('rmq-bench.compare.mirrored'));
    expect(p.definition).toEqual({ 'ha-mode': 'all', 'ha-sync-mode': 'automatic' });
    expect(p['apply-to']).toBe('queues');
    const re = new RegExp(p.pattern);
    expect(re.test('rmq-bench.compare.mirrored')).toBe(true);
    expect(re.test('rmq-bench-compare-mirrored')).toBe(false);
    expect(re.test('rmq-bench.compare.mirrored.2')).toBe(false);
    const several = new RegExp(exactPattern('q.1', 'q.control'));
    expect(['q.1', 'q.control', 'q.2', 'q.1x'].map((n) => several.test(n))).toEqual([true, true, false, false]);
  });
});

describe("a classic queue's master, as a node reports it", () => {
  it.each([
    { text: 'master=rabbit@rabbit2', node: 'rabbit@rabbit2' },
    { text: 'q\t<rabbit@rabbit3.1796351317.4660.0>\nother\t<rabbit@rabbit1.1.2.0>\n', node: 'rabbit@rabbit3' },
    { text: 'other\t<rabbit@rabbit1.1.2.0>\n', node: undefined },
    { text: '', node: undefined },
  ])('$text → $node', ({ text, node }) => {
    expect(parseClassicMaster(text, 'q')).toBe(node);
  });
});
