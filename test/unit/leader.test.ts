import { describe, expect, it } from 'vitest';
import { parseQueueLeadership, parseQuorumStatus, shortNodeName, type QueueLeadership, type RaftMember } from '../../src/cluster/broker/queue-leadership.js';

describe('parseQueueLeadership', () => {
  const cases: { name: string; json: unknown; expected: QueueLeadership }[] = [
    {
      name: '4.x quorum queue with leader, members and online',
      json: {
        name: 'demo.orders',
        vhost: '/',
        type: 'quorum',
        durable: true,
        leader: 'rabbit@rabbit2',
        node: 'rabbit@rabbit2',
        members: ['rabbit@rabbit1', 'rabbit@rabbit2', 'rabbit@rabbit3'],
        online: ['rabbit@rabbit2', 'rabbit@rabbit3'],
        messages: 42,
        arguments: { 'x-queue-type': 'quorum' },
      },
      expected: {
        name: 'demo.orders',
        type: 'quorum',
        leader: 'rabbit@rabbit2',
        members: ['rabbit@rabbit1', 'rabbit@rabbit2', 'rabbit@rabbit3'],
        online: ['rabbit@rabbit2', 'rabbit@rabbit3'],
        messages: 42,
      },
    },
    {
      name: 'quorum queue that only reports node: node is the leader',
      json: { name: 'demo.retry', type: 'quorum', node: 'rabbit@rabbit3', members: ['rabbit@rabbit3'], online: ['rabbit@rabbit3'], messages: 0 },
      expected: { name: 'demo.retry', type: 'quorum', leader: 'rabbit@rabbit3', members: ['rabbit@rabbit3'], online: ['rabbit@rabbit3'], messages: 0 },
    },
    {
      name: 'classic queue: its node leads, alone',
      json: { name: 'amq.gen-1', type: 'classic', node: 'rabbit@rabbit1', messages: 3 },
      expected: { name: 'amq.gen-1', type: 'classic', leader: 'rabbit@rabbit1', members: ['rabbit@rabbit1'], online: ['rabbit@rabbit1'], messages: 3 },
    },
    {
      name: 'classic queue whose node is down: no leader, nothing online',
      json: { name: 'c', type: 'classic', node: 'rabbit@rabbit1', state: 'down' },
      expected: { name: 'c', type: 'classic', leader: undefined, members: ['rabbit@rabbit1'], online: [], messages: undefined },
    },
    {
      name: 'mirrored queue (3.x): the master leads; members are it and its mirrors, online those in sync',
      json: {
        name: 'm',
        type: 'classic',
        node: 'rabbit@rabbit2',
        slave_nodes: ['rabbit@rabbit3', 'rabbit@rabbit1'],
        synchronised_slave_nodes: ['rabbit@rabbit3'],
        messages: 7,
      },
      expected: {
        name: 'm',
        type: 'classic',
        leader: 'rabbit@rabbit2',
        members: ['rabbit@rabbit2', 'rabbit@rabbit3', 'rabbit@rabbit1'],
        online: ['rabbit@rabbit2', 'rabbit@rabbit3'],
        messages: 7,
      },
    },
    {
      name: 'mirrored queue: a synchronised node that is no mirror (stale statistics) is not counted',
      json: {
        name: 'm',
        type: 'classic',
        node: 'rabbit@rabbit2',
        slave_nodes: ['rabbit@rabbit3'],
        synchronised_slave_nodes: ['rabbit@rabbit3', 'rabbit@rabbit1'],
      },
      expected: {
        name: 'm',
        type: 'classic',
        leader: 'rabbit@rabbit2',
        members: ['rabbit@rabbit2', 'rabbit@rabbit3'],
        online: ['rabbit@rabbit2', 'rabbit@rabbit3'],
        messages: undefined,
      },
    },
    {
      name: 'empty leader while an election runs',
      json: { name: 'demo.orders', type: 'quorum', leader: '', members: ['rabbit@rabbit1', 'rabbit@rabbit2'], online: [] },
      expected: { name: 'demo.orders', type: 'quorum', leader: undefined, members: ['rabbit@rabbit1', 'rabbit@rabbit2'], online: [], messages: undefined },
    },
    {
      name: "leader 'undefined' as some versions print it",
      json: { name: 'demo.orders', type: 'quorum', leader: 'undefined' },
      expected: { name: 'demo.orders', type: 'quorum', leader: undefined, members: [], online: [], messages: undefined },
    },
    {
      name: 'empty leader does not fall back to node',
      json: { name: 'q', type: 'quorum', leader: '', node: 'rabbit@rabbit1' },
      expected: { name: 'q', type: 'quorum', leader: undefined, members: [], online: [], messages: undefined },
    },
    {
      name: 'missing fields: defaults',
      json: {},
      expected: { name: '', type: 'classic', leader: undefined, members: [], online: [], messages: undefined },
    },
    {
      name: 'null',
      json: null,
      expected: { name: '', type: 'classic', leader: undefined, members: [], online: [], messages: undefined },
    },
    {
      name: 'wrong field types are ignored, non-strings dropped from member lists',
      json: { name: 7, type: 'quorum', leader: 1, members: ['rabbit@rabbit1', null, 3], online: 'rabbit@rabbit1', messages: '5' },
      expected: { name: '', type: 'quorum', leader: undefined, members: ['rabbit@rabbit1'], online: [], messages: undefined },
    },
  ];

  it.each(cases)('$name', ({ json, expected }) => {
    expect(parseQueueLeadership(json)).toEqual(expected);
  });
});

describe('shortNodeName', () => {
  it.each([
    ['rabbit@rabbit2', 'rabbit2'],
    ['rabbit@rabbit1.example.org', 'rabbit1.example.org'],
    ['rabbit2', 'rabbit2'],
    ['', ''],
  ])('%j → %j', (input, expected) => {
    expect(shortNodeName(input)).toBe(expected);
  });
});

describe('parseQuorumStatus', () => {
  const realOutput =
    '[\n' +
    '{"Node Name":"rabbit@rabbit1","Raft State":"leader","Membership":"voter","Last Log Index":120,"Last Written":120,"Last Applied":120,"Commit Index":120,"Snapshot Index":-1,"Term":6,"Machine Version":7}\n' +
    ',{"Node Name":"rabbit@rabbit2","Raft State":"unknown","Membership":"unknown","Last Log Index":"","Last Written":"","Last Applied":"","Commit Index":"","Snapshot Index":"","Term":"","Machine Version":""}\n' +
    ',{"Node Name":"rabbit@rabbit3","Raft State":"follower","Membership":"voter","Last Log Index":120,"Last Written":120,"Last Applied":120,"Commit Index":120,"Snapshot Index":-1,"Term":6,"Machine Version":7}\n' +
    ']\n';
  const realMembers: RaftMember[] = [
    { node: 'rabbit@rabbit1', state: 'leader', term: 6 },
    { node: 'rabbit@rabbit2', state: 'unknown', term: undefined },
    { node: 'rabbit@rabbit3', state: 'follower', term: 6 },
  ];
  const none = { leader: undefined, members: [] };

  const cases: { name: string; text: string; expected: { leader: string | undefined; members: RaftMember[] } }[] = [
    { name: 'real output, one member unreachable', text: realOutput, expected: { leader: 'rabbit@rabbit1', members: realMembers } },
    {
      name: 'preceded by a banner line',
      text: `Status of quorum queue demo.orders on node rabbit@rabbit3 ...\n${realOutput}`,
      expected: { leader: 'rabbit@rabbit1', members: realMembers },
    },
    {
      name: 'no leader yet (candidates only)',
      text: '[{"Node Name":"rabbit@rabbit1","Raft State":"candidate","Term":7},{"Node Name":"rabbit@rabbit3","Raft State":"follower","Term":6}]',
      expected: {
        leader: undefined,
        members: [
          { node: 'rabbit@rabbit1', state: 'candidate', term: 7 },
          { node: 'rabbit@rabbit3', state: 'follower', term: 6 },
        ],
      },
    },
    {
      name: 'a row without Raft State counts as unknown',
      text: '[{"Node Name":"rabbit@rabbit2"}]',
      expected: { leader: undefined, members: [{ node: 'rabbit@rabbit2', state: 'unknown', term: undefined }] },
    },
    { name: 'empty array', text: '[]', expected: none },
    { name: 'garbage', text: 'Error: {:badrpc, :nodedown}', expected: none },
    { name: 'a bracket but broken JSON', text: 'Error:\n[{"Node Name": "rabbit@rabbit1", ', expected: none },
    { name: 'empty text', text: '', expected: none },
    {
      name: 'non-object rows are skipped',
      text: '[1,"x",null,{"Node Name":"rabbit@rabbit3","Raft State":"leader","Term":9}]',
      expected: { leader: 'rabbit@rabbit3', members: [{ node: 'rabbit@rabbit3', state: 'leader', term: 9 }] },
    },
  ];

  it.each(cases)('$name', ({ text, expected }) => {
    expect(parseQuorumStatus(text)).toEqual(expected);
  });
});
