import { erlangBinary, type NodeCall } from './erl-call.js';

/**
 * Leadership of a queue as the management API reports it (GET /api/queues/{vhost}/{name}). A
 * quorum queue: its Raft leader, members and online members (fields leader, members, online).
 * A classic queue: its leader is the node its process runs on (field node: a mirrored queue's
 * master), its members that node and its mirrors (slave_nodes, RabbitMQ before 4.0), online the
 * node and the mirrors in sync (synchronised_slave_nodes); while its node is down (state down)
 * it has no leader. Pure.
 */
export interface QueueLeadership {
  name: string;
  type: string;
  /** Erlang node name of the leader (a classic queue: its node, a mirrored one's master), e.g. rabbit@rabbit2; undefined while there is none. */
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
  const type = typeof q.type === 'string' ? q.type : 'classic';
  const name = typeof q.name === 'string' ? q.name : '';
  const messages = typeof q.messages === 'number' ? q.messages : undefined;
  const real = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' && v !== 'undefined' ? v : undefined);
  if (type === 'classic') {
    const node = real(q.node);
    const mirrors = strings(q.slave_nodes);
    const synced = strings(q.synchronised_slave_nodes);
    const down = q.state === 'down' || q.state === 'stopped';
    return {
      name,
      type,
      leader: down ? undefined : node,
      members: node === undefined ? mirrors : [node, ...mirrors.filter((m) => m !== node)],
      online: [...(node === undefined || down ? [] : [node]), ...synced.filter((m) => m !== node && mirrors.includes(m))],
      messages,
    };
  }
  // 3.8-3.13 and 4.x report `leader`; some versions also report `node` (the leader for QQs).
  const leader = typeof q.leader === 'string' ? real(q.leader) : type === 'quorum' ? real(q.node) : undefined;
  return { name, type, leader, members: strings(q.members), online: strings(q.online), messages };
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

/**
 * The node a classic queue's process runs on as one node sees it (a mirrored queue's master):
 * `master=rabbit@rabbit2`, asked through erl_call. It answers while a peer is cut off, when the
 * management API on the survivors hangs (RabbitMQ 3.x waits on its peers for a queue's details).
 */
export function classicMasterCall(ref: { vhost: string; queue: string }): NodeCall {
  const name = `rabbit_misc:r(${erlangBinary(ref.vhost)}, queue, ${erlangBinary(ref.queue)})`;
  return {
    expr: `case rabbit_amqqueue:lookup(${name}) of {ok, Q} -> io:put_chars(["master=", atom_to_list(node(amqqueue:get_pid(Q)))]); Error -> exit(Error) end.`,
    cli: ['rabbitmqctl', 'list_queues', '--vhost', ref.vhost, '--no-table-headers', '--quiet', 'name', 'pid'],
  };
}

/**
 * The master's node from classicMasterCall's answer (`master=rabbit@rabbit2`), or from
 * `rabbitmqctl list_queues name pid` (`<queue>\t<rabbit@rabbit2.1234.0>`); undefined when it names none. Pure.
 */
export function parseClassicMaster(text: string, queue: string): string | undefined {
  const m = /master=(\S+@[^\s.]+)/.exec(text);
  if (m) return m[1];
  for (const line of text.split('\n')) {
    const [name, pid] = line.split('\t');
    if (name === queue && pid) return /<(\S+@[^.>]+)\./.exec(pid)?.[1];
  }
  return undefined;
}
