import { erlangBinary, type NodeCall } from './erl-call.js';

/**
 * Leadership of a quorum queue as the management API reports it
 * (GET /api/queues/{vhost}/{name}: fields leader, members, online). Pure.
 */
export interface QueueLeadership {
  name: string;
  type: string;
  /** Erlang node name of the leader, e.g. rabbit@rabbit2; undefined while there is none. */
  leader: string | undefined;
  members: string[];
  online: string[];
  messages: number | undefined;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

export function parseQueueLeadership(json: unknown): QueueLeadership {
  const q = (json ?? {}) as Record<string, unknown>;
  // 3.8-3.13 and 4.x report `leader`; some versions also report `node` (the leader for QQs).
  const leaderRaw = typeof q.leader === 'string' ? q.leader : typeof q.node === 'string' && q.type === 'quorum' ? q.node : undefined;
  const leader = leaderRaw && leaderRaw !== '' && leaderRaw !== 'undefined' ? leaderRaw : undefined;
  return {
    name: typeof q.name === 'string' ? q.name : '',
    type: typeof q.type === 'string' ? q.type : 'classic',
    leader,
    members: strings(q.members),
    online: strings(q.online),
    messages: typeof q.messages === 'number' ? q.messages : undefined,
  };
}

/** rabbit@rabbit2 → rabbit2 (the container and compose service name). */
export function shortNodeName(nodeName: string): string {
  const at = nodeName.indexOf('@');
  return at === -1 ? nodeName : nodeName.slice(at + 1);
}

export interface RaftMember {
  node: string;
  /** leader | follower | candidate | unknown (unreachable) ... */
  state: string;
  term: number | undefined;
}

/**
 * The queue's members as one node sees them: rabbit_quorum_queue:status, which is what
 * `rabbitmq-queues quorum_status --formatter json` prints (the same JSON), asked through erl_call.
 */
export function quorumStatusCall(ref: { vhost: string; queue: string }): NodeCall {
  const args = `${erlangBinary(ref.vhost)}, ${erlangBinary(ref.queue)}`;
  return {
    expr: `case rabbit_quorum_queue:status(${args}) of L when is_list(L) -> io:put_chars(rabbit_json:encode(L)); Error -> exit(Error) end.`,
    cli: ['rabbitmq-queues', 'quorum_status', ref.queue, '--vhost', ref.vhost, '--formatter', 'json'],
  };
}

/**
 * `rabbitmq-queues quorum_status <queue> --formatter json`, as a survivor sees it. This answers
 * while a member is paused or cut off, when the management API on the survivors hangs. Pure.
 */
export function parseQuorumStatus(text: string): { leader: string | undefined; members: RaftMember[] } {
  const start = text.indexOf('[');
  if (start === -1) return { leader: undefined, members: [] };
  let rows: unknown;
  try {
    rows = JSON.parse(text.slice(start));
  } catch {
    return { leader: undefined, members: [] };
  }
  if (!Array.isArray(rows)) return { leader: undefined, members: [] };
  const members = rows
    .filter((r): r is Record<string, unknown> => typeof r === 'object' && r !== null)
    .map((r) => ({
      node: String(r['Node Name'] ?? ''),
      state: String(r['Raft State'] ?? 'unknown'),
      term: typeof r.Term === 'number' ? r.Term : undefined,
    }));
  return { leader: members.find((m) => m.state === 'leader')?.node, members };
}
