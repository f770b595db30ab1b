import type { NodeSpec } from '../../config.js';
import { EnvironmentError, errorMessage } from '../../errors.js';
import { retryUntil } from '../../util/retry.js';
import { callNode, type NodeCall } from '../broker/erl-call.js';
import { shortNodeName } from '../broker/queue-leadership.js';
import type { ClusterContext } from '../cluster-ctx.js';
import type { Docker } from '../docker/engine.js';
import { stopwatch } from './wait.js';

/**
 * RabbitMQ's stream coordinator: the Raft cluster (a Ra server named rabbit_stream_coordinator on
 * each node) that creates every stream, elects its writer and lists its replicas. A node keeps its
 * member under a name in Ra's directory, which it reads at boot to start the member again.
 *
 * A node killed within about half a second of its member starting (the first stream declared on
 * the cluster, or the member added back after the node rejoined) comes back without that name:
 * Ra's directory had not saved it yet (a dets file saved 500 ms after a write). Seen here in 4 of 4
 * kills 0 to 0.6 s after the first stream's declaration, on 4.3.6; none 1 s after. The node then
 * never starts its member again, while the coordinator still lists it:
 * - every stream whose writer runs on that node shows no member online (the management API asks
 *   the writer's node's own member);
 * - a second such node takes the coordinator's majority, and no stream can then be declared or
 *   elect a writer.
 * The coordinator's leader adds a node it does not list within its next ticks, so removing the
 * stranded member is the repair. `cluster up` does it; `cluster status` shows the state.
 */

/** One node's own word on its coordinator member, asked in its container. */
export interface CoordinatorView {
  /** Its member runs. */
  running: boolean;
  /** Ra's directory on the node has the member's name (undefined: could not tell, RabbitMQ 3.x). */
  registered: boolean | undefined;
  /** The coordinator's members as that member knows them (undefined: it does not run). */
  members: string[] | undefined;
}

// ~w: one line. A broker without a coordinator yet (no stream ever declared) prints {false,false,none}.
const VIEW_CALL_EXPR = [
  'Id = {rabbit_stream_coordinator, node()},',
  'R = is_pid(whereis(rabbit_stream_coordinator)),',
  'G = try lists:keymember(rabbit_stream_coordinator, 1, ra_directory:list_registered(coordination)) catch _:_ -> unknown end,',
  'M = case R of true -> try ra:members({local, Id}) of {ok, Ms, _} -> [N || {_, N} <- Ms]; _ -> none catch _:_ -> none end; false -> none end,',
  'io:format("~w~n", [{R, G, M}])',
].join(' ');

const VIEW_CALL: NodeCall = { expr: `${VIEW_CALL_EXPR}, ok.`, cli: ['rabbitmqctl', '-q', 'eval', `${VIEW_CALL_EXPR}.`] };

/** The view from what the call printed, `{true,true,[rabbit@rabbit1,'rabbit@rabbit2']}`; undefined otherwise. Pure. */
export function parseCoordinatorView(printed: string): CoordinatorView | undefined {
  const m = /\{\s*(true|false)\s*,\s*(true|false|unknown)\s*,\s*(none|\[[^\]]*\])\s*\}/.exec(printed);
  if (!m) return undefined;
  const members =
    m[3] === 'none'
      ? undefined
      : m[3]!
          .slice(1, -1)
          .split(',')
          .map((a) => a.trim().replace(/^'(.*)'$/, '$1'))
          .filter((a) => a !== '');
  return { running: m[1] === 'true', registered: m[2] === 'unknown' ? undefined : m[2] === 'true', members };
}

export interface CoordinatorState {
  /** The coordinator's members, as its running members list them (empty: it was never started). */
  members: string[];
  /** Members whose node answered, whose member does not run, and whose name Ra's directory lost. */
  stranded: string[];
  /** Whether the members that run are a majority of all members. */
  majority: boolean;
}

/**
 * From each node's view (undefined: the node did not answer) to the coordinator's state. A member
 * whose node did not answer, or whose name is still registered (booting, or stopped cleanly), is
 * not stranded: its node starts it again. Pure.
 */
export function coordinatorState(views: ReadonlyMap<string, CoordinatorView | undefined>): CoordinatorState {
  const members = [...new Set([...views.values()].flatMap((v) => (v?.running && v.members ? v.members : [])))].sort();
  const stranded = members.filter((n) => {
    const v = views.get(n);
    return v !== undefined && !v.running && v.registered === false;
  });
  const running = members.filter((n) => views.get(n)?.running === true);
  return { members, stranded, majority: running.length * 2 > members.length };
}

async function viewOf(docker: Docker, node: NodeSpec): Promise<CoordinatorView | undefined> {
  try {
    return parseCoordinatorView(await callNode(docker, node.container, node.nodeName, VIEW_CALL, 15_000));
  } catch {
    return undefined;
  }
}

/** Every node's view, asked at once. */
export async function coordinatorViews(ctx: ClusterContext, docker: Docker): Promise<Map<string, CoordinatorView | undefined>> {
  const views = await Promise.all(ctx.config.nodes.map((n) => viewOf(docker, n)));
  return new Map(ctx.config.nodes.map((n, i) => [n.nodeName, views[i]]));
}

/** How long the coordinator's leader may take to add a removed member back (it does so on its ticks). */
const READD_TIMEOUT_MS = 90_000;

/**
 * For `cluster up`: a stranded member (see above) is removed through the coordinator's leader, and
 * the leader adds the node back as a fresh member that catches up; up waits until every member
 * runs. Without a majority nothing can be removed: EnvironmentError, naming the nodes. Returns the
 * nodes repaired.
 */
export async function repairStreamCoordinator(ctx: ClusterContext, docker: Docker): Promise<string[]> {
  const state = coordinatorState(await coordinatorViews(ctx, docker));
  if (state.stranded.length === 0) return [];
  const names = state.stranded.map(shortNodeName).join(', ');
  if (!state.majority)
    throw new EnvironmentError(
      `the stream coordinator has lost its majority: its members on ${names} never started again after a kill (RabbitMQ lost their names), so no stream can be declared or elect a writer`,
      { hint: "only a cluster made afresh ends it: 'rmq-bench cluster down --volumes', then 'rmq-bench cluster up' (every message on the cluster is lost)" },
    );
  const live = ctx.config.nodes.find((n) => state.members.includes(n.nodeName) && !state.stranded.includes(n.nodeName))!;
  for (const node of state.stranded) {
    ctx.progress.info(
      `the stream coordinator's member on ${shortNodeName(node)} never started again after a kill: removing it, for the coordinator to add it back`,
    );
    const expr = `{ok, _, L} = ra:members({local, {rabbit_stream_coordinator, node()}}), io:format("~w~n", [ra:remove_member(L, {rabbit_stream_coordinator, '${node}'})])`;
    const printed = await callNode(docker, live.container, live.nodeName, { expr: `${expr}, ok.`, cli: ['rabbitmqctl', '-q', 'eval', `${expr}.`] }, 30_000);
    if (!printed.trim().startsWith('{ok,'))
      throw new EnvironmentError(`the stream coordinator did not remove its member on ${shortNodeName(node)}: ${printed.trim()}`);
  }
  const secs = stopwatch();
  await retryUntil(
    () => coordinatorViews(ctx, docker),
    (views) => {
      ctx.progress.update(`waiting for the stream coordinator to add ${names} back ${secs()}`);
      return state.stranded.every((n) => views.get(n)?.running === true);
    },
    {
      timeoutMs: READD_TIMEOUT_MS,
      intervalMs: 2_000,
      signal: ctx.signal,
      describe: (last) =>
        `the stream coordinator did not add ${names} back (${last.value ? [...last.value].map(([n, v]) => `${shortNodeName(n)} ${v?.running ? 'runs' : 'not running'}`).join(', ') : errorMessage(last.error)})`,
    },
  );
  return state.stranded.map(shortNodeName);
}
