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
 * Ra's directory had not saved it yet (a dets file saved 500 ms after a write);
 * bench/stream-coordinator-kill.mjs measures the window. The node then never starts its member
 * again, while the coordinator still lists it:
 * - every stream whose writer runs on that node shows no member online (the management API asks
 *   the writer's node's own member);
 * - a second such node takes the coordinator's majority, and no stream can then be declared or
 *   elect a writer.
 * A node the coordinator removed while the node's member could not hear of it (a node forgotten
 * while the coordinator was busy) keeps that member running with its old membership, outside the
 * coordinator: the leader cannot add the node again (`already_started`, every tick). Beside a
 * stranded member it leaves the coordinator without a majority.
 * The coordinator's leader adds a node it does not list within its next ticks, so deleting or
 * removing the broken member is the repair (repairStreamCoordinator). `cluster up` does it;
 * `cluster status` shows the state.
 */

/** One node's own word on its coordinator member, asked in its container. */
export interface CoordinatorView {
  /** Its member runs. */
  running: boolean;
  /** Ra's directory on the node has the member's name (undefined: could not tell, RabbitMQ 3.x). */
  registered: boolean | undefined;
  /** Its Raft state (leader, follower, candidate, pre_vote...), undefined when it does not run or could not tell. */
  raftState: string | undefined;
  /** Its Raft term (-1 when unknown). */
  term: number;
  /** The last index of its log (-1 when unknown): with the term, which member knows the latest membership. */
  lastIndex: number;
  /** The coordinator's members as that member knows them (undefined: it does not run). */
  members: string[] | undefined;
}

// ~w: one line. A broker without a coordinator yet (no stream ever declared) prints {false,false,none,-1,-1,none}.
const VIEW_CALL_EXPR = [
  'Id = {rabbit_stream_coordinator, node()},',
  'R = is_pid(whereis(rabbit_stream_coordinator)),',
  'G = try lists:keymember(rabbit_stream_coordinator, 1, ra_directory:list_registered(coordination)) catch _:_ -> unknown end,',
  '{S, T, I} = case R of true -> try ra:key_metrics(Id) of #{state := S0, term := T0, last_index := I0} -> {S0, T0, I0}; _ -> {unknown, -1, -1} catch _:_ -> {unknown, -1, -1} end; false -> {none, -1, -1} end,',
  'M = case R of true -> try ra:members({local, Id}) of {ok, Ms, _} -> [N || {_, N} <- Ms]; _ -> none catch _:_ -> none end; false -> none end,',
  'io:format("~w~n", [{R, G, S, T, I, M}])',
].join(' ');

const VIEW_CALL: NodeCall = { expr: `${VIEW_CALL_EXPR}, ok.`, cli: ['rabbitmqctl', '-q', 'eval', `${VIEW_CALL_EXPR}.`] };

/** The view from what the call printed, `{true,true,leader,11,42,[rabbit@rabbit1,'rabbit@rabbit2']}`; undefined otherwise. Pure. */
export function parseCoordinatorView(printed: string): CoordinatorView | undefined {
  const m = /\{\s*(true|false)\s*,\s*(true|false|unknown)\s*,\s*([a-z_]+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(none|\[[^\]]*\])\s*\}/.exec(printed);
  if (!m) return undefined;
  const members =
    m[6] === 'none'
      ? undefined
      : m[6]!
          .slice(1, -1)
          .split(',')
          .map((a) => a.trim().replace(/^'(.*)'$/, '$1'))
          .filter((a) => a !== '');
  const raftState = m[3] === 'none' || m[3] === 'unknown' ? undefined : m[3];
  return {
    running: m[1] === 'true',
    registered: m[2] === 'unknown' ? undefined : m[2] === 'true',
    raftState,
    term: Number(m[4]),
    lastIndex: Number(m[5]),
    members,
  };
}

export interface CoordinatorState {
  /** The node whose member is the coordinator's leader (undefined: none, or it could not tell). */
  leader: string | undefined;
  /** The coordinator's members: as its leader lists them, else as the member with the latest log does (empty: it was never started). */
  members: string[];
  /** Members whose node answered, whose member does not run, and whose name Ra's directory lost. */
  stranded: string[];
  /**
   * Nodes whose member runs although the leader does not list it: a node forgotten while the
   * coordinator could not record it keeps its old member, which the leader cannot add again
   * (`already_started`, every tick) and which stands for elections nobody answers (pre_vote).
   */
  outside: string[];
  /** Whether the members that run are a majority of all members. */
  majority: boolean;
}

/**
 * From each node's view (undefined: the node did not answer) to the coordinator's state. A member
 * whose node did not answer, or whose name is still registered (booting, or stopped cleanly), is
 * not stranded: its node starts it again. Pure.
 */
export function coordinatorState(views: ReadonlyMap<string, CoordinatorView | undefined>): CoordinatorState {
  const live = [...views].filter((e): e is [string, CoordinatorView & { members: string[] }] => e[1]?.running === true && e[1].members !== undefined);
  const leaders = live.filter(([, v]) => v.raftState === 'leader');
  const leader = leaders.length === 1 ? leaders[0]![0] : undefined;
  // The latest membership: the leader's; without one, that of the member with the latest log (a
  // membership change is an entry of the log), which an election would also pick.
  const latest = leader ?? [...live].sort(([, a], [, b]) => b.term - a.term || b.lastIndex - a.lastIndex)[0]?.[0];
  const members = latest === undefined ? [] : [...views.get(latest)!.members!].sort();
  const outside = live.filter(([n]) => !members.includes(n)).map(([n]) => n);
  const stranded = members.filter((n) => {
    const v = views.get(n);
    return v !== undefined && !v.running && v.registered === false;
  });
  const running = members.filter((n) => views.get(n)?.running === true);
  return { leader, members, stranded, outside, majority: running.length * 2 > members.length };
}

/** Whether there is anything to repair: a member stranded or outside, or members without a majority. Pure. */
export const needsRepair = (s: CoordinatorState): boolean => s.stranded.length > 0 || s.outside.length > 0 || (s.members.length > 0 && !s.majority);

/** Whole: one leader, every node of the cluster a member, every member running. Pure. */
export function coordinatorWhole(views: ReadonlyMap<string, CoordinatorView | undefined>, nodes: readonly string[]): boolean {
  const s = coordinatorState(views);
  return s.leader !== undefined && s.outside.length === 0 && nodes.every((n) => s.members.includes(n) && views.get(n)?.running === true);
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

/**
 * How long the coordinator's leader may take to add the members back: it adds one node a tick,
 * its ticks are 30 s apart (stream_tick_interval), and a leader can be moved once on the way
 * (NUDGE_AFTER_MS).
 */
const READD_TIMEOUT_MS = 180_000;

/**
 * When a node that runs in the cluster is still not a member: two ticks and some. The leader adds
 * a node from a process it starts at a tick, and starts no other while one runs; a leader whose
 * adding process hangs (seen under load: a node left out for 150 s) adds nobody again. A new
 * leader starts afresh.
 */
const NUDGE_AFTER_MS = 70_000;

/** What to do for a coordinator that has not added every node by NUDGE_AFTER_MS. */
export interface CoordinatorNudge {
  /** Nodes whose member runs outside the coordinator: deleted on their node first. */
  deleteOutside: string[];
  /** The current leader, and the running member its leadership moves to (undefined: no other member runs). */
  leader: string;
  moveTo: string | undefined;
}

/**
 * Whether the coordinator needs a nudge, from each node's view: it has a leader, and some node of
 * the cluster is not a running member. Undefined when whole, or with no leader (an election is
 * under way). Pure.
 */
export function coordinatorNudge(views: ReadonlyMap<string, CoordinatorView | undefined>, nodes: readonly string[]): CoordinatorNudge | undefined {
  if (coordinatorWhole(views, nodes)) return undefined;
  const s = coordinatorState(views);
  if (s.leader === undefined) return undefined;
  const moveTo = s.members.filter((n) => n !== s.leader && views.get(n)?.running === true).sort()[0];
  return { deleteOutside: s.outside, leader: s.leader, moveTo };
}

/** One expression on one node, by erl_call; what it printed. */
async function evalOn(ctx: ClusterContext, docker: Docker, nodeName: string, expr: string): Promise<string> {
  const node = ctx.config.nodes.find((n) => n.nodeName === nodeName)!;
  return (await callNode(docker, node.container, node.nodeName, { expr: `${expr}, ok.`, cli: ['rabbitmqctl', '-q', 'eval', `${expr}.`] }, 30_000)).trim();
}

const ID = '{rabbit_stream_coordinator, node()}';

/**
 * The stream coordinator made whole again, by RabbitMQ's own operations.
 * - A member outside the coordinator (see CoordinatorState.outside) is deleted on its node
 *   (ra:force_delete_server); the leader then adds the node afresh.
 * - A stranded member is removed through the leader, which then adds the node afresh.
 * - Without a majority, the running member with the longest log is forced down to itself
 *   (Ra's force_shrink_members_to_current_member, what `rabbitmq-queues force_shrink` does for
 *   a quorum queue), becomes leader, and adds the others afresh. What it had not copied is lost.
 * Then it waits until every node is a running member: also when nothing needed repair but a node
 * is not a member yet (a node joined again, which the leader adds at a coming tick). Returns one
 * line per repair (empty: none). `cluster up` and the membership fault's restore run it.
 */
export async function repairStreamCoordinator(ctx: ClusterContext, docker: Docker): Promise<string[]> {
  const nodes = ctx.config.nodes.map((n) => n.nodeName);
  const first = await coordinatorViews(ctx, docker);
  const state = coordinatorState(first);
  // Never started (no stream declared yet), or whole: nothing to do or wait for.
  if (state.members.length === 0 || coordinatorWhole(first, nodes)) return [];
  const done: string[] = [];
  const say = (line: string): void => {
    ctx.progress.info(line);
    done.push(line);
  };
  for (const node of state.outside) {
    say(
      `the stream coordinator's member on ${shortNodeName(node)} ran outside the coordinator (its node was forgotten while the coordinator could not record it): deleted, for the coordinator to add it afresh`,
    );
    await evalOn(ctx, docker, node, `io:format("~w~n", [ra:force_delete_server(coordination, ${ID})])`);
  }
  if (state.members.length > 0 && !state.majority) {
    const views = await coordinatorViews(ctx, docker);
    const rank = (n: string): [number, number] => [views.get(n)?.term ?? -1, views.get(n)?.lastIndex ?? -1];
    const survivor = state.members
      .filter((n) => views.get(n)?.running === true && !state.outside.includes(n))
      .sort((a, b) => rank(b)[0] - rank(a)[0] || rank(b)[1] - rank(a)[1])[0];
    const lost = state.members.filter((n) => n !== survivor).map(shortNodeName);
    if (survivor === undefined)
      throw new EnvironmentError(
        `the stream coordinator has no member running (members ${state.members.map(shortNodeName).join(', ')}): no stream can be declared`,
        {
          hint: "'rmq-bench cluster down --volumes', then 'rmq-bench cluster up' makes the cluster afresh (every message on it is lost)",
        },
      );
    say(
      `the stream coordinator has no majority (${lost.join(', ')} not running as members): forced down to its member on ${shortNodeName(survivor)}, which adds the others afresh; what it had not copied is lost`,
    );
    const printed = await evalOn(ctx, docker, survivor, `io:format("~w~n", [ra_server_proc:force_shrink_members_to_current_member(${ID})])`);
    if (!printed.startsWith('ok'))
      throw new EnvironmentError(`the stream coordinator's member on ${shortNodeName(survivor)} was not forced down to itself: ${printed}`);
  } else if (state.stranded.length > 0) {
    // A majority runs: a leader is elected within seconds if there is none right now (a restart).
    const leader = (await retryUntil(
      async () => coordinatorState(await coordinatorViews(ctx, docker)).leader,
      (l) => l !== undefined,
      { timeoutMs: 60_000, intervalMs: 2_000, signal: ctx.signal, describe: () => 'the stream coordinator elected no leader' },
    ))!;
    for (const node of state.stranded) {
      say(`the stream coordinator's member on ${shortNodeName(node)} never started again after a kill: removed, for the coordinator to add it afresh`);
      const printed = await evalOn(
        ctx,
        docker,
        leader,
        `io:format("~w~n", [ra:remove_member({rabbit_stream_coordinator, '${leader}'}, {rabbit_stream_coordinator, '${node}'})])`,
      );
      if (!printed.startsWith('{ok,')) throw new EnvironmentError(`the stream coordinator did not remove its member on ${shortNodeName(node)}: ${printed}`);
    }
  }
  const secs = stopwatch();
  const waitStarted = performance.now();
  let nudged = false;
  await retryUntil(
    async () => {
      const views = await coordinatorViews(ctx, docker);
      if (nudged || performance.now() - waitStarted < NUDGE_AFTER_MS) return views;
      const nudge = coordinatorNudge(views, nodes);
      if (nudge === undefined) return views;
      nudged = true;
      await nudgeCoordinator(ctx, docker, nudge, coordinatorState(views).members, nodes, say);
      return coordinatorViews(ctx, docker);
    },
    (views) => {
      const s = coordinatorState(views);
      ctx.progress.update(
        `waiting for the stream coordinator to have every node as a running member (${s.members.map(shortNodeName).join(', ') || 'none'} now) ${secs()}`,
      );
      return coordinatorWhole(views, nodes);
    },
    {
      timeoutMs: READD_TIMEOUT_MS,
      intervalMs: 2_000,
      signal: ctx.signal,
      describe: (last) => {
        if (!last.value) return `the stream coordinator was not whole again (${errorMessage(last.error)})`;
        const s = coordinatorState(last.value);
        return `the stream coordinator was not whole again: leader ${s.leader ? shortNodeName(s.leader) : 'none'}, members ${s.members.map(shortNodeName).join(', ') || 'none'}`;
      },
    },
  );
  return done;
}

/**
 * A coordinator that left a node out past NUDGE_AFTER_MS: a member running outside it is deleted
 * on its node, and the leadership moves to another running member
 * (rabbit_stream_coordinator:transfer_leadership, what a node's drain runs), whose first tick adds
 * the node.
 */
async function nudgeCoordinator(
  ctx: ClusterContext,
  docker: Docker,
  nudge: CoordinatorNudge,
  members: readonly string[],
  nodes: readonly string[],
  say: (line: string) => void,
): Promise<void> {
  const missing = nodes.filter((n) => !members.includes(n)).map(shortNodeName);
  for (const node of nudge.deleteOutside) {
    say(`the stream coordinator's member on ${shortNodeName(node)} runs outside the coordinator: deleted, for the coordinator to add it afresh`);
    await evalOn(ctx, docker, node, `io:format("~w~n", [ra:force_delete_server(coordination, ${ID})])`);
  }
  if (nudge.moveTo === undefined) return;
  say(
    `the stream coordinator's leader on ${shortNodeName(nudge.leader)} had not added ${missing.join(', ') || 'every member'} after ${NUDGE_AFTER_MS / 1000} s: leadership moved to ${shortNodeName(nudge.moveTo)}, which adds it at its first tick`,
  );
  const printed = await evalOn(ctx, docker, nudge.leader, `io:format("~w~n", [rabbit_stream_coordinator:transfer_leadership(['${nudge.moveTo}'])])`);
  if (!printed.startsWith('{ok,')) ctx.log(`the stream coordinator's leadership did not move to ${shortNodeName(nudge.moveTo)}: ${printed}`);
}
