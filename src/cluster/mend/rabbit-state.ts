import type { NodeSpec } from '../../config.js';
import type { Docker } from '../docker/engine.js';
import { callNode, type NodeCall } from '../broker/erl-call.js';

/**
 * A node's own word on its RabbitMQ application, asked inside its container (erl_call, a few
 * ms): running, booting, or stopped while its Erlang VM runs (a pause_minority pause, a start
 * that failed, `rabbitmqctl stop_app`). The management port cannot tell these apart: behind
 * docker's port proxy a node whose listener is down resets the connection, or never answers, and
 * a booting node does not answer either.
 */
type RabbitState = 'running' | 'booting' | 'stopped';

const STATE_CALL: NodeCall = {
  expr: 'io:format("~p~n", [{rabbit:is_running(), rabbit:is_booting()}]), ok.',
  cli: ['rabbitmqctl', '-q', 'eval', '{rabbit:is_running(), rabbit:is_booting()}.'],
};

/** The state from what the call printed: `{true,false}`, `{false,true}`, `{false,false}`; undefined otherwise. Pure. */
export function parseRabbitState(printed: string): RabbitState | undefined {
  const m = /\{\s*(true|false)\s*,\s*(true|false)\s*\}/.exec(printed);
  if (!m) return undefined;
  if (m[1] === 'true') return 'running';
  return m[2] === 'true' ? 'booting' : 'stopped';
}

/** The node's state; undefined when its VM did not answer within 10 s (paused, down, its container stopped). */
export async function rabbitState(docker: Docker, node: NodeSpec): Promise<RabbitState | undefined> {
  try {
    return parseRabbitState(await callNode(docker, node.container, node.nodeName, STATE_CALL, 10_000));
  } catch {
    return undefined;
  }
}

/**
 * A running node's own view of the cluster, asked inside its container where its management API
 * does not answer: the nodes its Mnesia runs with, and the nodes its node monitor lists as
 * partitioned from it. Seen on 3.10.8 under autoheal after a partition of a mirrored queue's
 * master: every node running, each listing the same partition, and /api/nodes hanging on all
 * three, so that only the nodes themselves could say which side to restart.
 */
interface OwnClusterView {
  /** Erlang node names (rabbit@rabbit1). */
  running: string[];
  partitions: string[];
}

// ~w, not ~p: one line whatever the number of nodes.
const CLUSTER_CALL: NodeCall = {
  expr: 'io:format("~w~n", [{rabbit_mnesia:cluster_nodes(running), rabbit_node_monitor:partitions()}]), ok.',
  cli: ['rabbitmqctl', '-q', 'eval', '{rabbit_mnesia:cluster_nodes(running), rabbit_node_monitor:partitions()}.'],
};

/** The view from what the call printed, `{[rabbit@rabbit1,rabbit@rabbit2],[rabbit@rabbit3]}` (atoms quoted or not); undefined otherwise. Pure. */
export function parseOwnClusterView(printed: string): OwnClusterView | undefined {
  const m = /\{\s*\[([^\]]*)\]\s*,\s*\[([^\]]*)\]\s*\}/.exec(printed);
  if (!m) return undefined;
  const atoms = (list: string): string[] =>
    list
      .split(',')
      .map((a) => a.trim().replace(/^'(.*)'$/, '$1'))
      .filter((a) => a !== '');
  return { running: atoms(m[1]!), partitions: atoms(m[2]!) };
}

/** The node's own view; undefined when its VM did not answer within 10 s or the call failed (its node monitor not running). */
export async function ownClusterView(docker: Docker, node: NodeSpec): Promise<OwnClusterView | undefined> {
  try {
    return parseOwnClusterView(await callNode(docker, node.container, node.nodeName, CLUSTER_CALL, 10_000));
  } catch {
    return undefined;
  }
}

/**
 * Where autoheal stands on a node of RabbitMQ before 4.3, by its own word: the autoheal field of
 * its node monitor's state (rabbit_autoheal: not_healing, or {winner_waiting, ...},
 * {leader_waiting, ...}, restarting while a round runs). A round stops the losing side, waits for
 * every loser to stop, starts them again, and another round can follow at once: a node restarted
 * in the middle of one makes the next. Seen on 3.10.8: a round decided while every node already
 * ran and listed no partition restarted one of them 60 s later.
 */
type AutohealState = 'idle' | 'healing';

// The node monitor's state is #state{monitors, partitions, subscribers, down_ping_timer,
// keepalive_timer, autoheal, guid, node_guids} before 4.3; any other shape prints unknown.
const AUTOHEAL_EXPR =
  'A = case catch sys:get_state(rabbit_node_monitor, 5000) of {state, _, _, _, _, _, A0, _, _} -> A0; _ -> unknown end, io:format("~w~n", [A])';
const AUTOHEAL_CALL: NodeCall = { expr: `${AUTOHEAL_EXPR}, ok.`, cli: ['rabbitmqctl', '-q', 'eval', `${AUTOHEAL_EXPR}.`] };

/** The state from what the call printed: `not_healing` is idle, `unknown` or nothing undefined, anything else a round under way. Pure. */
export function parseAutohealState(printed: string): AutohealState | undefined {
  const first = printed.trim().split('\n')[0]?.trim() ?? '';
  if (first === '' || first === 'unknown' || first.startsWith('Error') || first.startsWith('{badrpc')) return undefined;
  return first === 'not_healing' ? 'idle' : 'healing';
}

/** The node's autoheal state; undefined when it did not answer within 10 s or could not tell. */
export async function autohealState(docker: Docker, node: NodeSpec): Promise<AutohealState | undefined> {
  try {
    return parseAutohealState(await callNode(docker, node.container, node.nodeName, AUTOHEAL_CALL, 10_000));
  } catch {
    return undefined;
  }
}
